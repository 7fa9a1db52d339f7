"""Anthropic Messages: the wire format, and the provider that speaks it.

The stream is a sequence of typed events (message_start, content_block_start/delta/stop,
message_delta, message_stop, ping, error); a reply is complete only at message_stop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from logician_kernel.types.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderEvent,
    StopReason,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolResultMessage,
    Usage,
    UsageReported,
    UserMessage,
    UserPart,
)

from ._assembly import MessageAssembler
from ._errors import IncompleteStreamError, ProviderStreamError
from ._http import HttpProvider
from ._sse import SSEEvent

DEFAULT_MAX_TOKENS = 4096
"""Sent when the request sets no `max_tokens`; the Messages API requires one."""

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}
_TRANSIENT_ERRORS = frozenset({"overloaded_error", "api_error"})


def _blocks(parts: list[UserPart]) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": part.text}
        if isinstance(part, TextPart)
        else {
            "type": "image",
            "source": {"type": "base64", "media_type": part.media_type, "data": part.data},
        }
        for part in parts
        if not (isinstance(part, TextPart) and not part.text)  # empty text blocks are rejected
    ]


def _user(message: UserMessage) -> tuple[str, list[dict[str, Any]]]:
    return "user", _blocks(message.content)


def _assistant(message: AssistantMessage) -> tuple[str, list[dict[str, Any]]]:
    # Signed thinking must go back with a tool-use turn, unchanged and first; elsewhere the
    # API ignores it, so it is not sent (it would only cost input tokens).
    with_thinking = bool(message.tool_calls)
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:  # empty text blocks are rejected
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart):
            if with_thinking:
                blocks.append(_thinking(part))
        else:
            # input must be an object: a call whose arguments were not one goes back as {}.
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
    return "assistant", blocks


def _thinking(part: ThinkingPart) -> dict[str, Any]:
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.signature}
    return {"type": "thinking", "thinking": part.text, "signature": part.signature}


def _tool_result(message: ToolResultMessage) -> tuple[str, list[dict[str, Any]]]:
    block = {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": _blocks(message.content),
        "is_error": message.is_error,
    }
    return "user", [block]


_ENCODERS: dict[str, Callable[[Any], tuple[str, list[dict[str, Any]]]]] = {
    "user": _user,
    "assistant": _assistant,
    "tool_result": _tool_result,
}


def encode_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The `system` text and the `messages` list. Consecutive messages of one role are merged
    (the API wants roles to alternate, and tool results travel in user messages)."""
    system = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        role, blocks = _ENCODERS[message.kind](message)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"] += blocks
        else:
            wire.append({"role": role, "content": blocks})
    return system, wire


# The Messages API's words for the Chat Completions `tool_choice` values.
_ANTHROPIC_CHOICES: dict[str, dict[str, str]] = {
    "auto": {"type": "auto"},
    "required": {"type": "any"},
    "none": {"type": "none"},
}


class AnthropicMessagesFormat:
    """`POST /v1/messages` with `stream: true`."""

    path = "/v1/messages"
    headers = {"anthropic-version": "2023-06-01"}

    def body(self, request: ModelRequest, model: str) -> dict[str, Any]:
        system, messages = encode_messages(request.messages)
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": messages,
            "stream": True,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stop:
            body["stop_sequences"] = request.stop
        if request.tools and request.tool_choice:
            body["tool_choice"] = _ANTHROPIC_CHOICES.get(
                request.tool_choice, {"type": "tool", "name": request.tool_choice}
            )
        return body

    def decoder(self, model: str) -> MessagesStreamDecoder:
        return MessagesStreamDecoder(model)


