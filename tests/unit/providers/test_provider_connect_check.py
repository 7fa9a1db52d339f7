"""`check_server`, the one request behind *Connect a model*: the provider's own headers
(Anthropic's `x-api-key` and version), Ollama's `/api/tags` where `/models` is missing, and a
failure naming the field to fix without the key."""

from __future__ import annotations

import pytest
from loopback import LoopbackServer

from logician_kernel.providers import ConnectRefused, check_server

KEY = "sk-ant-check-0a1b2c3d4e5f"


def test_anthropic_is_asked_its_v1_models_with_its_own_headers() -> None:
    with LoopbackServer() as server:
        server.require_key = KEY
        server.route("GET", "/v1/models", {"data": [{"id": "claude-x"}]})
        base, names = check_server("anthropic", server.url, KEY)
        assert (base, names) == (server.url, ["claude-x"])
        (asked,) = server.metadata_requests
        assert asked.headers["x-api-key"] == KEY and asked.headers["anthropic-version"]
        assert "authorization" not in asked.headers


def test_ollama_answers_with_its_tags_where_models_is_missing() -> None:
    with LoopbackServer() as server:
        server.route("GET", "/api/tags", {"models": [{"name": "qwen2.5-coder:7b"}]})
        assert check_server("openai", f"{server.url}/v1", None)[1] == ["qwen2.5-coder:7b"]
        assert "authorization" not in server.metadata_requests[0].headers  # no key, none sent


def test_a_server_that_is_not_an_api_is_refused_on_the_base_url() -> None:
    with LoopbackServer() as server:
        with pytest.raises(ConnectRefused) as refused:
            check_server("openai", server.url, KEY)  # the /v1 left out
        assert refused.value.field == "base_url" and "usually ends in /v1" in str(refused.value)
        assert KEY not in str(refused.value)
