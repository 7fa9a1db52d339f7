"""`ChatStreamDecoder` fed the chunk sequences real servers are documented to send.

One test per quirk; each docstring names the server and where its behaviour is recorded. The
decoder is pure, so these run without a socket; the loopback kernel tests cover the wire.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from logician_kernel.loop._tool_calls import refusal
from logician_kernel.providers import IncompleteStreamError, SSEEvent
from logician_kernel.providers._anthropic import MessagesStreamDecoder, encode_messages
from logician_kernel.providers._openai import ChatStreamDecoder
from logician_kernel.types import (
    AssistantMessage,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolCallFinished,
    UserMessage,
)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}}
    if finish is not None:
        choice["finish_reason"] = finish
    return {"id": "chatcmpl-q", "model": "m", "choices": [choice]}


def calls(*tool_calls: dict[str, Any]) -> dict[str, Any]:
    return chunk({"tool_calls": list(tool_calls)})


def decode(*chunks: dict[str, Any], done: bool = True) -> ModelResponse:
    decoder = ChatStreamDecoder("m")
    events = []
    for payload in chunks:
        events += decoder.feed(SSEEvent(data=json.dumps(payload)))
    events += decoder.feed(SSEEvent(data="[DONE]")) if done else decoder.finish()
    assert decoder.done
    response = events[-1]
    assert isinstance(response, ModelResponse)
    finished = [e.call for e in events if isinstance(e, ToolCallFinished)]
    assert finished == response.message.tool_calls  # every call is announced exactly once
    return response


def read(call_id: str, path: str) -> ToolCall:
    return ToolCall(id=call_id, name="read", arguments={"path": path})


def test_ollama_parallel_calls_all_at_index_zero_stay_two_calls() -> None:
    """Ollama's OpenAI endpoint sends every parallel call with `index: 0`, each whole in its
    own chunk with its own id, then `finish_reason: "stop"` (ollama/ollama#15457, #15497)."""
    response = decode(
        calls(
            {
                "id": "call_a",
                "index": 0,
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
            }
        ),
        calls(
            {
                "id": "call_b",
                "index": 0,
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"b.txt"}'},
            }
        ),
        chunk(finish="stop"),
    )
    assert response.message.tool_calls == [read("call_a", "a.txt"), read("call_b", "b.txt")]
    assert response.stop_reason == "tool_use"


def test_ollama_index_zero_without_ids_splits_on_a_fresh_name() -> None:
    """Older Ollama builds sent no id at all (ollama/ollama#7881); a second whole call at the
    same index still starts a new call once the first one's arguments are complete."""
    response = decode(
        calls({"index": 0, "function": {"name": "read", "arguments": '{"path":"a.txt"}'}}),
        calls({"index": 0, "function": {"name": "read", "arguments": '{"path":"b.txt"}'}}),
        chunk(finish="stop"),
    )
    assert [c.arguments for c in response.message.tool_calls] == [
        {"path": "a.txt"},
        {"path": "b.txt"},
    ]
    assert len({c.id for c in response.message.tool_calls}) == 2


def test_empty_string_id_on_continuations_is_absent() -> None:
    """DashScope (Qwen) repeats `id: ""` on every continuation delta of a call
    (anomalyco/opencode#40969, symfony/ai#2220)."""
    response = decode(
        calls(
            {
                "id": "call_q",
                "index": 0,
                "type": "function",
                "function": {"name": "read", "arguments": ""},
            }
        ),
        calls({"id": "", "index": 0, "type": "function", "function": {"arguments": '{"path": '}}),
        calls({"id": "", "index": 0, "type": "function", "function": {"arguments": '"a.txt"}'}}),
        chunk(finish="tool_calls"),
    )
    assert response.message.tool_calls == [read("call_q", "a.txt")]


def test_continuations_without_index_or_id_join_the_last_open_call() -> None:
    """Some proxies drop both `index` and `id` after the first delta of a call
    (anomalyco/opencode#37783); the fragments belong to the call still open."""
    response = decode(
        calls({"id": "call_1", "function": {"name": "read", "arguments": '{"pa'}}),
        calls({"function": {"arguments": 'th": "a.txt"}'}}),
        calls({"id": "call_2", "function": {"name": "read", "arguments": ""}}),
        calls({"id": "", "function": {"arguments": '{"path": "b.txt"}'}}),
        chunk(finish="tool_calls"),
    )
    assert response.message.tool_calls == [read("call_1", "a.txt"), read("call_2", "b.txt")]


