"""The run-checkpoint reset: when to escalate, and the single continue-from-here message."""

from __future__ import annotations

import pytest

from logician_kernel.compaction import CHECKPOINT_HEADER, build_run_checkpoint, should_reset
from logician_kernel.types import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextPart(text=text)])


def long_run(steps: int) -> list[Message]:
    messages: list[Message] = [user("Port the CSV loader to polars")]
    for n in range(steps):
        messages.append(
            AssistantMessage(
                content=[
                    TextPart(text=f"step {n}"),
                    ToolCall(id=f"c{n}", name="run_cell", arguments={"code": f"step_{n}()"}),
                ]
            )
        )
        messages.append(
            ToolResultMessage(
                tool_call_id=f"c{n}", content=[TextPart(text=f"output {n} " + "x" * 5000)]
            )
        )
    messages.append(AssistantMessage(content=[TextPart(text="Loader ported; 2 tests left.")]))
    return messages


def test_should_reset() -> None:
    assert should_reset(3, 3, True)
    assert should_reset(4, 3, True)
    assert not should_reset(2, 3, True)
    assert not should_reset(5, 3, False)
    with pytest.raises(ValueError):
        should_reset(1, 0, True)


def test_checkpoint_is_one_message_with_every_section() -> None:
    messages = long_run(10)
    checkpoint = build_run_checkpoint(messages, task_state="- [x] port\n- [ ] tests")
    assert len(checkpoint) == 1
    (message,) = checkpoint
    assert isinstance(message, UserMessage)
    text = message.content[0].text  # type: ignore[union-attr]
    assert text.startswith(CHECKPOINT_HEADER)
    assert "Port the CSV loader to polars" in text
    assert "Loader ported; 2 tests left." in text
    assert "- [ ] tests" in text
    # the last five calls with their (clipped) results, not the earlier ones
    for n in range(5, 10):
        assert f"step_{n}()" in text and f"output {n}" in text
    assert "step_4()" not in text
    assert "characters omitted" in text
    assert len(text) < 15_000


def test_checkpoint_defaults_and_objective_override() -> None:
    messages: list[Message] = [user("Summary header stand-in")]
    text = build_run_checkpoint(messages, task_state=None, objective="Original goal")[0]
    body = text.content[0].text  # type: ignore[union-attr]
    assert "Original goal" in body
    assert "(no tool calls)" in body
    assert "(none recorded)" in body
    assert "## Last assistant message\n(none)" in body


def test_checkpoint_marks_calls_without_results() -> None:
    messages: list[Message] = [
        user("go"),
        AssistantMessage(content=[ToolCall(id="c", name="read", arguments={"path": "a"})]),
    ]
    body = build_run_checkpoint(messages, task_state="t")[0].content[0].text  # type: ignore[union-attr]
    assert "read(" in body and "(no result)" in body
