"""Cancellation (a kernel interrupt): mid-stream and mid-tool, the run stops promptly, closes
what was in flight, reports `cancelled`, and the consuming task still ends cancelled."""

from __future__ import annotations

import asyncio

import pytest

from logician_kernel.loop import drive_run

from .harness_support import (
    HANG,
    FakeTool,
    ScriptedProvider,
    call,
    kind_of,
    make_harness,
    reply,
    tool_reply,
)

PROMPT_SECONDS = 1.0


async def _interrupt_when(harness, trigger: str, sink_events: list):
    """Drive the harness in a task, cancel it when `trigger` is seen; returns elapsed time."""
    loop = asyncio.get_running_loop()
    task: asyncio.Task | None = None
    cancelled_at: list[float] = []

    def sink(event):
        sink_events.append(event)
        if kind_of(event) == trigger and not cancelled_at:
            cancelled_at.append(loop.time())
            # Interrupts arrive from another thread, between events: call_soon is the same.
            loop.call_soon(task.cancel)

    task = asyncio.ensure_future(drive_run(harness.run("Hi", []), sink))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    return loop.time() - cancelled_at[0]


def test_cancel_mid_stream():
    provider = ScriptedProvider([*reply("Hello")[:1], HANG])
    harness, store = make_harness(provider)
    events: list = []

    elapsed = asyncio.run(_interrupt_when(harness, "text_delta", events))

    assert elapsed < PROMPT_SECONDS
    assert [kind_of(e) for e in events][-2:] == ["text_delta", "run_ended"]
    ended = events[-1]
    assert ended.outcome.status == "cancelled" and ended.turns == 1
    assert provider.closed_streams == 1
    assert store.shape() == ["message:user"]


def test_cancel_mid_tool_cancels_it_and_leaves_the_intent_open():
    state = {"cancelled": 0}

    async def forever(arguments):
        try:
            await asyncio.Event().wait()
        finally:
            state["cancelled"] += 1

    provider = ScriptedProvider(tool_reply(call("c1", "bash")), reply("never"))
    harness, store = make_harness(provider, FakeTool("bash", forever, read_only=False))
    events: list = []

    elapsed = asyncio.run(_interrupt_when(harness, "tool_started", events))

    assert elapsed < PROMPT_SECONDS
    assert state["cancelled"] == 1
    assert events[-1].kind == "run_ended" and events[-1].outcome.status == "cancelled"
    assert events[-1].tool_calls == 1
    # The intent stays open, for the tool's declared recovery to decide.
    assert store.shape() == ["message:user", "message:assistant", "intent:c1"]


def test_cancel_mid_batch_cancels_every_concurrent_read():
    started: list[str] = []
    cancelled: list[str] = []
    driver: list[asyncio.Task] = []

    def tool(name):
        async def behaviour(arguments):
            started.append(name)
            if len(started) == 2:  # both reads are running: interrupt now
                driver[0].cancel()
            try:
                await asyncio.Event().wait()
            finally:
                cancelled.append(name)

        return FakeTool(name, behaviour)

    provider = ScriptedProvider(tool_reply(call("a", "ra"), call("b", "rb")), reply("never"))
    harness, store = make_harness(provider, tool("ra"), tool("rb"))
    events: list = []

    async def scenario():
        driver.append(asyncio.ensure_future(drive_run(harness.run("Hi", []), events.append)))
        with pytest.raises(asyncio.CancelledError):
            await driver[0]

    asyncio.run(asyncio.wait_for(scenario(), PROMPT_SECONDS))

    assert sorted(cancelled) == ["ra", "rb"]
    assert events[-1].outcome.status == "cancelled"
    assert store.shape()[2:] == ["intent:a", "intent:b"]


def test_plain_iteration_sees_run_ended_then_the_cancellation():
    provider = ScriptedProvider([*reply("Hello")[:1], HANG])
    harness, _ = make_harness(provider)
    seen: list[str] = []

    async def consume():
        async for event in harness.run("Hi", []):
            seen.append(event.kind)
            if kind_of(event) == "text_delta":
                asyncio.get_running_loop().call_soon(task.cancel)

    async def scenario():
        nonlocal task
        task = asyncio.ensure_future(consume())
        with pytest.raises(asyncio.CancelledError):
            await task

    task = None
    asyncio.run(scenario())

    assert seen[-1] == "run_ended"


def test_closing_the_run_early_closes_the_stream():
    provider = ScriptedProvider([*reply("Hello")[:1], HANG])
    harness, _ = make_harness(provider)

    async def scenario():
        events = harness.run("Hi", [])
        async for event in events:
            if kind_of(event) == "text_delta":
                break
        await events.aclose()

    asyncio.run(scenario())

    assert provider.closed_streams == 1


def test_drive_run_returns_the_outcome():
    provider = ScriptedProvider(reply("Hello"))
    harness, _ = make_harness(provider)
    sunk: list = []

    outcome = asyncio.run(drive_run(harness.run("Hi", []), sunk.append))

    assert outcome.status == "completed" and sunk[-1].kind == "run_ended"
