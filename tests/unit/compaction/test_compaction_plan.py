"""Where to cut: the last K turns stay verbatim and no tool call is parted from its result."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logician_kernel.compaction import should_compact, split_for_compaction
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


def say(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextPart(text=text)])


def calls(*ids: str) -> AssistantMessage:
    return AssistantMessage(content=[ToolCall(id=i, name="run") for i in ids])


def result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, content=[TextPart(text="ok")])


def test_should_compact() -> None:
    assert not should_compact(799, 1000, 0.8)
    assert should_compact(800, 1000, 0.8)
    with pytest.raises(ValueError):
        should_compact(1, 0, 0.8)
    with pytest.raises(ValueError):
        should_compact(1, 100, 1.0)


def test_keeps_last_k_turns_verbatim() -> None:
    messages: list[Message] = []
    for n in range(5):
        messages += [user(f"u{n}"), calls(f"c{n}"), result(f"c{n}"), say(f"a{n}")]
    older, recent = split_for_compaction(messages, 2)
    assert recent == messages[12:]
    assert older == messages[:12]


def test_nothing_to_compact() -> None:
    messages = [user("u0"), say("a0"), user("u1"), say("a1")]
    assert split_for_compaction(messages, 2) == ([], messages)
    assert split_for_compaction(messages, 5) == ([], messages)
    assert split_for_compaction([], 0) == ([], [])


def test_moves_cut_earlier_for_a_straddling_pair() -> None:
    # a user message interjected between a call and its result
    messages = [user("u0"), say("a0"), user("u1"), calls("c1"), user("u2"), result("c1")]
    older, recent = split_for_compaction(messages, 1)
    assert older == messages[:2]
    assert recent == messages[2:]


def test_keep_zero_compacts_everything() -> None:
    messages = [user("u0"), calls("c0"), result("c0"), say("a0")]
    assert split_for_compaction(messages, 0) == (messages, [])


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Random conversations: users, texts, multi-call assistants whose results arrive later,
    possibly after other messages (and some never arrive)."""
    messages: list[Message] = []
    pending: list[str] = []
    counter = 0
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["user", "say", "calls", "result", "result"]))
        if kind == "user":
            messages.append(user("u"))
        elif kind == "say":
            messages.append(say("a"))
        elif kind == "calls":
            ids = [f"c{counter + i}" for i in range(draw(st.integers(1, 3)))]
            counter += len(ids)
            pending += ids
            messages.append(calls(*ids))
        elif pending:
            call_id = pending.pop(draw(st.integers(0, len(pending) - 1)))
            messages.append(result(call_id))
    return messages


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(0, 6))
def test_split_never_separates_a_call_from_its_result(messages: list[Message], keep: int) -> None:
    older, recent = split_for_compaction(messages, keep)
    assert older + recent == messages
    older_calls = {c.id for m in older if isinstance(m, AssistantMessage) for c in m.tool_calls}
    recent_results = {m.tool_call_id for m in recent if isinstance(m, ToolResultMessage)}
    assert not older_calls & recent_results
    if older and recent:
        assert isinstance(recent[0], UserMessage)
    # the last `keep` turns are always kept verbatim
    starts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    if keep and len(starts) >= keep:
        assert len(recent) >= len(messages) - starts[-keep]
