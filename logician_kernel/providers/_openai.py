"""OpenAI-compatible Chat Completions: the wire format, and the provider that speaks it.

One provider serves OpenAI, Ollama, llama.cpp's server, vLLM, LM Studio and OpenRouter, so
the decoder is lenient where those servers differ (a missing `[DONE]`, tool calls sent whole,
`finish_reason: stop` alongside tool calls) and strict where a reply would be lost.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from logician_kernel.types.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderEvent,
    StopReason,
    SystemMessage,
    TextPart,
    ToolResultMessage,
    Usage,
    UsageReported,
    UserMessage,
    UserPart,
)

from ._assembly import MessageAssembler, encode_arguments, estimate_tokens
from ._errors import IncompleteStreamError, ProviderStreamError, says_malformed, server_limit
from ._http import HttpProvider
from ._reasoning import Piece, ThinkSplitter
from ._sse import SSEEvent

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}


def _user_content(parts: list[UserPart]) -> str | list[dict[str, Any]]:
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return [
        {"type": "text", "text": part.text}
        if isinstance(part, TextPart)
        else {
            "type": "image_url",
            "image_url": {"url": f"data:{part.media_type};base64,{part.data}"},
        }
        for part in parts
    ]


def _system(message: SystemMessage) -> dict[str, Any]:
    return {"role": "system", "content": message.content}


def _user(message: UserMessage) -> dict[str, Any]:
    return {"role": "user", "content": _user_content(message.content)}


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    calls = message.tool_calls
    if calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": encode_arguments(call)},
            }
            for call in calls
        ]
    elif wire["content"] is None:
        wire["content"] = ""
    return wire


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    # Chat Completions takes only text in tool messages, and has no error flag.
    text = "".join(
        part.text if isinstance(part, TextPart) else _omitted(part) for part in message.content
    )
    if message.is_error:
        text = f"[tool error] {text}"
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}


def _omitted(part: ImagePart) -> str:
    return f"[{part.media_type} image omitted: tool results here carry text only]"


_ENCODERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "system": _system,
    "user": _user,
    "assistant": _assistant,
    "tool_result": _tool_result,
}


_CHOICE_WORDS = ("auto", "required", "none")
"""`tool_choice` values sent as they are; a tool's name is sent as `required` with that tool
alone. The named form (`{"type": "function", ...}`) is standard, but llama.cpp's server reads
`tool_choice` as a string and takes an object for `auto`, silently: the model was never
forced. `required` with one tool forces the same call on every server."""


def encode_message(message: Message) -> dict[str, Any]:
    """One message in Chat Completions form."""
    return _ENCODERS[message.kind](message)


class OpenAIChatFormat:
    """`POST /chat/completions` with `stream: true`."""

    path = "/chat/completions"
    headers: dict[str, str] = {}

    def body(self, request: ModelRequest, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": [encode_message(message) for message in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        tools = request.tools
        named = request.tool_choice not in (None, *_CHOICE_WORDS)
        if named:
            tools = [tool for tool in tools if tool.name == request.tool_choice] or tools
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in tools
            ]
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stop:
            body["stop"] = request.stop
        if request.tools and request.tool_choice:
            body["tool_choice"] = "required" if named else request.tool_choice
        return body

    def decoder(self, model: str) -> ChatStreamDecoder:
        return ChatStreamDecoder(model)


class ChatStreamDecoder:
    """Chunks of one streamed chat completion -> provider events."""

    def __init__(self, model: str) -> None:
        self.done = False
        self._model = model
        self._response_id: str | None = None
        self._assembler = MessageAssembler()
        self._by_index: dict[Any, str] = {}  # the server's tool-call index -> our call id
        self._server_ids: dict[str, str | None] = {}  # our call id -> the id the server sent
        self._by_server_id: dict[str, str] = {}  # the server's id -> our latest call with it
        self._last_call: str | None = None
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._think = ThinkSplitter()

    def feed(self, sse: SSEEvent) -> list[ProviderEvent]:
        if self.done:
            return []
        if sse.data.strip() == "[DONE]":
            return self._complete(done=True)
        try:
            chunk = json.loads(sse.data)
        except ValueError:
            raise ProviderStreamError(
                f"openai stream sent a chunk that is not JSON: {sse.data[:200]!r}",
                error_type="invalid_chunk",
                retryable=False,
                provider="openai",
                model=self._model,
            ) from None
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):
            raise _stream_error(chunk["error"], self._model)
        self._response_id = chunk.get("id") or self._response_id
        self._model = chunk.get("model") or self._model
        events: list[ProviderEvent] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) == 0:
                events += self._choice(choice)
        usage = chunk.get("usage")
        if usage:
            self._usage = Usage(
                input_tokens=usage.get("prompt_tokens") or 0,
                output_tokens=usage.get("completion_tokens") or 0,
            )
            events.append(UsageReported(usage=self._usage))
        return events

    def finish(self) -> list[ProviderEvent]:
        return self._complete(done=False)

    def whole(self, payload: Any) -> list[ProviderEvent]:
        """A reply sent whole (`stream: false`): its message is decoded as one big delta, so
        both paths build replies the same way."""
        if not isinstance(payload, dict):
            raise ProviderStreamError(
                f"openai server sent a reply that is not a JSON object: {str(payload)[:200]!r}",
                error_type="invalid_reply",
                retryable=False,
                provider="openai",
                model=self._model,
            )
        choices = []
        for choice in payload.get("choices") or []:
            message = dict(choice.get("message") or {})
            message["tool_calls"] = [
                {"index": i, **call} for i, call in enumerate(message.get("tool_calls") or [])
            ]
            choices.append({**choice, "delta": message})
        chunk = {**payload, "choices": choices}
        events = self.feed(SSEEvent(data=json.dumps(chunk)))
        return events + ([] if self.done else self._complete(done=True))

    def _complete(self, *, done: bool) -> list[ProviderEvent]:
        # `[DONE]` (or the end of the body) after a finish_reason completes the reply; so does
        # `[DONE]` after tool calls without one (some servers never send a finish_reason).
        calls_then_done = done and self._assembler.has_calls()
        if self._finish_reason is None and not calls_then_done:
            raise IncompleteStreamError(
                f"openai stream for model {self._model!r} ended before any finish_reason",
                provider="openai",
                model=self._model,
            )
        self.done = True
        events: list[ProviderEvent] = self._pieces(self._think.close())
        events += self._assembler.finish_all()
        message = self._assembler.message()
        stop = _STOP_REASONS.get(self._finish_reason or "", "other")
        # Decided from the calls, not the finish_reason: Ollama says "stop" after tool calls,
        # and a "tool_calls" that brought no call is an answer.
        if message.tool_calls:
            stop = "tool_use"
        elif stop == "tool_use":
            stop = "end_turn"
        events.append(
            ModelResponse(
                message=message,
                usage=self._usage or Usage(output_tokens=estimate_tokens(self._assembler)),
                usage_estimated=self._usage is None,
                stop_reason=stop,
                provider_stop_reason=self._finish_reason,
                model=self._model,
                response_id=self._response_id,
            )
        )
        return events

    def _choice(self, choice: dict[str, Any]) -> list[ProviderEvent]:
        delta = choice.get("delta") or {}
        # vLLM <= 0.8 and DeepSeek say `reasoning_content`, vLLM >= 0.9 and Ollama `reasoning`;
        # servers keeping both names for compatibility send the same text twice.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        events: list[ProviderEvent] = []
        if isinstance(reasoning, str):
            events += self._assembler.reasoning(reasoning)
        events += self._content(delta.get("content") or "")
        for call_delta in delta.get("tool_calls") or []:
            events += self._call_delta(call_delta)
        if choice.get("finish_reason"):
            self._finish_reason = choice["finish_reason"]
            events += self._assembler.finish_all()
        return events

    def _content(self, content: str) -> list[ProviderEvent]:
        if not isinstance(content, str):  # a few servers send a list of parts; never text here
            return []
        return self._pieces(self._think.feed(content))

    def _pieces(self, pieces: list[Piece]) -> list[ProviderEvent]:
        events: list[ProviderEvent] = []
        for kind, text in pieces:
            if kind == "text":
                events += self._assembler.text(text)
            else:
                events += self._assembler.reasoning(text)
        return events

    def _call_delta(self, call_delta: dict[str, Any]) -> list[ProviderEvent]:
        server_id = call_delta.get("id") or None  # "" is how some proxies say "absent"
        index = call_delta.get("index")
        function = call_delta.get("function") or {}
        name = function.get("name") or ""
        events: list[ProviderEvent] = []
        call_id = self._continued_call(index, server_id, name)
        if call_id is None:
            if index is not None and index in self._by_index:
                # A new call at an index in use (Ollama): the previous one was sent whole.
                events += self._assembler.finish_call(self._by_index[index])
            call_id = server_id or f"call_{uuid.uuid4().hex[:24]}"
            if self._assembler.known(call_id):  # a server reusing an id must not merge calls
                call_id = f"{call_id}_{uuid.uuid4().hex[:8]}"
            self._server_ids[call_id] = server_id
            if server_id is not None:
                self._by_server_id[server_id] = call_id
            events += self._assembler.start_call(call_id, name)
            if index is not None:
                self._by_index[index] = call_id
        else:
            self._assembler.name_call(call_id, name)
        self._last_call = call_id
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        events += self._assembler.call_arguments(call_id, arguments or "")
        return events

    def _continued_call(self, index: Any, server_id: str | None, name: str) -> str | None:
        """The open call this delta continues, or None when it starts a new one. A new
        non-empty id at an index in use starts a call; a delta with neither index nor id
        continues the last open call."""
        if index is not None:
            current = self._by_index.get(index)
        elif server_id is not None:
            current = self._by_server_id.get(server_id)
        else:
            current = self._last_call
        if current is None or not self._assembler.is_open(current):
            return None
        if server_id is not None and self._server_ids.get(current) not in (None, server_id):
            return None
        if (
            name
            and self._assembler.has_name(current)
            and _is_whole(self._assembler.arguments_so_far(current))
        ):
            return None  # a fresh name after complete arguments: a new call without an id
        return current


def _is_whole(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def _stream_error(error: Any, model: str) -> ProviderStreamError:
    if isinstance(error, dict):
        message = str(error.get("message") or error)
        kind = str(error.get("code") or error.get("type") or "error")
    else:
        message, kind = str(error), "error"
    fix = server_limit(message)
    if fix is not None:
        return ProviderStreamError(
            f"openai-compatible server cannot serve model {model!r} as asked: {message}. {fix}",
            error_type=kind,
            retryable=False,
            provider="openai",
            model=model,
        )
    transient = not says_malformed(message) and any(
        word in f"{kind} {message}".lower() for word in ("overloaded", "server_error")
    )
    return ProviderStreamError(
        f"openai stream error for model {model!r} ({kind}): {message}",
        error_type=kind,
        retryable=transient,
        provider="openai",
        model=model,
    )


class OpenAIProvider(HttpProvider):
    """Any server speaking OpenAI Chat Completions; the key goes in a bearer token."""

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_api_key_env = "OPENAI_API_KEY"
    models_path = "/models"
    wire = OpenAIChatFormat()

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}
