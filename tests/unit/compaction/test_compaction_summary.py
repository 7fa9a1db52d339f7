"""The summary request, the summary call and its failure modes, and the new projection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import pytest

from logician_kernel.compaction import (
    SUMMARY_HEADER,
    CompactionFailed,
    build_summary_request,
    compact,
    compacted_messages,
)
from logician_kernel.loop.summarizer import summariser, summarize
from logician_kernel.providers import ContextLengthExceededError, ProviderError
from logician_kernel.types import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderEvent,
    StopReason,
    SystemMessage,
    TextDelta,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


class FakeProvider:
    """Answers every request with `reply`, or raises `error`; records the requests."""

    model = "fake-model"

    def __init__(
        self,
        reply: str = "## Objective\nShip it.",
        *,
        error: ProviderError | None = None,
        stop_reason: StopReason = "end_turn",
    ) -> None:
        self.reply = reply
        self.error = error
        self.stop_reason = stop_reason
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        yield TextDelta(text=self.reply)
        message = AssistantMessage(content=[TextPart(text=self.reply)] if self.reply else [])
        yield ModelResponse(message=message, stop_reason=self.stop_reason)

    async def aclose(self) -> None:
        pass


class SilentProvider(FakeProvider):
    """Ends its stream without a response: `complete` raises `IncompleteStreamError`."""

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        self.requests.append(request)
        yield TextDelta(text="partial")


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextPart(text=text)])


def conversation() -> list[Message]:
    return [
        user("Fix the failing parser test"),
        AssistantMessage(
            content=[
                TextPart(text="Reading the parser."),
                ToolCall(id="c1", name="read", arguments={"path": "parser.py"}),
            ]
        ),
        ToolResultMessage(tool_call_id="c1", content=[TextPart(text="def parse(): ...")]),
        AssistantMessage(content=[TextPart(text="The bug is an off-by-one.")]),
        user("Now run the tests"),
        AssistantMessage(content=[TextPart(text="All green.")]),
    ]


def test_request_holds_older_messages_and_focus() -> None:
    older = conversation()[:4]
    request = build_summary_request(older, focus="the parser bug", max_tokens=512)
    assert request.max_tokens == 512
    assert not request.tools
    system, prompt = request.messages
    assert isinstance(system, SystemMessage)
    for section in ("Objective", "Decisions", "Files touched", "Open tasks", "Key facts"):
        assert section in system.content
    assert isinstance(prompt, UserMessage)
    text = prompt.content[0].text  # type: ignore[union-attr]
    for needle in (
        "Fix the failing parser test",
        "Reading the parser.",
        '"path": "parser.py"',
        "def parse(): ...",
        "off-by-one",
        "the parser bug",
    ):
        assert needle in text
    assert "Focus" not in build_summary_request(older, focus=None).messages[1].content[0].text  # type: ignore[union-attr]


def test_request_clips_huge_tool_results() -> None:
    older = [
        AssistantMessage(content=[ToolCall(id="c", name="read")]),
        ToolResultMessage(tool_call_id="c", content=[TextPart(text="z" * 100_000)]),
    ]
    text = build_summary_request(older).messages[1].content[0].text  # type: ignore[union-attr]
    assert len(text) < 10_000
    assert "characters omitted" in text


def test_summarize_returns_the_text() -> None:
    provider = FakeProvider("  ## Objective\nFix it.  ")
    assert asyncio.run(summarize(provider, conversation()[:4])) == "## Objective\nFix it."
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    ("provider", "reason"),
    [
        (FakeProvider(error=ProviderError("boom", model="fake-model")), "boom"),
        (
            FakeProvider(
                error=ContextLengthExceededError("prompt is too long", status=400, detail="")
            ),
            "prompt is too long",
        ),
        (SilentProvider(), "without a response"),
        (FakeProvider("   "), "empty"),
        (FakeProvider("no", stop_reason="refusal"), "refusal"),
    ],
)
def test_summarize_failures_raise_compaction_failed(provider: FakeProvider, reason: str) -> None:
    with pytest.raises(CompactionFailed) as info:
        asyncio.run(summarize(provider, conversation()[:4]))
    assert reason in info.value.reason


def test_nothing_to_summarise() -> None:
    provider = FakeProvider()
    with pytest.raises(CompactionFailed, match="nothing to compact"):
        asyncio.run(summarize(provider, []))
    assert not provider.requests


def test_failed_compaction_leaves_the_transcript_untouched() -> None:
    transcript = conversation()
    before = list(transcript)
    provider = FakeProvider(error=ProviderError("server down"))
    projection = transcript
    try:
        projection = asyncio.run(compact(summariser(provider), transcript, keep_recent_turns=1))
    except CompactionFailed:
        pass  # the caller keeps what it had
    assert projection is transcript
    assert transcript == before


def test_compaction_replaces_older_and_keeps_recent_verbatim() -> None:
    transcript = conversation()
    provider = FakeProvider("## Objective\nFix the parser.")
    projection = asyncio.run(
        compact(summariser(provider), transcript, keep_recent_turns=1, focus="tests")
    )
    assert "tests" in provider.requests[0].messages[1].content[0].text  # type: ignore[union-attr]
    assert projection[2:] == transcript[4:]
    summary, ack = projection[:2]
    assert isinstance(summary, UserMessage) and isinstance(ack, AssistantMessage)
    assert summary.content[0].text == f"{SUMMARY_HEADER}\n## Objective\nFix the parser."  # type: ignore[union-attr]


def test_compacted_messages_with_nothing_recent() -> None:
    messages = compacted_messages("S", [])
    assert [m.kind for m in messages] == ["user", "assistant"]
