"""A scripted HTTP server on 127.0.0.1 for provider tests: real sockets, real chunked bodies.

Tests queue `Reply` objects; each incoming request takes the next one. A reply can stream its
body in separately flushed pieces, pause between them, stop without finishing (a torn
stream), or reset the connection before answering. The server records every request and
notices when a client goes away mid-reply.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass
class Reply:
    """One scripted response."""

    status: int = 200
    pieces: list[bytes] = field(default_factory=list)
    """Body, written and flushed one piece at a time."""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    delay: float = 0.0
    """Pause before each piece."""
    end: Literal["complete", "disconnect", "reset"] = "complete"
    """complete: finish the body; disconnect: close mid-body; reset: RST before answering."""
    gate: threading.Event | None = None
    """Once the headers are sent, the body waits until this is set: a model still thinking,
    for exactly as long as a test needs (no fixed delay)."""

    @classmethod
    def error(cls, status: int, payload: Any, **headers: str) -> Reply:
        body = json.dumps(payload).encode() if not isinstance(payload, bytes) else payload
        return cls(
            status, [body], {k.replace("_", "-"): v for k, v in headers.items()}, "application/json"
        )


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # an idle connection must not keep a server thread alive forever
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer(None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        self._answer(json.loads(raw) if raw else None)

    def _answer(self, body: Any) -> None:
        served = getattr(self, "_served", 0)
        self._served = served + 1
        if served and self.server.owner.stale_keep_alive:
            # As llama-server after a streamed reply: the connection was advertised as kept
            # alive, but the next request on it is met with a close and no response.
            self.server.owner.dropped += 1
            self.close_connection = True
            return
        received = Received(
            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        reply = self.server.owner._take(received)
        keep_alive = self.server.owner.keep_alive and reply.end == "complete"
        self.close_connection = not keep_alive
        if reply.end == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()
            self.connection.close()
            return
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        self.send_header("connection", "keep-alive" if keep_alive else "close")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            self.wfile.flush()
            while reply.gate is not None and not reply.gate.wait(0.05):
                if self.server.owner._stopping.is_set():
                    return
            for piece in reply.pieces:
                if reply.delay and self.server.owner._stopping.wait(reply.delay):
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            if reply.end == "complete":
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.server.owner.client_left.set()


_MODEL_CALLS = ("/chat/completions", "/messages")


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    owner: LoopbackServer


class LoopbackServer:
    """Start with `with LoopbackServer() as server:`; `server.url` is its base URL."""

    def __init__(self) -> None:
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[Received] = []
        """Model calls received, in order."""
        self.metadata_requests: list[Received] = []
        """Other requests (model listings, server properties), in order."""
        self._routes: dict[tuple[str, str], Any] = {}
        self.client_left = threading.Event()
        """Set when a client closed its connection while a reply was still being written."""
        self.rejected: list[Received] = []
        """Model calls refused by `strict_tool_arguments`, in order."""
        self.keep_alive = False
        """Keep connections open between replies, as llama-server, Ollama and vLLM do (a
        client's pool then holds them from one request to the next)."""
        self.stale_keep_alive = False
        """With `keep_alive`: close a reused connection without answering, as llama-server
        does to the request that follows a streamed reply on the same connection."""
        self.dropped = 0
        """Requests met with a close and no response (`stale_keep_alive`)."""
        self.strict_tool_arguments = False
        """Refuse, as llama-server started with `--jinja` does, any request whose history
        holds a tool call with arguments that are not JSON (see `llama_server_rejection`)."""
        self.require_key: str | None = None
        """Answer 401, as a server with an API key does, to any request that does not carry
        this key (`Authorization: Bearer KEY` or `x-api-key: KEY`); recorded all the same."""
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def clear(self) -> None:
        """Drop the scripted replies not taken yet (a run cut short left them)."""
        with self._lock:
            self._replies.clear()

    def route(self, method: str, path: str, payload: Any) -> None:
        """Answer every `method path` request with `payload` as JSON (model metadata such as
        `/v1/models`), outside the queue of scripted replies."""
        with self._lock:
            self._routes[(method, path)] = payload

    def _take(self, received: Received) -> Reply:
        with self._lock:
            key = self.require_key
            if key is not None and key not in (
                received.headers.get("authorization", "").removeprefix("Bearer "),
                received.headers.get("x-api-key"),
            ):
                is_call = received.path.endswith(_MODEL_CALLS)
                (self.requests if is_call else self.metadata_requests).append(received)
                return Reply.error(401, {"error": {"message": "Incorrect API key provided"}})
            routed = self._routes.get((received.method, received.path))
            if routed is not None:
                self.metadata_requests.append(received)
                return Reply.error(200, routed)
            if not received.path.endswith(_MODEL_CALLS):
                # Metadata a client may probe for (/v1/models, /props, /api/show): not a model
                # call, so it must not take a scripted reply.
                self.metadata_requests.append(received)
                return Reply.error(404, {"error": {"message": f"loopback: no {received.path}"}})
            self.requests.append(received)
            if self.strict_tool_arguments:
                rejection = llama_server_rejection(received.body)
                if rejection is not None:
                    self.rejected.append(received)
                    return rejection
            if self._replies:
                return self._replies.popleft()
        return Reply.error(500, {"error": {"message": "loopback: no scripted reply left"}})

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        self._thread.join()


def llama_server_rejection(body: Any) -> Reply | None:
    """What llama.cpp's llama-server (with `--jinja`) answers a chat request whose history
    holds a tool call whose `arguments` string is not JSON: its chat-template code parses each
    call's arguments with nlohmann::json, the exception reaches the HTTP handler's wrapper,
    and that answers HTTP 500 with an OpenAI-style error of type `server_error`. The message
    is the one seen from a real server (`Failed to parse tool call arguments as JSON:
    [json.exception.parse_error.101] ...`)."""
    for message in (body or {}).get("messages") or []:
        for call in message.get("tool_calls") or []:
            arguments = (call.get("function") or {}).get("arguments")
            if not isinstance(arguments, str):
                continue
            try:
                json.loads(arguments)
            except ValueError:
                detail = (
                    "Failed to parse tool call arguments as JSON: [json.exception.parse_error."
                    f"101] parse error at line 1, column {len(arguments) + 1}: syntax error "
                    "while parsing object - unexpected end of input; expected '}'; last read: "
                    f"'{arguments[-40:]}'"
                )
                return Reply.error(
                    500, {"error": {"code": 500, "message": detail, "type": "server_error"}}
                )
    return None


# --- wire-format builders -----------------------------------------------------------------


def sse(*payloads: Any, event_names: bool = False, done: bool = False) -> bytes:
    """An SSE body: one `data:` event per payload (named by its `type` if asked)."""
    out = []
    for payload in payloads:
        name = f"event: {payload['type']}\n" if event_names else ""
        out.append(f"{name}data: {json.dumps(payload)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def split_every(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def openai_chunks(
    text: list[str] = (),  # type: ignore[assignment]
    tool: tuple[str, str, list[str]] | None = None,
    finish: str | None = "stop",
    usage: tuple[int, int] | None = (11, 7),
) -> list[dict[str, Any]]:
    """Chat Completions chunks: text deltas, then optionally one tool call whose arguments
    arrive in the given fragments, then finish_reason, then a usage chunk."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "loop-model"}
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    for piece in text:
        chunks.append({**base, "choices": [{"index": 0, "delta": {"content": piece}}]})
    if tool:
        call_id, name, fragments = tool
        start = {
            "index": 0,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [start]}}]})
        for fragment in fragments:
            delta = {"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}
            chunks.append({**base, "choices": [{"index": 0, "delta": delta}]})
    if finish:
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if usage:
        chunks.append(
            {
                **base,
                "choices": [],
                "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
            }
        )
    return chunks


def anthropic_events(
    text: list[str] = (),  # type: ignore[assignment]
    tool: tuple[str, str, list[str]] | None = None,
    stop_reason: str = "end_turn",
    stop: bool = True,
) -> list[dict[str, Any]]:
    """Messages stream events: a text block, optionally a tool_use block with its input in
    the given fragments, message_delta with usage, message_stop."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "model": "loop-claude",
                "usage": {"input_tokens": 21, "output_tokens": 1},
            },
        },
        {"type": "ping"},
    ]
    index = 0
    if text:
        events.append(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        )
        for piece in text:
            events.append(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": piece},
                }
            )
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    if tool:
        call_id, name, fragments = tool
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
            }
        )
        for fragment in fragments:
            events.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": fragment},
                }
            )
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason},
            "usage": {"output_tokens": 9},
        }
    )
    if stop:
        events.append({"type": "message_stop"})
    return events


