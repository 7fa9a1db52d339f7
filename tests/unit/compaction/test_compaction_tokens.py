"""Token estimates: monotone in content, and anchored on reported usage when present."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from logician_kernel.compaction import estimate_tokens, estimate_total
from logician_kernel.compaction.tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS
from logician_kernel.types import (
    AssistantMessage,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextPart(text=text)])


def test_chars_over_four_plus_overhead() -> None:
    assert estimate_tokens(user("")) == MESSAGE_OVERHEAD_TOKENS
    assert estimate_tokens(user("abcd")) == MESSAGE_OVERHEAD_TOKENS + 1
    assert estimate_tokens(user("abcde")) == MESSAGE_OVERHEAD_TOKENS + 2
    assert estimate_tokens(SystemMessage(content="x" * 400)) == MESSAGE_OVERHEAD_TOKENS + 100


def test_tool_calls_results_and_images_count() -> None:
    call = AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={"path": "a" * 400})])
    assert estimate_tokens(call) > 100
    result = ToolResultMessage(tool_call_id="c1", content=[TextPart(text="y" * 800)])
    assert estimate_tokens(result) > 200
    image = UserMessage(content=[ImagePart(media_type="image/png", data="A" * 10)])
    assert estimate_tokens(image) == MESSAGE_OVERHEAD_TOKENS + IMAGE_TOKENS


@given(st.text(max_size=200), st.text(max_size=200))
def test_estimate_is_monotone(a: str, b: str) -> None:
    assert estimate_tokens(user(a + b)) >= estimate_tokens(user(a))
    messages = [user(a), AssistantMessage(content=[TextPart(text=b)])]
    assert estimate_total(messages + [user(b)]) >= estimate_total(messages)


def test_total_prefers_reported_usage_and_estimates_the_rest() -> None:
    history = [user("q" * 4000), AssistantMessage(content=[TextPart(text="a" * 40)])]
    tail = ToolResultMessage(tool_call_id="c", content=[TextPart(text="r" * 40)])
    reported = Usage(input_tokens=5_000, output_tokens=20)
    assert estimate_total(history, reported) == 5_020
    assert estimate_total([*history, tail], reported) == 5_020 + estimate_tokens(tail)


def test_total_falls_back_to_estimates() -> None:
    history = [user("q" * 40), AssistantMessage(content=[TextPart(text="a" * 40)])]
    estimated = sum(estimate_tokens(m) for m in history)
    assert estimate_total(history) == estimated
    assert estimate_total(history, Usage()) == estimated  # server reported nothing
    assert estimate_total(history[:1], Usage(input_tokens=99)) == estimate_tokens(history[0])
