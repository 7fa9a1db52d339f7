"""The model-written summary that replaces older messages in a compaction.

`summarize` is the only function here that does I/O (one provider call); the session layer
decides when to call it and appends the resulting projection item. On failure it raises
`CompactionFailed` and the caller keeps the transcript as it was: compaction never loses
history.
"""

from __future__ import annotations

from collections.abc import Sequence

from logician_kernel.providers import Provider, ProviderError, complete
from logician_kernel.types.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    SystemMessage,
    TextPart,
    UserMessage,
)

from ._render import render_message
from .plan import split_for_compaction

SUMMARY_HEADER = "[Summary of the earlier conversation]"
"""First line of the user message that carries a summary into the projection."""
SUMMARY_ACKNOWLEDGEMENT = "Understood. I will continue from this summary."
"""The assistant reply paired with the summary message."""
DEFAULT_SUMMARY_MAX_TOKENS = 2_048
"""Default output cap of the summary call."""
SUMMARY_RESULT_CHARS = 4_000
"""Tool results longer than this are clipped (head and tail kept) in the summary request."""

SUMMARY_SYSTEM_PROMPT = """\
You are compacting the history of a coding agent's session so that the agent can continue \
with less context. Read the transcript the user sends and write a faithful, structured \
summary of it. Do not continue the conversation, do not call tools, and do not invent facts.

Use exactly these sections, as Markdown headings, writing "none" when a section is empty:
## Objective
What the user ultimately wants, in their own terms.
## Decisions
Choices made and why, including approaches that were tried and rejected.
## Files touched
Every file or notebook cell read, created or changed, with what changed.
## Open tasks
What remains to be done, in order.
## Key facts
Names, values, paths, commands, errors and results the agent will need again.
"""


class CompactionFailed(Exception):
    """The summary could not be produced; the transcript must be kept unchanged."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"compaction failed: {reason}")
        self.reason = reason
        """Why, for the user."""


def build_summary_request(
    older: Sequence[Message],
    *,
    focus: str | None = None,
    max_tokens: int = DEFAULT_SUMMARY_MAX_TOKENS,
) -> ModelRequest:
    """The request asking the model to summarise `older`.

    The messages are rendered as one plain-text transcript inside a single user message
    (not replayed as messages), so the request is valid whatever `older` starts or ends
    with, and the model is not tempted to carry on the conversation or call tools. Long tool
    results are clipped to `SUMMARY_RESULT_CHARS`. `focus` (from `%logician compact
    [focus]`) asks the summary to keep more detail on that subject.
    """
    transcript = "\n\n".join(
        render_message(message, result_limit=SUMMARY_RESULT_CHARS) for message in older
    )
    instruction = "Summarise the transcript above using the required sections."
    if focus and focus.strip():
        instruction += f"\nFocus: preserve as much detail as possible about {focus.strip()}."
    text = f"<transcript>\n{transcript}\n</transcript>\n\n{instruction}"
    return ModelRequest(
        messages=[
            SystemMessage(content=SUMMARY_SYSTEM_PROMPT),
            UserMessage(content=[TextPart(text=text)]),
        ],
        max_tokens=max_tokens,
    )


async def summarize(
    provider: Provider,
    older: Sequence[Message],
    *,
    focus: str | None = None,
    max_tokens: int = DEFAULT_SUMMARY_MAX_TOKENS,
) -> str:
    """Ask `provider` for a structured summary of `older` and return its text.

    Raises `CompactionFailed` when there is nothing to summarise, when the call raises any
    `ProviderError`, or when the model refuses or returns an empty summary.
    """
    if not older:
        raise CompactionFailed("nothing to compact")
    request = build_summary_request(older, focus=focus, max_tokens=max_tokens)
    try:
        response = await complete(provider, request)
    except ProviderError as error:
        raise CompactionFailed(f"the summary call failed: {error}") from error
    if response.stop_reason in ("refusal", "content_filter"):
        raise CompactionFailed(f"the model declined to summarise ({response.stop_reason})")
    summary = response.message.text.strip()
    if not summary:
        raise CompactionFailed("the model returned an empty summary")
    return summary


def compacted_messages(summary: str, recent: Sequence[Message]) -> list[Message]:
    """The new projection: the summary, then `recent` verbatim.

    The summary is a user message (`SUMMARY_HEADER` then the summary) answered by a short
    assistant acknowledgement. The pair keeps user/assistant alternation, which Anthropic
    requires, since `recent` starts with a user message (see `split_for_compaction`), and it
    never puts a summary in a system message, which some providers allow only first.
    """
    return [
        UserMessage(content=[TextPart(text=f"{SUMMARY_HEADER}\n{summary}")]),
        AssistantMessage(content=[TextPart(text=SUMMARY_ACKNOWLEDGEMENT)]),
        *recent,
    ]


async def compact(
    provider: Provider,
    messages: Sequence[Message],
    *,
    keep_recent_turns: int,
    focus: str | None = None,
    max_tokens: int = DEFAULT_SUMMARY_MAX_TOKENS,
) -> list[Message]:
    """Split, summarise and rebuild: the compacted projection of `messages`.

    Returns a new list and never mutates `messages`; raises `CompactionFailed` (nothing to
    compact, or the summary failed), in which case the caller keeps `messages` as they are.
    """
    older, recent = split_for_compaction(messages, keep_recent_turns)
    summary = await summarize(provider, older, focus=focus, max_tokens=max_tokens)
    return compacted_messages(summary, recent)
