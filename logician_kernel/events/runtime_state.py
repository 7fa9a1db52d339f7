"""Runtime status: the harness event stream folded into what a UI shows right now.

`fold(state, event)` is pure and its cost does not depend on how many events came before:
the state holds counters and a bounded tuple, never a growing list, so a status widget can
fold every text delta of a long session without slowing down. The state is ephemeral by
design: nothing here is persisted, and a fresh `RuntimeState()` rebuilds from the next event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from logician_kernel.types.messages import RetryAttempt, ToolCallStarted
from logician_kernel.types.run import RunOutcome
from logician_kernel.types.status import Phase

from .events import (
    CompactionFinished,
    CompactionStarted,
    HarnessEvent,
    ModelCallStarted,
    ModelResponded,
    ModelStreamed,
    RunEnded,
    RunStarted,
    ToolFinished,
    ToolStarted,
    TurnStarted,
)

MAX_PENDING_SHOWN = 16
"""Pending tool call ids kept in `RuntimeState.pending_tool_calls`; the rest are counted."""


@dataclass(frozen=True, slots=True)
class RuntimeState:
    """What the status UI reads. Counters are per run unless said otherwise."""

    phase: Phase = "idle"
    """What the agent is doing."""
    model: str = ""
    """The model of the current (or last) run."""
    streaming: bool = False
    """Whether a model request is in flight."""
    turn: int = 0
    """The current (or last) turn of the run, from 1."""
    pending_tool_calls: tuple[str, ...] = ()
    """Ids of tool calls asked for but not yet answered, oldest first, at most
    `MAX_PENDING_SHOWN` of them."""
    pending_count: int = 0
    """How many tool calls are pending in all (may exceed the ids shown)."""
    tool_calls: int = 0
    """Tool calls answered in this run."""
    retry_attempt: int = 0
    """The latest retry of the request in flight (0: none)."""
    retries: int = 0
    """Retries in this run, all requests together."""
    last_retry_reason: str = ""
    """Why the latest retry was needed."""
    input_tokens: int = 0
    """Prompt tokens used by this run."""
    output_tokens: int = 0
    """Generated tokens of this run."""
    usage_estimated: bool = False
    """Whether some of this run's token counts are estimates (a server that reports none)."""
    context_window: int = 0
    """The model's context window in tokens (0: unknown)."""
    context_tokens: int = 0
    """Tokens the conversation filled at the last reply: its prompt plus its answer."""
    last_outcome: RunOutcome | None = None
    """How the previous run ended; survives into the next run until it ends."""

    @property
    def running(self) -> bool:
        """Whether the agent is busy."""
        return self.phase != "idle"


def _run_started(state: RuntimeState, event: RunStarted) -> RuntimeState:
    return RuntimeState(
        phase="turn",
        model=event.model,
        context_window=event.context_window,
        context_tokens=state.context_tokens,
        last_outcome=state.last_outcome,
    )


def _turn_started(state: RuntimeState, event: TurnStarted) -> RuntimeState:
    return replace(state, phase="turn", turn=event.turn, pending_tool_calls=(), pending_count=0)


def _model_call_started(state: RuntimeState, event: ModelCallStarted) -> RuntimeState:
    return replace(state, streaming=True, turn=event.turn, retry_attempt=0)


def _model_streamed(state: RuntimeState, event: ModelStreamed) -> RuntimeState:
    return _STREAM_FOLDS[event.event.kind](state, event.event)


def _streaming(state: RuntimeState, event: Any) -> RuntimeState:
    return state if state.streaming else replace(state, streaming=True)


def _tool_call_started(state: RuntimeState, event: ToolCallStarted) -> RuntimeState:
    return _add_pending(replace(state, streaming=True), event.id, maybe_hidden=False)


def _retry(state: RuntimeState, event: RetryAttempt) -> RuntimeState:
    return replace(
        state,
        retry_attempt=event.attempt,
        retries=state.retries + 1,
        last_retry_reason=event.reason,
    )


