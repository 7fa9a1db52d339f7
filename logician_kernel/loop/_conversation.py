"""Pure helpers of the turn loop that build messages.

No I/O, no state: a tool's result message, the error result an unanswered call gets.
"""

from __future__ import annotations

from collections.abc import Sequence

from logician_kernel.types.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolResultMessage,
)

UNANSWERED_CALL = (
    "Error: this call was never answered because the previous run was interrupted; whether it "
    "had any effect is unknown. Check before repeating it."
)
"""The result given to a call left unanswered at the end of the history."""


def tool_result(call_id: str, text: str, *, is_error: bool) -> ToolResultMessage:
    # Empty text blocks are rejected by some providers.
    return ToolResultMessage(
        tool_call_id=call_id, content=[TextPart(text=text or "(no output)")], is_error=is_error
    )


def answers_to_unanswered_calls(history: Sequence[Message]) -> list[ToolResultMessage]:
    """Error results for the calls of the last assistant message that have none yet."""
    answered: set[str] = set()
    for message in reversed(history):
        if isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
            continue
        if isinstance(message, AssistantMessage):
            return [
                tool_result(call.id, UNANSWERED_CALL, is_error=True)
                for call in message.tool_calls
                if call.id not in answered
            ]
        break
    return []
