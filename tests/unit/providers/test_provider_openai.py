"""OpenAI-compatible Chat Completions over a real loopback socket."""

from __future__ import annotations

import json

from loopback import Reply, openai_chunks, split_every, sse

from logician_kernel.providers import IncompleteStreamError, ProviderStreamError, RetryPolicy
from logician_kernel.types import (
    AssistantMessage,
    ImagePart,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from .support import KEY, REQUEST, kinds, run_stream


def test_text_split_at_every_byte_streams_and_completes(server) -> None:
    body = sse(*openai_chunks(text=["Hel", "lo, ", "wörld ✓"]), done=True)
    server.script(Reply(pieces=split_every(body, 1)))
    outcome = run_stream("openai", server)
    assert outcome.error is None
    assert kinds(outcome.events) == ["text_delta"] * 3 + ["usage", "response"]
    response = outcome.events[-1]
    assert isinstance(response, ModelResponse)
    assert response.message == AssistantMessage(content=[TextPart(text="Hello, wörld ✓")])
    assert response.usage == Usage(input_tokens=11, output_tokens=7)
    assert (response.stop_reason, response.provider_stop_reason) == ("end_turn", "stop")
    assert (response.model, response.response_id) == ("loop-model", "chatcmpl-1")


def test_request_shape_and_bearer_auth(server) -> None:
    server.script(Reply(pieces=[sse(*openai_chunks(text=["ok"]), done=True)]))
    request = REQUEST.model_copy(update={"max_tokens": 64, "temperature": 0.0, "stop": ["END"]})
    assert run_stream("openai", server, request).error is None
    (received,) = server.requests
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == f"Bearer {KEY}"
    assert received.body == {
        "model": "loop-model",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "description": "Read a file.",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }
        ],
        "max_tokens": 64,
        "temperature": 0.0,
        "stop": ["END"],
    }


def test_tool_call_arguments_spread_over_many_deltas(server) -> None:
    arguments = json.dumps({"path": "src/ünïcode.py", "lines": [1, 20]})
    fragments = [arguments[i : i + 3] for i in range(0, len(arguments), 3)]
    chunks = openai_chunks(
        text=["Reading."], tool=("call_9", "read", fragments), finish="tool_calls"
    )
    server.script(Reply(pieces=split_every(sse(*chunks, done=True), 7)))
    outcome = run_stream("openai", server)
    assert outcome.error is None
    deltas = [e for e in outcome.events if isinstance(e, ToolCallArgumentsDelta)]
    assert "".join(d.delta for d in deltas) == arguments and len(deltas) == len(fragments)
    assert kinds(outcome.events)[:2] == ["text_delta", "tool_call_started"]
    call = ToolCall(
        id="call_9", name="read", arguments={"path": "src/ünïcode.py", "lines": [1, 20]}
    )
    finished = outcome.events[-3]
    assert finished.kind == "tool_call_finished" and finished.call == call
    response = outcome.events[-1]
    assert response.stop_reason == "tool_use"
    assert response.message.content == [TextPart(text="Reading."), call]


def test_lenient_servers_whole_tool_calls_stop_reason_and_no_done(server) -> None:
    # Ollama-style: the call arrives whole, finish_reason says "stop", no usage, no [DONE].
    whole = {"index": 0, "id": "c", "function": {"name": "read", "arguments": {"path": "x"}}}
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [whole]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    server.script(Reply(pieces=[sse(*chunks)]))
    outcome = run_stream("openai", server)
    assert outcome.error is None
    response = outcome.events[-1]
    assert response.stop_reason == "tool_use"
    # No usage reported: an estimate, flagged, from the prompt sent and the call received.
    assert response.usage_estimated and response.usage.output_tokens == 4
    assert response.usage.input_tokens > 10
    assert response.message.tool_calls == [ToolCall(id="c", name="read", arguments={"path": "x"})]


def test_invalid_tool_arguments_are_kept_raw_and_sent_back_as_an_empty_object(server) -> None:
    """Sent back verbatim, they made llama-server refuse every later request (issue 36)."""
    chunks = openai_chunks(tool=("c1", "read", ['{"path": ']), finish="tool_calls")
    server.script(
        Reply(pieces=[sse(*chunks, done=True)]),
        Reply(pieces=[sse(*openai_chunks(text=["ok"]), done=True)]),
    )
    outcome = run_stream("openai", server)
    call = outcome.events[-1].message.tool_calls[0]
    assert (call.arguments, call.invalid_arguments) == ({}, '{"path": ')
    follow_up = ModelRequest(
        messages=[
            *REQUEST.messages,
            outcome.events[-1].message,
            ToolResultMessage(
                tool_call_id="c1",
                content=[TextPart(text="bad JSON"), ImagePart(media_type="image/png", data="AA==")],
                is_error=True,
            ),
            UserMessage(
                content=[TextPart(text="see"), ImagePart(media_type="image/png", data="AA==")]
            ),
        ]
    )
    assert run_stream("openai", server, follow_up).error is None
    sent = server.requests[1].body["messages"][2:]
    assert sent[0]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert sent[1]["role"] == "tool" and sent[1]["content"].startswith(
        "[tool error] bad JSON[image/png"
    )
    assert sent[2]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,AA=="},
    }


def test_mid_stream_disconnect_is_an_incomplete_stream_and_not_retried(server) -> None:
    body = sse(*openai_chunks(text=["partial ", "answer"], finish=None, usage=None))
    server.script(Reply(pieces=split_every(body, 40), end="disconnect"))
    outcome = run_stream("openai", server)
    assert kinds(outcome.events) == ["text_delta", "text_delta"]
    assert isinstance(outcome.error, IncompleteStreamError)
    assert "mid-stream" in str(outcome.error) and len(server.requests) == 1


def test_stream_ending_without_finish_reason_is_incomplete(server) -> None:
    body = sse(*openai_chunks(text=["cut"], finish=None, usage=None), done=True)
    server.script(Reply(pieces=[body]))
    outcome = run_stream("openai", server, retry=RetryPolicy(max_retries=0))
    assert isinstance(outcome.error, IncompleteStreamError)
    assert "ended before any finish_reason" in str(outcome.error)


def test_error_chunk_inside_the_stream(server) -> None:
    body = sse({"error": {"message": "model crashed", "type": "invalid_request_error"}})
    server.script(Reply(pieces=[body]))
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, ProviderStreamError)
    assert (
        "model crashed" in str(outcome.error)
        and outcome.error.error_type == "invalid_request_error"
    )
