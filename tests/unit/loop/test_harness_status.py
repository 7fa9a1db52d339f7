"""Runtime status folded from a real harness run: phase, streaming, pending tool calls,
retries, usage and the last outcome."""

from __future__ import annotations

import asyncio

from logician_kernel.events import RuntimeState, fold
from logician_kernel.loop import AgentHarness, HarnessDeps
from logician_kernel.types import RetryAttempt

from .harness_support import (
    FakeTool,
    MemoryStore,
    ScriptedProvider,
    call,
    kind_of,
    make_ctx,
    reply,
    tool_reply,
)


def _run_states(harness: AgentHarness) -> list[tuple[str, RuntimeState]]:
    async def scenario():
        state = RuntimeState()
        states = []
        async for event in harness.run("Hi", []):
            state = fold(state, event)
            states.append((kind_of(event), state))
        return states

    return asyncio.run(scenario())


def test_fold_over_a_full_run():
    retry = RetryAttempt(attempt=1, max_retries=3, delay=0.0, reason="HTTP 429 rate limited")
    provider = ScriptedProvider(
        [retry, *tool_reply(call("c1", "read"), call("c2", "read"), text="Looking.")],
        reply("Done."),
    )
    tools = {"read": FakeTool("read")}
    harness = AgentHarness(HarnessDeps(provider, tools, make_ctx(), MemoryStore()))

    states = _run_states(harness)
    by_kind: dict[str, list[RuntimeState]] = {}
    for kind, state in states:
        by_kind.setdefault(kind, []).append(state)

    assert by_kind["run_started"][0].phase == "turn"
    assert by_kind["run_started"][0].model == "scripted-model"
    assert all(s.running for _, s in states[:-1])
    assert by_kind["model_call_started"][0].streaming
    retried = by_kind["retry"][0]
    assert (retried.retry_attempt, retried.retries) == (1, 1)
    assert retried.last_retry_reason == "HTTP 429 rate limited"
    assert by_kind["text_delta"][0].streaming
    streamed = by_kind["tool_call_started"][-1]
    assert streamed.pending_tool_calls == ("c1", "c2") and streamed.pending_count == 2
    responded = by_kind["model_responded"][0]
    assert not responded.streaming and responded.pending_count == 2
    assert (responded.input_tokens, responded.output_tokens) == (20, 5)
    first_done, second_done = by_kind["tool_finished"]
    assert first_done.pending_tool_calls == ("c2",) and first_done.pending_count == 1
    assert second_done.pending_tool_calls == () and second_done.tool_calls == 2
    assert by_kind["turn_started"][1].turn == 2
    assert by_kind["model_call_started"][1].retry_attempt == 0

    kind, final = states[-1]
    assert kind == "run_ended" and final.phase == "idle" and not final.running
    assert not final.streaming and final.pending_count == 0
    assert final.last_outcome is not None and final.last_outcome.status == "completed"
    assert (final.input_tokens, final.output_tokens, final.retries) == (30, 8, 1)


def test_last_outcome_survives_into_the_next_run():
    provider = ScriptedProvider(reply("one"), reply("two"))
    harness = AgentHarness(HarnessDeps(provider, {}, make_ctx(), MemoryStore()))

    async def scenario():
        state = RuntimeState()
        async for event in harness.run("first", []):
            state = fold(state, event)
        outcome = state.last_outcome
        async for event in harness.run("second", []):
            state = fold(state, event)
            if event.kind == "run_started":
                assert state.last_outcome == outcome and state.phase == "turn"
                assert state.input_tokens == 0
        return state

    assert asyncio.run(scenario()).phase == "idle"
