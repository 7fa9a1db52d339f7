"""What local servers say about themselves and what they refuse, over a real loopback socket:
context-window discovery, servers without tools or streaming, whole replies, known prices."""

from __future__ import annotations

from types import SimpleNamespace

import httpx
import pytest
from loopback import LoopbackServer, Reply, sse, vllm_models

from logician_kernel.policy.run_budget import RunBudget
from logician_kernel.providers import (
    DEFAULT_CONTEXT_WINDOW,
    BadRequestError,
    ProviderStreamError,
    known_model,
    resolve_context_window,
)
from logician_kernel.types import ModelResponse, ReasoningDelta, ToolCall, Usage
from logician_kernel.types.run import RunBudgetLimits

from .support import REQUEST, run_stream


def window(server: LoopbackServer | None, name: str = "loop-model", **settings: object):
    base = {
        "provider": "openai",
        "name": name,
        "context_window": None,
        "base_url": server.url + "/v1" if server else None,
        **settings,
    }
    with httpx.Client(timeout=2, trust_env=False) as client:
        return resolve_context_window(SimpleNamespace(**base), client=client)


def test_vllm_max_model_len_from_v1_models(server: LoopbackServer) -> None:
    """vLLM's `/v1/models` cards carry `max_model_len` (the `--max-model-len` it serves)."""
    server.route("GET", "/v1/models", vllm_models("loop-model", 4096))
    assert (window(server).tokens, window(server).source) == (4096, "server")


def test_llama_cpp_props_n_ctx_beats_n_ctx_train(server: LoopbackServer) -> None:
    """llama-server lists its one model with `meta.n_ctx_train` whatever name is asked, and
    `/props` gives the `-c` it was started with (tools/server/README.md)."""
    server.route(
        "GET",
        "/v1/models",
        {
            "object": "list",
            "data": [
                {"id": "qwen2.5-7b-q4_k_m.gguf", "object": "model", "meta": {"n_ctx_train": 32768}}
            ],
        },
    )
    assert window(server, "local").tokens == 32768
    server.route("GET", "/props", {"default_generation_settings": {"n_ctx": 8192}})
    assert window(server, "local").tokens == 8192


def test_ollama_api_show(server: LoopbackServer) -> None:
    """Ollama's `/v1/models` says nothing of the window; `POST /api/show` has the model's
    `<arch>.context_length`, and an explicit `num_ctx` parameter wins (docs/api.md)."""
    server.route(
        "GET",
        "/v1/models",
        {"object": "list", "data": [{"id": "qwen3:8b", "object": "model", "owned_by": "library"}]},
    )
    show = {"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}}
    server.route("POST", "/api/show", show)
    assert window(server, "qwen3:8b").tokens == 40960
    server.route("POST", "/api/show", {**show, "parameters": "stop <|im_end|>\nnum_ctx 16384"})
    assert window(server, "qwen3:8b").tokens == 16384
    assert server.requests == []  # metadata never takes a scripted model reply


def test_config_then_table_then_default() -> None:
    assert window(None, "gpt-4o", context_window=5000).source == "config"
    assert window(None, "claude-sonnet-4-5-20250929").tokens == 200_000
    assert window(None, "gpt-4.1-mini-2025-04-14").tokens == 1_047_576
    assert window(None, "gpt-4o-mini").tokens == 128_000
    unknown = window(None, "my-finetune")
    assert (unknown.tokens, unknown.source) == (DEFAULT_CONTEXT_WINDOW, "default")


def test_a_server_that_says_nothing_falls_back_to_the_table(server: LoopbackServer) -> None:
    assert window(server, "gpt-4o").source == "table"  # an OpenAI-compatible proxy


def test_known_prices_cost_a_run_and_configuration_overrides_them() -> None:
    budget = RunBudget(RunBudgetLimits(), model="claude-sonnet-4-5")
    budget.record_usage(Usage(input_tokens=1_000_000, output_tokens=100_000))
    assert budget.cost_usd == pytest.approx(3.0 + 1.5)
    mine = SimpleNamespace(input_per_mtok=1.0, output_per_mtok=1.0)
    budget = RunBudget(
        RunBudgetLimits(), prices={"claude-sonnet-4-5": mine}, model="claude-sonnet-4-5"
    )
    budget.record_usage(Usage(input_tokens=1_000_000, output_tokens=1_000_000))
    assert budget.cost_usd == pytest.approx(2.0)
    assert known_model("llama3") is None


def test_llama_cpp_without_jinja_names_the_flag_and_is_not_retried(server) -> None:
    """llama-server without `--jinja` answers tool requests with HTTP 500 "tools param
    requires --jinja flag" (defilantech/LLMKube#126, containers/ramalama#988)."""
    server.script(
        Reply.error(
            500,
            {
                "error": {
                    "code": 500,
                    "type": "server_error",
                    "message": "tools param requires --jinja flag",
                }
            },
        )
    )
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, BadRequestError) and not outcome.error.retryable
    assert "--jinja" in str(outcome.error) and "restart it" in str(outcome.error)
    assert len(server.requests) == 1


