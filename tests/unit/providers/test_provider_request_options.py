"""`tool_choice` in each API's words, and `extra_body` merged into every request body."""

from __future__ import annotations

from loopback import Reply, openai_chunks, sse

from logician_kernel.providers._anthropic import AnthropicMessagesFormat
from logician_kernel.providers._http import merge_body
from logician_kernel.providers._openai import OpenAIChatFormat
from logician_kernel.types import ToolSpec

from .support import REQUEST, run_stream


def test_tool_choice_in_each_apis_words_and_only_with_tools() -> None:
    openai, anthropic = OpenAIChatFormat(), AnthropicMessagesFormat()
    words = {
        "auto": ("auto", {"type": "auto"}),
        "required": ("required", {"type": "any"}),
        "none": ("none", {"type": "none"}),
        # A name: `required` with that tool alone in Chat Completions (llama.cpp's server
        # takes the named object form for `auto`, silently).
        "read": ("required", {"type": "tool", "name": "read"}),
    }
    write = ToolSpec(name="write", description="Write a file.", parameters={"type": "object"})
    two = REQUEST.model_copy(update={"tools": [*REQUEST.tools, write]})
    offered = ["read", "write"]
    for choice, (chat, messages) in words.items():
        request = two.model_copy(update={"tool_choice": choice})
        body = openai.body(request, "m")
        assert body["tool_choice"] == chat
        names = [t["function"]["name"] for t in body["tools"]]
        assert names == (["read"] if choice == "read" else offered)
        assert anthropic.body(request, "m")["tool_choice"] == messages
    bare = REQUEST.model_copy(update={"tool_choice": "required", "tools": []})
    assert "tool_choice" not in openai.body(bare, "m")  # a summary request offers no tools
    assert "tool_choice" not in anthropic.body(bare, "m")
    assert "tool_choice" not in openai.body(REQUEST, "m")  # unset: the server's default


def test_extra_body_merges_tables_and_never_leaks_between_requests(server) -> None:
    extra = {
        "top_k": 20,
        "stream_options": {"continuous_usage_stats": True},
        "options": {"num_ctx": 8192},
    }
    body = {"model": "m", "stream_options": {"include_usage": True}}
    merged = merge_body(body, extra)
    assert merged["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert body == {"model": "m", "stream_options": {"include_usage": True}}  # not mutated
    server.script(*(Reply(pieces=[sse(*openai_chunks(text=["ok"]), done=True)]) for _ in range(2)))
    for _ in range(2):
        assert run_stream("openai", server, extra_body=extra).error is None
    first, second = (r.body for r in server.requests)
    assert first == second and first["top_k"] == 20 and first["options"] == {"num_ctx": 8192}
    assert extra == {
        "top_k": 20,
        "stream_options": {"continuous_usage_stats": True},
        "options": {"num_ctx": 8192},
    }
