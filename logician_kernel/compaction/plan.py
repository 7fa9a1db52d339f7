"""When to compact, and where to cut: pure functions over the conversation projection.

The projection passed in is the conversation without the per-request system prompt (the
harness prepends that to every request), so a cut never drops it.
"""

from __future__ import annotations

from collections.abc import Sequence

from logician_kernel.types.messages import (
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
)


def should_compact(total_tokens: int, context_window: int, threshold_fraction: float) -> bool:
    """Whether `total_tokens` has reached `threshold_fraction` of `context_window`."""
    if context_window <= 0:
        raise ValueError(f"context_window must be positive, got {context_window}")
    if not 0 < threshold_fraction < 1:
        raise ValueError(f"threshold_fraction must be in (0, 1), got {threshold_fraction}")
    return total_tokens >= threshold_fraction * context_window


def _turn_start(messages: Sequence[Message], index: int) -> int:
    """The index of the `UserMessage` that starts the turn containing `index` (0 if none)."""
    for i in range(min(index, len(messages) - 1), -1, -1):
        if isinstance(messages[i], UserMessage):
            return i
    return 0


def _crossing_call_index(messages: Sequence[Message], boundary: int) -> int | None:
    """The earliest assistant message before `boundary` that has a tool call answered at or
    after `boundary`, or `None` when no call/result pair straddles the cut."""
    call_at: dict[str, int] = {}
    for i, message in enumerate(messages[:boundary]):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                call_at[call.id] = i
    crossing = [
        call_at[message.tool_call_id]
        for message in messages[boundary:]
        if isinstance(message, ToolResultMessage) and message.tool_call_id in call_at
    ]
    return min(crossing, default=None)


def split_for_compaction(
    messages: Sequence[Message], keep_recent_turns: int
) -> tuple[list[Message], list[Message]]:
    """Split the projection into `(older, recent)`: `older` is what a summary replaces,
    `recent` is kept verbatim, and `older + recent == messages`.

    A turn starts at a `UserMessage`; the last `keep_recent_turns` turns stay in `recent`.
    An assistant message is never separated from the tool results answering its calls: when
    a pair would straddle the cut, the cut moves earlier, to the start of the turn holding
    the call, so `recent` always begins with a `UserMessage`. `older` is `[]` when there is
    nothing to compact (too few turns, or the cut moved back to the start).
    """
    if keep_recent_turns < 0:
        raise ValueError(f"keep_recent_turns must be >= 0, got {keep_recent_turns}")
    messages = list(messages)
    starts = [i for i, message in enumerate(messages) if isinstance(message, UserMessage)]
    if keep_recent_turns == 0:
        boundary = len(messages)
    elif len(starts) <= keep_recent_turns:
        return [], messages
    else:
        boundary = starts[-keep_recent_turns]
    while boundary > 0:
        crossing = _crossing_call_index(messages, boundary)
        if crossing is None:
            break
        boundary = _turn_start(messages, crossing)
    if boundary < len(messages) and not isinstance(messages[boundary], UserMessage):
        boundary = 0  # no clean turn start to cut at
    return messages[:boundary], messages[boundary:]