def _input_tokens(usage: dict[str, Any]) -> int:
    return sum(
        usage.get(key) or 0
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


class MessagesStreamDecoder:
    """Events of one streamed message -> provider events."""

    def __init__(self, model: str) -> None:
        self.done = False
        self._model = model
        self._response_id: str | None = None
        self._assembler = MessageAssembler()
        self._tool_blocks: dict[int, str] = {}  # content block index -> call id
        self._thinking: dict[int, list[str]] = {}  # block index -> [text, signature]
        self._stop_reason: str | None = None
        self._usage = Usage()
        self._handlers: dict[str, Callable[[dict[str, Any]], list[ProviderEvent]]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
            "error": self._error,
        }

    def feed(self, sse: SSEEvent) -> list[ProviderEvent]:
        if self.done:
            return []
        try:
            payload = json.loads(sse.data)
        except ValueError:
            raise ProviderStreamError(
                f"anthropic stream sent an event that is not JSON: {sse.data[:200]!r}",
                error_type="invalid_event",
                retryable=False,
                provider="anthropic",
                model=self._model,
            ) from None
        kind = payload.get("type", sse.event) if isinstance(payload, dict) else sse.event
        handler = self._handlers.get(kind)  # ping and future event types carry nothing for us
        return handler(payload) if handler else []

    def whole(self, payload: Any) -> list[ProviderEvent]:
        """A whole Messages reply, replayed as the events that would have streamed it."""
        message = payload if isinstance(payload, dict) else {}
        if message.get("type") == "error":
            return self._error(message)
        events = self._message_start({"message": message})
        for index, block in enumerate(message.get("content") or []):
            if block.get("type") == "thinking":
                start = {**block, "thinking": block.get("thinking") or ""}
                events += self._block_start({"index": index, "content_block": start})
            else:
                events += self._block_start({"index": index, "content_block": block})
            events += self._block_stop({"index": index})
        events += self._message_delta(
            {"delta": {"stop_reason": message.get("stop_reason")}, "usage": message.get("usage")}
        )
        return events + self._message_stop({})

    def finish(self) -> list[ProviderEvent]:
        raise IncompleteStreamError(
            f"anthropic stream for model {self._model!r} ended before message_stop",
            provider="anthropic",
            model=self._model,
        )

    def _message_start(self, payload: dict[str, Any]) -> list[ProviderEvent]:
        message = payload.get("message") or {}
        self._response_id = message.get("id")
        self._model = message.get("model") or self._model
        usage = message.get("usage") or {}
        self._usage = Usage(
            input_tokens=_input_tokens(usage), output_tokens=usage.get("output_tokens") or 0
        )
        return []

    def _block_start(self, payload: dict[str, Any]) -> list[ProviderEvent]:
        block = payload.get("content_block") or {}
        index = payload.get("index", -1)
        if block.get("type") == "text":
            return list(self._assembler.text(block.get("text") or ""))
        if block.get("type") == "thinking":
            self._thinking[index] = [block.get("thinking") or "", block.get("signature") or ""]
            return list(self._assembler.reasoning(block.get("thinking") or ""))
        if block.get("type") == "redacted_thinking":
            self._assembler.thinking_block("", block.get("data") or "", redacted=True)
            return []
        if block.get("type") != "tool_use":
            return []  # server-side blocks are not part of our vocabulary
        call_id = block.get("id") or f"toolu_{self._response_id}_{index}"
        self._tool_blocks[index] = call_id
        events: list[ProviderEvent] = list(
            self._assembler.start_call(call_id, block.get("name", ""))
        )
        if block.get("input"):  # complete input up front instead of deltas
            events += self._assembler.call_arguments(call_id, json.dumps(block["input"]))
        return events

    def _block_delta(self, payload: dict[str, Any]) -> list[ProviderEvent]:
        delta = payload.get("delta") or {}
        if delta.get("type") == "text_delta":
            return list(self._assembler.text(delta.get("text") or ""))
        thinking = self._thinking.get(payload.get("index", -1))
        if thinking is not None and delta.get("type") == "thinking_delta":
            thinking[0] += delta.get("thinking") or ""
            return list(self._assembler.reasoning(delta.get("thinking") or ""))
        if thinking is not None and delta.get("type") == "signature_delta":
            thinking[1] += delta.get("signature") or ""
            return []
        call_id = self._tool_blocks.get(payload.get("index", -1))
        if delta.get("type") == "input_json_delta" and call_id is not None:
            return list(self._assembler.call_arguments(call_id, delta.get("partial_json") or ""))
        return []

    def _block_stop(self, payload: dict[str, Any]) -> list[ProviderEvent]:
        thinking = self._thinking.pop(payload.get("index", -1), None)
        if thinking is not None:
            self._assembler.thinking_block(thinking[0], thinking[1])
            return []
        call_id = self._tool_blocks.pop(payload.get("index", -1), None)
        return list(self._assembler.finish_call(call_id)) if call_id else []

    def _message_delta(self, payload: dict[str, Any]) -> list[ProviderEvent]:
        self._stop_reason = (payload.get("delta") or {}).get("stop_reason") or self._stop_reason
        usage = payload.get("usage") or {}
        self._usage = Usage(
            input_tokens=_input_tokens(usage) or self._usage.input_tokens,
            output_tokens=usage.get("output_tokens") or self._usage.output_tokens,
        )
        return [UsageReported(usage=self._usage)]

    def _message_stop(self, payload: dict[str, Any]) -> list[ProviderEvent]:
        self.done = True
        events: list[ProviderEvent] = list(self._assembler.finish_all())
        events.append(
            ModelResponse(
                message=self._assembler.message(),
                usage=self._usage,
                stop_reason=_STOP_REASONS.get(self._stop_reason or "", "other"),
                provider_stop_reason=self._stop_reason,
                model=self._model,
                response_id=self._response_id,
            )
        )
        return events

    def _error(self, payload: dict[str, Any]) -> list[ProviderEvent]:
        error = payload.get("error") or {}
        kind = str(error.get("type") or "error")
        raise ProviderStreamError(
            f"anthropic stream error for model {self._model!r} ({kind}): {error.get('message')}",
            error_type=kind,
            retryable=kind in _TRANSIENT_ERRORS,
            provider="anthropic",
            model=self._model,
        )


class AnthropicProvider(HttpProvider):
    """Anthropic's Messages API; the key goes in `x-api-key`."""

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_api_key_env = "ANTHROPIC_API_KEY"
    models_path = "/v1/models"
    wire = AnthropicMessagesFormat()

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key}

    def prepare_body(self, body: dict[str, Any]) -> dict[str, Any]:
        budget = self.thinking_budget_tokens
        if not budget:
            return body
        # Extended thinking: the answer needs room beyond the budget, and the API accepts
        # no temperature other than its default while thinking.
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = max(body["max_tokens"], budget + DEFAULT_MAX_TOKENS)
        body.pop("temperature", None)
        return body
