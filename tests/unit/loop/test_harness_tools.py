"""Tool execution: concurrency of reads, order of writes, bounded results, tool bugs."""

from __future__ import annotations

import asyncio
import logging

from logician_kernel.tools import ToolResult

from .harness_support import (
    FakeTool,
    ScriptedProvider,
    call,
    make_ctx,
    make_harness,
    reply,
    run_all,
    tool_reply,
)

DEADLOCK = 5.0
"""Seconds before a tool waiting for its sibling gives up (only reached on failure)."""


def test_independent_reads_run_concurrently_and_commit_in_call_order():
    a_started, b_started, b_done = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def first(arguments):
        # Needs `second` to run at the same time, and finishes after it.
        a_started.set()
        await asyncio.wait_for(b_started.wait(), DEADLOCK)
        await asyncio.wait_for(b_done.wait(), DEADLOCK)
        return "A"

    async def second(arguments):
        b_started.set()
        await asyncio.wait_for(a_started.wait(), DEADLOCK)
        b_done.set()
        return "B"

    provider = ScriptedProvider(tool_reply(call("a", "first"), call("b", "second")), reply("ok"))
    harness, store = make_harness(provider, FakeTool("first", first), FakeTool("second", second))

    async def scenario():
        # Fresh events bound to this loop.
        return [e async for e in harness.run("Hi", [])]

    events = asyncio.run(scenario())

    assert events[-1].outcome.status == "completed"
    assert store.shape()[2:] == [
        "intent:a",
        "intent:b",
        "result:a",
        "message:tool_result",
        "commit:a",
        "result:b",
        "message:tool_result",
        "commit:b",
        "message:assistant",
    ]
    texts = [m.content[0].text for m in provider.requests[1].messages[-2:]]
    assert texts == ["A", "B"]
    tool_events = [(e.kind, getattr(e, "call_id", None)) for e in events if "tool_" in e.kind]
    assert [k for k, _ in tool_events] == [
        "tool_started",
        "tool_started",
        "tool_finished",
        "tool_finished",
    ]


def test_writes_run_alone_and_in_order():
    trace: list[str] = []

    def tracing(name):
        async def behaviour(arguments):
            trace.append(f"start {name}")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            trace.append(f"end {name}")
            return name

        return behaviour

    tools = [
        FakeTool("r1", tracing("r1")),
        FakeTool("r2", tracing("r2")),
        FakeTool("w1", tracing("w1"), read_only=False, recovery="restorable"),
        FakeTool("w2", tracing("w2"), read_only=False, recovery="external"),
        FakeTool("r3", tracing("r3")),
    ]
    calls = [call(t.name, t.name) for t in tools]
    provider = ScriptedProvider(tool_reply(*calls), reply("ok"))
    harness, store = make_harness(provider, *tools)

    run_all(harness)

    assert trace == [
        "start r1",
        "start r2",
        "end r1",
        "end r2",
        "start w1",
        "end w1",
        "start w2",
        "end w2",
        "start r3",
        "end r3",
    ]
    intents = [entry for entry in store.log if entry[0] == "intent"]
    assert intents == [
        ("intent", "r1", "pure"),
        ("intent", "r2", "pure"),
        ("intent", "w1", "restorable"),
        ("intent", "w2", "external"),
        ("intent", "r3", "pure"),
    ]
    # Every call's result is committed before the next write starts.
    shape = store.shape()
    assert shape.index("commit:r2") < shape.index("intent:w1") < shape.index("commit:w1")
    assert shape.index("commit:w1") < shape.index("intent:w2")
    results = [m for m in store.messages if m.kind == "tool_result"]
    assert [m.tool_call_id for m in results] == ["r1", "r2", "w1", "w2", "r3"]


def test_results_given_to_the_model_are_bounded():
    big = "x" * 5_000 + "THE END"

    async def flood(arguments):
        return ToolResult(content=big, display="5 kB of x")

    provider = ScriptedProvider(tool_reply(call("c1", "flood")), reply("ok"))
    ctx = make_ctx(max_output_bytes=1_000)
    harness, store = make_harness(provider, FakeTool("flood", flood), ctx=ctx)

    events = run_all(harness)

    sent = provider.requests[1].messages[-1].content[0].text
    assert len(sent.encode()) <= 1_000
    assert sent.startswith("xxx") and sent.endswith("THE END") and "truncated" in sent
    recorded = next(entry[2] for entry in store.log if entry[0] == "result")
    assert recorded.content == big
    finished = next(e for e in events if e.kind == "tool_finished")
    assert finished.result_display == "5 kB of x"


def test_a_tool_that_raises_becomes_an_error_result(caplog):
    async def buggy(arguments):
        raise ZeroDivisionError("oops")

    provider = ScriptedProvider(tool_reply(call("c1", "buggy")), reply("ok"))
    harness, store = make_harness(provider, FakeTool("buggy", buggy))

    with caplog.at_level(logging.ERROR, logger="logician_kernel.loop"):
        events = run_all(harness)

    assert events[-1].outcome.status == "completed"
    assert store.shape()[2:6] == ["intent:c1", "result:c1", "message:tool_result", "commit:c1"]
    sent = provider.requests[1].messages[-1]
    assert sent.is_error and "ZeroDivisionError: oops" in sent.content[0].text


def test_empty_output_is_not_sent_empty():
    async def silent(arguments):
        return ""

    provider = ScriptedProvider(tool_reply(call("c1", "silent")), reply("ok"))
    harness, _ = make_harness(provider, FakeTool("silent", silent))

    run_all(harness)

    assert provider.requests[1].messages[-1].content[0].text == "(no output)"


def test_every_call_runs_inside_the_write_audit_it_was_handed():
    """What a tool writes is attributed to its call by the audit in `HarnessDeps`, which the
    composition root hands in (no module-global): the tool runs inside its context."""
    import contextlib

    open_calls: list[str] = []
    seen: list[tuple[str, list[str]]] = []

    class RecordingAudit:
        @contextlib.contextmanager
        def tool_call(self, call_id: str, name: str):
            open_calls.append(call_id)
            try:
                yield
            finally:
                open_calls.remove(call_id)

    async def write(arguments):
        seen.append(("write", list(open_calls)))
        return "written"

    provider = ScriptedProvider(
        tool_reply(call("w1", "write"), call("w2", "write")), reply("Done.")
    )
    harness, _ = make_harness(
        provider, FakeTool("write", write, read_only=False), audit=RecordingAudit()
    )

    assert run_all(harness)[-1].outcome.status == "completed"
    assert seen == [("write", ["w1"]), ("write", ["w2"])] and open_calls == []
