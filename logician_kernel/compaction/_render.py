"""Plain-text rendering of messages, shared by the summary request and the run checkpoint."""

from __future__ import annotations

import json

from logician_kernel.types.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserPart,
)


def clip(text: str, limit: int) -> str:
    """`text` cut to at most about `limit` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    head = max(limit * 2 // 3, 0)
    tail = max(limit - head, 0)
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail :]}"


def parts_text(parts: list[UserPart]) -> str:
    """Text of user/tool-result parts; images become a `[image: type]` placeholder."""
    return "\n".join(
        part.text if isinstance(part, TextPart) else f"[image: {part.media_type}]"
        for part in parts
        if isinstance(part, TextPart | ImagePart)
    )


def call_text(call: ToolCall) -> str:
    """`name({json arguments})`, or the raw text of invalid arguments."""
    arguments = call.invalid_arguments
    if arguments is None:
        arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    return f"{call.name}({arguments}) [id {call.id}]"


def render_message(message: Message, *, result_limit: int) -> str:
    """One message as a labelled block of plain text."""
    if isinstance(message, SystemMessage):
        return f"[system]\n{message.content}"
    if isinstance(message, AssistantMessage):
        lines = []
        for part in message.content:
            if isinstance(part, TextPart):
                lines.append(part.text)
            elif isinstance(part, ThinkingPart):
                continue  # reasoning is not part of what was said or done
            else:
                lines.append(f"-> tool call {call_text(part)}")
        return "[assistant]\n" + "\n".join(lines)
    if isinstance(message, ToolResultMessage):
        status = "error" if message.is_error else "ok"
        body = clip(parts_text(message.content), result_limit)
        return f"[tool result for {message.tool_call_id} ({status})]\n{body}"
    return "[user]\n" + parts_text(message.content)