def test_openai_interleaved_indices_with_type_and_name_only_first() -> None:
    """OpenAI streams parallel calls by `index`, with `id`, `type` and `name` only on each
    call's first delta (platform.openai.com, "Streaming" in the function-calling guide)."""
    response = decode(
        calls(
            {
                "index": 0,
                "id": "c0",
                "type": "function",
                "function": {"name": "read", "arguments": ""},
            }
        ),
        calls(
            {
                "index": 1,
                "id": "c1",
                "type": "function",
                "function": {"name": "read", "arguments": ""},
            }
        ),
        calls({"index": 0, "function": {"arguments": '{"path": "a.txt"}'}}),
        calls({"index": 1, "function": {"arguments": '{"path": "b.txt"}'}}),
        chunk(finish="tool_calls"),
    )
    assert response.message.tool_calls == [read("c0", "a.txt"), read("c1", "b.txt")]


def test_arguments_sent_as_a_json_object() -> None:
    """LiteLLM's Ollama bridge and some local servers send `arguments` as an object rather
    than a JSON string (BerriAI/litellm#37792)."""
    response = decode(
        calls({"index": 0, "id": "c", "function": {"name": "read", "arguments": {"path": "x"}}}),
        chunk(finish="tool_calls"),
    )
    assert response.message.tool_calls == [read("c", "x")]


def test_tool_calls_then_done_without_finish_reason() -> None:
    """llama.cpp and vLLM proxies have been seen closing with `[DONE]` and no finish_reason
    after tool calls; the calls decide the reply, not the finish_reason."""
    response = decode(
        calls({"index": 0, "id": "c", "function": {"name": "read", "arguments": '{"path":"x"}'}})
    )
    assert response.message.tool_calls == [read("c", "x")]
    assert response.stop_reason == "tool_use"


def test_text_only_without_finish_reason_is_still_incomplete() -> None:
    """Without calls, a body that ends with no finish_reason lost its end: retry, do not guess."""
    with pytest.raises(IncompleteStreamError):
        decode(chunk({"content": "cut"}), done=False)


def test_concatenated_arguments_are_invalid_not_empty() -> None:
    """Before this decoder, Ollama's two calls became one call with `{"path":"a.txt"}{"path":
    "b.txt"}`, silently `{}`. Arguments that do not parse are kept, and the model is told."""
    response = decode(
        calls(
            {
                "index": 0,
                "id": "c",
                "function": {"name": "read", "arguments": '{"path":"a.txt"}{"path":'},
            }
        ),
        chunk(finish="tool_calls"),
    )
    (call,) = response.message.tool_calls
    assert call.arguments == {} and call.invalid_arguments == '{"path":"a.txt"}{"path":'
    reason = refusal(call, object(), {"read": object()})  # type: ignore[arg-type]
    assert reason is not None and "did not run" in reason
    assert "not valid JSON: Extra data" in reason and '{"path":"a.txt"}{"path":' in reason


def test_refusal_shows_the_first_200_characters() -> None:
    raw = '{"content": "' + "x" * 500
    call = ToolCall(id="c", name="write", invalid_arguments=raw)
    reason = refusal(call, object(), {"write": object()})  # type: ignore[arg-type]
    assert reason is not None and f"{raw[:200]}'..." in reason and raw[:201] not in reason
    assert "(513 characters; the first 200 shown)" in reason


# --- reasoning ------------------------------------------------------------------------------


def reasoning_of(*chunks: dict[str, Any]) -> tuple[str, ModelResponse]:
    decoder = ChatStreamDecoder("m")
    events = []
    for payload in chunks:
        events += decoder.feed(SSEEvent(data=json.dumps(payload)))
    events += decoder.feed(SSEEvent(data="[DONE]"))
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == events[-1].message.text
    return thought, events[-1]


def test_vllm_08_and_deepseek_reasoning_content() -> None:
    """vLLM <= 0.8 and DeepSeek stream thinking in `delta.reasoning_content`, with `content`
    null until the answer starts (docs.vllm.ai "Reasoning Outputs")."""
    thought, response = reasoning_of(
        chunk({"role": "assistant", "reasoning_content": "Let me ", "content": None}),
        chunk({"reasoning_content": "think.", "content": None}),
        chunk({"content": "Four."}),
        chunk(finish="stop"),
    )
    assert thought == "Let me think." and response.message.content == [TextPart(text="Four.")]