def _model_responded(state: RuntimeState, event: ModelResponded) -> RuntimeState:
    # The reply is authoritative: it replaces whatever the stream announced.
    calls = event.message.tool_calls
    return replace(
        state,
        streaming=False,
        pending_tool_calls=tuple(call.id for call in calls[:MAX_PENDING_SHOWN]),
        pending_count=len(calls),
        input_tokens=state.input_tokens + event.usage.input_tokens,
        output_tokens=state.output_tokens + event.usage.output_tokens,
        usage_estimated=state.usage_estimated or event.usage_estimated,
        context_tokens=event.usage.input_tokens + event.usage.output_tokens,
    )


def context_fraction(state: RuntimeState) -> float | None:
    """How full the context window was at the last reply, or None when the window is unknown."""
    if state.context_window <= 0:
        return None
    return state.context_tokens / state.context_window


def _tool_started(state: RuntimeState, event: ToolStarted) -> RuntimeState:
    return _add_pending(state, event.call.id, maybe_hidden=True)


def _tool_finished(state: RuntimeState, event: ToolFinished) -> RuntimeState:
    shown = state.pending_tool_calls
    remaining = tuple(call_id for call_id in shown if call_id != event.call_id)
    counted = len(shown) != len(remaining) or state.pending_count > len(shown)
    return replace(
        state,
        pending_tool_calls=remaining,
        pending_count=max(state.pending_count - 1, 0) if counted else state.pending_count,
        tool_calls=state.tool_calls + 1,
    )


def _compaction_started(state: RuntimeState, event: CompactionStarted) -> RuntimeState:
    return replace(state, phase="compaction", streaming=False)


def _compaction_finished(state: RuntimeState, event: CompactionFinished) -> RuntimeState:
    # A compaction inside a run hands back to its turn; one asked for on demand ran alone.
    return replace(state, phase="turn" if event.trigger == "threshold" else "idle")


def _branch_summary_started(state: RuntimeState, event: Any) -> RuntimeState:
    return replace(state, phase="branch_summary", streaming=False)


def _back_to_idle(state: RuntimeState, event: Any) -> RuntimeState:
    return replace(state, phase="idle")


def _run_ended(state: RuntimeState, event: RunEnded) -> RuntimeState:
    return replace(
        state,
        phase="idle",
        streaming=False,
        pending_tool_calls=(),
        pending_count=0,
        retry_attempt=0,
        input_tokens=event.usage.input_tokens,
        output_tokens=event.usage.output_tokens,
        usage_estimated=state.usage_estimated or event.usage_estimated,
        last_outcome=event.outcome,
    )


def _unchanged(state: RuntimeState, event: Any) -> RuntimeState:
    return state


def _add_pending(state: RuntimeState, call_id: str, *, maybe_hidden: bool) -> RuntimeState:
    shown = state.pending_tool_calls
    # Once the reply is in, an id not shown while some are hidden is one of the hidden ones.
    if call_id in shown or (maybe_hidden and state.pending_count > len(shown)):
        return state
    if len(shown) < MAX_PENDING_SHOWN:
        shown = (*shown, call_id)
    return replace(state, pending_tool_calls=shown, pending_count=state.pending_count + 1)


_FOLDS: dict[str, Callable[[RuntimeState, Any], RuntimeState]] = {
    "run_started": _run_started,
    "turn_started": _turn_started,
    "model_call_started": _model_call_started,
    "model_streamed": _model_streamed,
    "model_responded": _model_responded,
    "tool_started": _tool_started,
    "tool_finished": _tool_finished,
    "turn_ended": _unchanged,
    "compaction_started": _compaction_started,
    "compaction_finished": _compaction_finished,
    "branch_summary_started": _branch_summary_started,
    "branch_summary_finished": _back_to_idle,
    "hook_reported": _unchanged,
    "run_ended": _run_ended,
}


_STREAM_FOLDS: dict[str, Callable[[RuntimeState, Any], RuntimeState]] = {
    "text_delta": _streaming,
    "reasoning_delta": _streaming,
    "tool_call_started": _tool_call_started,
    "tool_call_arguments_delta": _streaming,
    "tool_call_finished": _streaming,
    "usage": _unchanged,
    "retry": _retry,
}
"""How each provider stream event inside a `ModelStreamed` changes the state."""


def fold(state: RuntimeState, event: HarnessEvent) -> RuntimeState:
    """The state after `event`. Pure; O(1) in the number of events folded before."""
    return _FOLDS[event.kind](state, event)
