"""The runtime status fold, event by event: bounded pending calls, flat cost per event.

The fold over a whole harness run is in tests/unit/loop/test_harness_status.py."""

from __future__ import annotations

import dataclasses
import sys

from logician_kernel.events import (
    MAX_PENDING_SHOWN,
    BranchSummaryFinished,
    BranchSummaryStarted,
    CompactionFinished,
    CompactionStarted,
    ModelResponded,
    ModelStreamed,
    RunStarted,
    RuntimeState,
    ToolFinished,
    ToolStarted,
    fold,
)
from logician_kernel.types import (
    AssistantMessage,
    ReasoningDelta,
    RetryAttempt,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallStarted,
    Usage,
    UsageReported,
)


def test_pending_calls_stay_bounded():
    state = RuntimeState()
    for i in range(100):
        state = fold(state, ModelStreamed(event=ToolCallStarted(id=f"c{i}", name="read")))
    assert len(state.pending_tool_calls) == MAX_PENDING_SHOWN and state.pending_count == 100

    calls = [ToolCall(id=f"c{i}", name="read") for i in range(100)]
    state = fold(state, ModelResponded(message=AssistantMessage(content=calls), usage=Usage()))
    assert len(state.pending_tool_calls) == MAX_PENDING_SHOWN and state.pending_count == 100
    for c in calls:
        state = fold(state, ToolStarted(call=c, description="read"))
    assert state.pending_count == 100
    for c in calls:
        state = fold(
            state, ToolFinished(call_id=c.id, name="read", result_display="", is_error=False)
        )
    assert state.pending_tool_calls == () and state.pending_count == 0
    assert state.tool_calls == 100


def _size(state: RuntimeState) -> int:
    return sum(sys.getsizeof(getattr(state, f.name)) for f in dataclasses.fields(state))


def test_fold_cost_is_flat_in_the_number_of_events():
    cycle = [
        ModelStreamed(event=TextDelta(text="token ")),
        ModelStreamed(event=ToolCallStarted(id="c", name="read")),
        ModelStreamed(event=ToolCallArgumentsDelta(id="c", delta='{"path": "a"}')),
        ModelStreamed(event=UsageReported(usage=Usage(input_tokens=3))),
        ToolStarted(call=ToolCall(id="c", name="read"), description="read"),
        ModelStreamed(event=RetryAttempt(attempt=1, max_retries=3, delay=0.0, reason="busy")),
        ToolFinished(call_id="c", name="read", result_display="ok", is_error=False),
    ]
    state = RuntimeState()
    for event in cycle * 20:
        state = fold(state, event)
    early = _size(state)
    for event in cycle * 2_000:  # 10,000 events
        state = fold(state, event)

    assert _size(state) == early
    assert state.pending_tool_calls == () and state.tool_calls == 2_020
    # A text delta never accumulates text: the state is unchanged by it.
    assert fold(state, ModelStreamed(event=TextDelta(text="x" * 10_000))) is state


def test_tool_finished_for_an_unknown_call_does_not_go_negative():
    state = fold(
        RuntimeState(), ToolFinished(call_id="x", name="read", result_display="", is_error=True)
    )
    assert state.pending_count == 0


def test_estimated_usage_and_the_context_window_fraction():
    from logician_kernel.events import context_fraction

    state = fold(RuntimeState(), RunStarted(prompt="p", model="m", context_window=4096))
    assert context_fraction(state) == 0.0
    state = fold(state, ModelStreamed(event=ReasoningDelta(text="thinking")))
    assert state.streaming  # reasoning is activity: no silent pause that looks like a hang
    reply = AssistantMessage()
    state = fold(
        state, ModelResponded(message=reply, usage=Usage(input_tokens=1000, output_tokens=24))
    )
    assert context_fraction(state) == 0.25 and not state.usage_estimated
    state = fold(
        state,
        ModelResponded(
            message=reply, usage=Usage(input_tokens=2000, output_tokens=48), usage_estimated=True
        ),
    )
    assert context_fraction(state) == 0.5 and state.usage_estimated
    assert context_fraction(RuntimeState()) is None


def test_a_compaction_inside_a_run_hands_back_to_the_turn():
    state = fold(RuntimeState(), RunStarted(prompt="p"))
    state = fold(state, CompactionStarted(reason="over the threshold"))
    assert state.phase == "compaction" and state.running
    state = fold(state, CompactionFinished(result="summary", before=900, after=300))
    assert state.phase == "turn"


def test_an_on_demand_compaction_and_a_branch_summary_end_idle():
    state = fold(RuntimeState(), CompactionStarted(reason="asked", trigger="on_demand"))
    assert state.phase == "compaction" and state.running
    done = CompactionFinished(result="failed", before=9, after=9, trigger="on_demand")
    assert fold(state, done).phase == "idle"

    state = fold(RuntimeState(), BranchSummaryStarted(branch_id="b1"))
    assert state.phase == "branch_summary" and state.running
    state = fold(state, BranchSummaryFinished(branch_id="b1", result="merged"))
    assert state.phase == "idle" and not state.running