def test_ollama_model_without_tools_names_the_fix(server) -> None:
    """Ollama refuses tools for a model whose template has none: HTTP 400
    `registry.ollama.ai/library/gemma:2b does not support tools` (ollama/ollama#5796)."""
    server.script(
        Reply.error(
            400,
            {
                "error": {
                    "message": "registry.ollama.ai/library/gemma:2b does not support tools",
                    "type": "api_error",
                }
            },
        )
    )
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, BadRequestError)
    assert "no tool support" in str(outcome.error) and "ollama pull" in str(outcome.error)


def test_cannot_use_tools_with_stream_points_at_stream_false(server) -> None:
    """Some proxies refuse inside the stream: an error chunk "Cannot use tools with stream"."""
    server.script(Reply(pieces=[sse({"error": {"message": "Cannot use tools with stream"}})]))
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, ProviderStreamError) and not outcome.error.retryable
    assert "`stream = false`" in str(outcome.error)


def test_stream_false_sends_no_stream_and_decodes_the_whole_reply(server) -> None:
    whole = {
        "id": "chatcmpl-w",
        "object": "chat.completion",
        "model": "loop-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Reading.",
                    "reasoning": "Need the file.",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 8},
    }
    server.script(Reply.error(200, whole))
    outcome = run_stream("openai", server, stream=False)
    assert outcome.error is None
    body = server.requests[0].body
    assert body["stream"] is False and "stream_options" not in body
    assert any(isinstance(e, ReasoningDelta) for e in outcome.events)
    response = outcome.events[-1]
    assert isinstance(response, ModelResponse) and response.message.text == "Reading."
    assert response.message.tool_calls == [
        ToolCall(id="c1", name="read", arguments={"path": "a.txt"})
    ]
    assert response.usage == Usage(input_tokens=12, output_tokens=8)


def test_anthropic_thinking_budget_and_a_whole_reply(server) -> None:
    reply = {
        "id": "msg_w",
        "type": "message",
        "model": "loop-claude",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Plan.", "signature": "s1"},
            {"type": "text", "text": "Done."},
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 9, "output_tokens": 4},
    }
    server.script(Reply.error(200, reply))
    request = REQUEST.model_copy(update={"temperature": 0.3})
    outcome = run_stream("anthropic", server, request, stream=False, thinking_budget_tokens=2048)
    assert outcome.error is None, outcome.error
    body = server.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048 and "temperature" not in body and body["stream"] is False
    response = outcome.events[-1]
    assert response.message.text == "Done." and response.usage.output_tokens == 4
    assert [e.text for e in outcome.events if isinstance(e, ReasoningDelta)] == ["Plan."]


def test_vllm_without_auto_tool_choice_names_the_flags(server) -> None:
    """vLLM rejects `tool_choice: auto` unless started with `--enable-auto-tool-choice` and a
    `--tool-call-parser` (docs.vllm.ai, "Tool Calling")."""
    message = (
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    )
    server.script(Reply.error(400, {"object": "error", "message": message, "code": 400}))
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, BadRequestError)
    assert "restart `vllm serve` with `--enable-auto-tool-choice" in str(outcome.error)
