"""Anthropic Messages over a real loopback socket."""

from __future__ import annotations

import json

from loopback import Reply, anthropic_events, split_every, sse

from logician_kernel.providers import IncompleteStreamError, ProviderStreamError, RetryPolicy
from logician_kernel.types import (
    AssistantMessage,
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


def body(*events) -> bytes:
    return sse(*events, event_names=True)


def test_text_split_at_every_byte_with_crlf_line_ends(server) -> None:
    raw = body(*anthropic_events(text=["Bon", "jour ", "✓"])).replace(b"\n", b"\r\n")
    server.script(Reply(pieces=split_every(raw, 1)))
    outcome = run_stream("anthropic", server)
    assert outcome.error is None
    assert kinds(outcome.events) == ["text_delta"] * 3 + ["usage", "response"]
    response = outcome.events[-1]
    assert isinstance(response, ModelResponse)
    assert response.message == AssistantMessage(content=[TextPart(text="Bonjour ✓")])
    assert response.usage == Usage(input_tokens=21, output_tokens=9)
    assert (response.stop_reason, response.model, response.response_id) == (
        "end_turn",
        "loop-claude",
        "msg_1",
    )


def test_request_shape_and_headers(server) -> None:
    server.script(Reply(pieces=[body(*anthropic_events(text=["ok"]))]))
    assert (
        run_stream("anthropic", server, REQUEST.model_copy(update={"stop": ["END"]})).error is None
    )
    (received,) = server.requests
    assert received.path == "/v1/messages"
    assert received.headers["x-api-key"] == KEY
    assert received.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in received.headers
    assert received.body == {
        "model": "loop-model",
        "max_tokens": 4096,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        "stream": True,
        "tools": [
            {
                "name": "read",
                "description": "Read a file.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        ],
        "stop_sequences": ["END"],
    }


def test_tool_use_input_spread_over_many_deltas_and_sent_back(server) -> None:
    arguments = json.dumps({"path": "notes/été.md", "limit": 40})
    fragments = [arguments[i : i + 2] for i in range(0, len(arguments), 2)]
    events = anthropic_events(
        text=["Looking."], tool=("toolu_1", "read", fragments), stop_reason="tool_use"
    )
    server.script(
        Reply(pieces=split_every(body(*events), 5)),
        Reply(pieces=[body(*anthropic_events(text=["done"]))]),
    )
    outcome = run_stream("anthropic", server)
    assert outcome.error is None
    deltas = [e for e in outcome.events if isinstance(e, ToolCallArgumentsDelta)]
    assert "".join(d.delta for d in deltas) == arguments and len(deltas) == len(fragments)
    call = ToolCall(id="toolu_1", name="read", arguments={"path": "notes/été.md", "limit": 40})
    response = outcome.events[-1]
    assert response.stop_reason == "tool_use"
    assert response.message.content == [TextPart(text="Looking."), call]

    results = [
        ToolResultMessage(tool_call_id="toolu_1", content=[TextPart(text="# Notes")]),
        UserMessage(content=[TextPart(text="Summarise.")]),
    ]
    follow_up = ModelRequest(messages=[*REQUEST.messages, response.message, *results])
    assert run_stream("anthropic", server, follow_up).error is None
    assert server.requests[1].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": call.arguments},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "# Notes"}],
                    "is_error": False,
                },
                {"type": "text", "text": "Summarise."},
            ],
        },
    ]


def test_stream_without_message_stop_is_incomplete(server) -> None:
    server.script(Reply(pieces=[body(*anthropic_events(text=["half"], stop=False))]))
    outcome = run_stream("anthropic", server, retry=RetryPolicy(max_retries=0))
    assert isinstance(outcome.error, IncompleteStreamError)
    assert "ended before message_stop" in str(outcome.error)


def test_mid_stream_disconnect_keeps_what_arrived(server) -> None:
    events = anthropic_events(text=["one ", "two"], stop=False)[:-1]
    server.script(Reply(pieces=split_every(body(*events), 30), end="disconnect"))
    outcome = run_stream("anthropic", server)
    assert kinds(outcome.events) == ["text_delta", "text_delta"]
    assert isinstance(outcome.error, IncompleteStreamError) and len(server.requests) == 1


def test_overloaded_error_event_before_output_is_retried(server) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    server.script(
        Reply(
            pieces=[
                body(
                    {"type": "message_start", "message": {"id": "m"}}, {"type": "ping"}, overloaded
                )
            ]
        ),
        Reply(pieces=[body(*anthropic_events(text=["fine"]))]),
    )
    outcome = run_stream("anthropic", server)
    assert outcome.error is None and outcome.sleeps == [0.25]
    assert kinds(outcome.events) == ["retry", "text_delta", "usage", "response"]
    assert "overloaded_error" in outcome.events[0].reason


def test_invalid_request_error_event_is_not_retried(server) -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    server.script(Reply(pieces=[body(error)]))
    outcome = run_stream("anthropic", server)
    assert isinstance(outcome.error, ProviderStreamError) and len(server.requests) == 1