# --- server profiles: how real OpenAI-compatible servers stream ------------------------------

Profile = Literal["openai", "ollama", "llamacpp", "vllm", "think-tags"]
PROFILES: tuple[Profile, ...] = ("openai", "ollama", "llamacpp", "vllm", "think-tags")


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-p",
        "object": "chat.completion.chunk",
        "model": "loop-model",
        "choices": [choice],
        **extra,
    }


def _pieces_of(text: str, size: int = 5) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def profile_chunks(
    profile: Profile,
    *,
    text: str = "",
    reasoning: str = "",
    calls: tuple[tuple[str, str, dict[str, Any] | str], ...] = (),
    usage: tuple[int, int] | None = (30, 12),
) -> list[dict[str, Any]]:
    """The chunks `profile` sends for one reply with optional reasoning, text and tool calls
    (arguments as an object, or as raw text to send something that is not JSON).

    - openai: parallel calls by index, id/type/name on the first delta, arguments in pieces,
      `finish_reason: tool_calls`, usage in a last chunk with no choices (`include_usage`).
    - ollama: `reasoning` deltas; every call whole at `index: 0` with its own id
      (ollama/ollama#15457); `finish_reason: "stop"` even after calls.
    - llamacpp: as recorded from llama-server (tests/fixtures/streams/llamacpp-*): a first
      chunk `{"role": "assistant", "content": null}`; `reasoning_content` deltas
      (`--reasoning-format deepseek`); each call's first delta carries a 32-character id,
      type, name and arguments already `"{"`, continuations only the index and a fragment;
      a tool-call reply ends `finish_reason: "length"` with an empty delta and no usage;
      usage and `timings` come in their own `choices: []` chunk before `[DONE]`.
    - vllm: `reasoning` deltas (vLLM >= 0.9); usage repeated on every chunk
      (`continuous_usage_stats`), growing: only the last report is right.
    - think-tags: a reasoning model served without a reasoning parser: `<think>...</think>`
      inside `content`, split across chunks.
    """
    reasoning_key = {"ollama": "reasoning", "llamacpp": "reasoning_content", "vllm": "reasoning"}
    first_delta = {"role": "assistant", "content": None if profile == "llamacpp" else ""}
    chunks: list[dict[str, Any]] = [_chunk(first_delta)]
    if reasoning and profile == "think-tags":
        for piece in _pieces_of(f"<think>\n{reasoning}\n</think>\n\n", 4):
            chunks.append(_chunk({"content": piece}))
    elif reasoning:
        key = reasoning_key.get(profile, "reasoning_content")
        for piece in _pieces_of(reasoning):
            chunks.append(_chunk({key: piece, "content": None}))
    for piece in _pieces_of(text):
        chunks.append(_chunk({"content": piece}))
    for index, (call_id, name, arguments) in enumerate(calls):
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        if profile == "ollama":
            whole = {
                "id": call_id,
                "index": 0,
                "type": "function",
                "function": {"name": name, "arguments": args},
            }
            chunks.append(_chunk({"tool_calls": [whole]}))
            continue
        opening = ""
        if profile == "llamacpp":  # the first delta already holds the opening brace
            opening, args = args[:1], args[1:]
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": opening},
        }
        chunks.append(_chunk({"tool_calls": [first]}))
        for piece in _pieces_of(args, 6):
            chunks.append(
                _chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    finish = "tool_calls" if calls and profile != "ollama" else "stop"
    report = (
        {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        if usage
        else None
    )
    if profile == "vllm" and report:
        for n, c in enumerate(chunks):
            c["usage"] = {
                "prompt_tokens": usage[0],
                "completion_tokens": n,  # type: ignore[index]
                "total_tokens": usage[0] + n,
            }  # type: ignore[index]
    if profile == "llamacpp":
        chunks.append(_chunk({}, "length" if calls else finish))
        if report:
            timings = {
                "prompt_n": usage[0],
                "predicted_n": usage[1],  # type: ignore[index]
                "predicted_per_second": 61.5,
            }
            chunks.append({**_chunk({}), "choices": [], "usage": report, "timings": timings})
    else:
        chunks.append(
            _chunk({}, finish, **({"usage": report} if profile == "vllm" and report else {}))
        )
        if report and profile in ("openai", "ollama", "think-tags"):
            chunks.append({**_chunk({}), "choices": [], "usage": report})
    return chunks


def profile_reply(profile: Profile, **reply: Any) -> Reply:
    """`profile_chunks` as a reply, the SSE body split mid-event as networks do."""
    return Reply(pieces=split_every(sse(*profile_chunks(profile, **reply), done=True), 23))


def vllm_models(name: str, max_model_len: int) -> dict[str, Any]:
    """vLLM's `GET /v1/models` (vllm/entrypoints/openai/protocol.py `ModelCard`)."""
    return {
        "object": "list",
        "data": [
            {
                "id": name,
                "object": "model",
                "owned_by": "vllm",
                "root": name,
                "max_model_len": max_model_len,
            }
        ],
    }


def tool_reply(call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    """An OpenAI-style streamed reply asking for one tool call, its arguments whole."""
    chunks = openai_chunks(tool=(call_id, name, [json.dumps(arguments)]), finish="tool_calls")
    return Reply(pieces=[sse(*chunks, done=True)])


def text_reply(*pieces: str, delay: float = 0.0) -> Reply:
    """An OpenAI-style streamed text answer, one delta per piece."""
    return Reply(
        pieces=[sse(c) for c in openai_chunks(text=list(pieces))] + [b"data: [DONE]\n\n"],
        delay=delay,
    )
