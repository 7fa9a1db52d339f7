"""Turns streamed fragments into provider events and, at the end, one `AssistantMessage`.

Shared by the wire adapters so that both formats build replies, tool calls and their argument
decoding the same way. Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from logician_kernel.types.messages import (
    AssistantMessage,
    AssistantPart,
    ReasoningDelta,
    TextDelta,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallFinished,
    ToolCallStarted,
)


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; the ledger could not store them faithfully.
    raise ValueError(f"{name} is not valid JSON")


def decode_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Decode a tool call's argument text: `(arguments, None)`, or `({}, raw)` when it is not
    a JSON object. An empty string means no arguments."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except ValueError:
        return {}, raw
    return (value, None) if isinstance(value, dict) else ({}, raw)


def argument_problem(raw: str) -> str:
    """What is wrong with argument text that `decode_arguments` rejected, in a few words."""
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except ValueError as exc:
        return f"not valid JSON: {exc}"
    return f"a JSON {type(value).__name__}, not an object"


def encode_arguments(call: ToolCall) -> str:
    """The argument text to send back for a call we received. A call whose arguments were not
    JSON goes back as `{}`: servers that template the history (llama-server with `--jinja`)
    parse every call's arguments and refuse the whole request otherwise, for good. The raw
    text and the error are in the call's tool result, and the ledger keeps the raw text."""
    if call.invalid_arguments is not None:
        return "{}"
    return json.dumps(call.arguments, ensure_ascii=False)


CHARS_PER_TOKEN = 4
"""The rough rule for estimates (the compaction layer uses the same one)."""


def estimate_tokens(assembler: MessageAssembler) -> int:
    """Output tokens of a reply the server gave no usage for: `ceil(chars / 4)` of what
    streamed, reasoning included."""
    return -(-assembler.streamed_chars // CHARS_PER_TOKEN)


class _OpenCall:
    __slots__ = ("id", "name", "fragments", "done")

    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name
        self.fragments: list[str] = []
        self.done: ToolCall | None = None


class _OpenText:
    """Text being streamed: pieces joined once, at the end (a growing string rebuilt per
    delta would make a long answer quadratic)."""

    __slots__ = ("pieces",)

    def __init__(self) -> None:
        self.pieces: list[str] = []


class MessageAssembler:
    """Collects text and tool calls in the order they stream. Every method costs the same
    however long the reply already is."""

    def __init__(self) -> None:
        self._parts: list[_OpenText | _OpenCall | ThinkingPart] = []
        self._open: dict[str, _OpenCall] = {}
        self._ids: set[str] = set()
        self.streamed_chars = 0
        """Characters of text, reasoning and arguments streamed: the basis of an estimate
        when the server reports no usage (reasoning counts as output too)."""

    def reasoning(self, text: str) -> list[ReasoningDelta]:
        """Reasoning is streamed for display only; it is not part of the reply."""
        if not text:
            return []
        self.streamed_chars += len(text)
        return [ReasoningDelta(text=text)]

    def thinking_block(self, text: str, signature: str, *, redacted: bool = False) -> None:
        """A signed block the API wants back with the reply (Anthropic); unsigned ones are
        dropped, since no server could verify them."""
        if signature:
            self._parts.append(ThinkingPart(text=text, signature=signature, redacted=redacted))

    def text(self, text: str) -> list[TextDelta]:
        if not text:
            return []
        self.streamed_chars += len(text)
        last = self._parts[-1] if self._parts else None
        if not isinstance(last, _OpenText):
            last = _OpenText()
            self._parts.append(last)
        last.pieces.append(text)
        return [TextDelta(text=text)]

    def start_call(self, call_id: str, name: str) -> list[ToolCallStarted]:
        call = _OpenCall(call_id, name)
        self._open[call_id] = call
        self._ids.add(call_id)
        self._parts.append(call)
        return [ToolCallStarted(id=call_id, name=name)]

    def arguments_so_far(self, call_id: str) -> str:
        return "".join(self._open[call_id].fragments)

    def has_name(self, call_id: str) -> bool:
        return bool(self._open[call_id].name)

    def name_call(self, call_id: str, name: str) -> None:
        """A server that sends the name after the first fragment still names the call."""
        if name and not self._open[call_id].name:
            self._open[call_id].name = name

    def known(self, call_id: str) -> bool:
        """Whether a call with this id was started in this reply (open or finished)."""
        return call_id in self._ids

    def call_arguments(self, call_id: str, fragment: str) -> list[ToolCallArgumentsDelta]:
        if not fragment:
            return []
        self.streamed_chars += len(fragment)
        self._open[call_id].fragments.append(fragment)
        return [ToolCallArgumentsDelta(id=call_id, delta=fragment)]

    def is_open(self, call_id: str) -> bool:
        return call_id in self._open

    def finish_call(self, call_id: str) -> list[ToolCallFinished]:
        call = self._open.pop(call_id, None)
        if call is None:
            return []
        arguments, invalid = decode_arguments("".join(call.fragments))
        call.done = ToolCall(
            id=call.id, name=call.name, arguments=arguments, invalid_arguments=invalid
        )
        return [ToolCallFinished(call=call.done)]

    def has_calls(self) -> bool:
        return bool(self._ids)

    def finish_all(self) -> list[ToolCallFinished]:
        return [event for call_id in list(self._open) for event in self.finish_call(call_id)]

    def message(self) -> AssistantMessage:
        """The reply so far; call after `finish_all` (calls still open are left out)."""
        content: list[AssistantPart] = []
        for part in self._parts:
            if isinstance(part, _OpenText):
                content.append(TextPart(text="".join(part.pieces)))
            elif isinstance(part, _OpenCall):
                if part.done is not None:
                    content.append(part.done)
            else:
                content.append(part)
        return AssistantMessage(content=content)