def test_vllm_09_and_ollama_reasoning() -> None:
    """vLLM >= 0.9 renamed the field `reasoning` (vllm-project/vllm#34030 keeps the old name
    too, so both may carry the same text); Ollama's OpenAI endpoint says `reasoning`."""
    thought, response = reasoning_of(
        chunk({"reasoning": "Hmm.", "reasoning_content": "Hmm."}),
        chunk({"reasoning": " Yes."}),
        chunk({"content": "Yes."}),
        chunk(finish="stop"),
    )
    assert thought == "Hmm. Yes." and response.message.text == "Yes."


def test_think_tags_inline_split_across_chunks() -> None:
    """Reasoning models served without a reasoning parser (llama-server without
    `--reasoning-format`, vLLM without `--reasoning-parser`) write `<think>…</think>` into
    `content`; the tags arrive cut anywhere."""
    body = "<think>\nI should add.\n</think>\n\n2 + 2 = 4, not <think> air."
    thought, response = reasoning_of(
        *[chunk({"content": body[i : i + 3]}) for i in range(0, len(body), 3)],
        chunk(finish="stop"),
    )
    assert thought == "\nI should add.\n"
    assert response.message.text == "2 + 2 = 4, not <think> air."


def test_reasoning_counts_toward_an_estimated_usage() -> None:
    """Servers that report no usage (no `stream_options.include_usage` support) get an
    estimate, flagged as one, and the reasoning is part of the output it estimates."""
    _, response = reasoning_of(
        chunk({"reasoning": "x" * 400}), chunk({"content": "ok"}), chunk(finish="stop")
    )
    assert response.usage_estimated and response.usage.output_tokens == 101


def test_usage_repeated_on_every_chunk_takes_the_last_report() -> None:
    """vLLM with `continuous_usage_stats` sends cumulative usage on every chunk."""
    _, response = reasoning_of(
        {**chunk({"content": "a"}), "usage": {"prompt_tokens": 9, "completion_tokens": 1}},
        {**chunk({"content": "b"}), "usage": {"prompt_tokens": 9, "completion_tokens": 2}},
        {**chunk(finish="stop"), "usage": {"prompt_tokens": 9, "completion_tokens": 3}},
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 3)
    assert not response.usage_estimated


def test_a_whole_reply_decodes_like_a_stream() -> None:
    """`stream = false`: the server answers one `chat.completion` object, tool calls without
    an index (platform.openai.com, the chat completion object)."""
    decoder = ChatStreamDecoder("m")
    events = decoder.whole(
        {
            "id": "chatcmpl-w",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "reasoning_content": "Both.",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                            },
                            {
                                "id": "c2",
                                "type": "function",
                                "function": {"name": "read", "arguments": '{"path": "b.txt"}'},
                            },
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 6},
        }
    )
    assert decoder.done and isinstance(events[0], ReasoningDelta)
    assert events[-1].message.tool_calls == [read("c1", "a.txt"), read("c2", "b.txt")]


# --- Anthropic thinking ---------------------------------------------------------------------


def anthropic(*events: dict[str, Any]) -> list[Any]:
    decoder = MessagesStreamDecoder("claude")
    out = []
    for payload in events:
        out += decoder.feed(SSEEvent(data=json.dumps(payload), event=payload["type"]))
    return out


def test_anthropic_thinking_is_streamed_kept_signed_and_sent_back_only_with_tool_use() -> None:
    """Extended thinking streams `thinking_delta`s then a `signature_delta`; the signed block
    must be passed back unchanged in a tool-use turn (docs.anthropic.com, "Extended
    thinking": preserving thinking blocks)."""
    events = anthropic(
        {"type": "message_start", "message": {"id": "msg", "usage": {"input_tokens": 10}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Read it."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "sig=="},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "tu", "name": "read", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"path": "a"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 40},
        },
        {"type": "message_stop"},
    )
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Read it."]
    message = events[-1].message
    assert message.text == "" and message.content[0] == ThinkingPart(
        text="Read it.", signature="sig=="
    )
    _, wire = encode_messages([UserMessage(content=[TextPart(text="go")]), message])
    assert wire[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Read it.",
        "signature": "sig==",
    }
    answer = AssistantMessage(content=[message.content[0], TextPart(text="Done.")])
    _, wire = encode_messages([UserMessage(content=[TextPart(text="go")]), answer])
    assert wire[1]["content"] == [{"type": "text", "text": "Done."}]
