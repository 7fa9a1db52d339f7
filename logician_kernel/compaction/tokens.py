"""Token estimates for the conversation projection, cheap enough to run before every call.

The estimate is a characters/4 heuristic: text parts, tool-call names and arguments (as
JSON), tool results, plus a small per-message overhead; an image costs a fixed amount. It
is deliberately rough; when the provider reports real usage, `estimate_total` prefers it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from logician_kernel.types.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

CHARS_PER_TOKEN = 4
"""The heuristic's ratio of characters to tokens."""
MESSAGE_OVERHEAD_TOKENS = 4
"""Role markers and separators every message costs on the wire."""
IMAGE_TOKENS = 1_000
"""Fixed cost of one image, whatever its size."""


def _text_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)  # ceiling division


def _part_tokens(part: TextPart | ImagePart | ToolCall | ThinkingPart) -> int:
    if isinstance(part, TextPart):
        return _text_tokens(part.text)
    if isinstance(part, ThinkingPart):  # sent back with tool-use turns, so it fills the window
        return _text_tokens(part.text) + _text_tokens(part.signature)
    if isinstance(part, ImagePart):
        return IMAGE_TOKENS
    arguments = part.invalid_arguments
    if arguments is None:
        arguments = json.dumps(part.arguments, ensure_ascii=False, sort_keys=True)
    return _text_tokens(part.name) + _text_tokens(arguments)


def estimate_tokens(message: Message) -> int:
    """Estimated tokens of one message: `ceil(chars / 4)` of its text, tool-call names and
    JSON arguments, and tool results, plus `IMAGE_TOKENS` per image and a fixed
    `MESSAGE_OVERHEAD_TOKENS`. Never less than the overhead."""
    if isinstance(message, SystemMessage):
        body = _text_tokens(message.content)
    elif isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
        body = sum(_part_tokens(part) for part in message.content)
        if isinstance(message, ToolResultMessage):
            body += _text_tokens(message.tool_call_id)
    else:  # pragma: no cover - the union is closed
        raise TypeError(f"not a message: {message!r}")
    return MESSAGE_OVERHEAD_TOKENS + body


def estimate_total(messages: Sequence[Message], reported: Usage | None = None) -> int:
    """Estimated tokens of the whole projection.

    `reported` is the usage of the latest model call, i.e. the call that produced the last
    `AssistantMessage` in `messages`. When given (with a non-zero `input_tokens`) it replaces
    the estimate for everything up to and including that assistant message
    (`input_tokens + output_tokens`), and only the messages after it (tool results, a new
    user message) are estimated. Without it, or when `messages` holds no assistant message,
    every message is estimated.
    """
    last_assistant = next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AssistantMessage)),
        None,
    )
    if reported is None or reported.input_tokens <= 0 or last_assistant is None:
        return sum(estimate_tokens(message) for message in messages)
    anchored = reported.input_tokens + reported.output_tokens
    return anchored + sum(estimate_tokens(message) for message in messages[last_assistant + 1 :])
