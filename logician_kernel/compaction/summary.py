"""The model-written summary that replaces older messages in a compaction.

Pure: the request to send (`build_summary_request`) and the projection built from the answer
(`compacted_messages`). The model is called where the architecture calls it, in `loop/`
(`loop.summarizer`), which hands `compact` a `Summariser`. On failure `CompactionFailed` is
raised and the caller keeps the transcript as it was: compaction never loses history.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

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


Summariser = Callable[[Sequence[Message], "str | None"], Awaitable[str]]
"""`summarise(older, focus)`: the summary text of `older`; raises `CompactionFailed`."""


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
    summarise: Summariser,
    messages: Sequence[Message],
    *,
    keep_recent_turns: int,
    focus: str | None = None,
) -> list[Message]:
    """Split, summarise and rebuild: the compacted projection of `messages`.

    Returns a new list and never mutates `messages`; raises `CompactionFailed` (nothing to
    compact, or the summary failed), in which case the caller keeps `messages` as they are.
    """
    older, recent = split_for_compaction(messages, keep_recent_turns)
    if not older:
        raise CompactionFailed("nothing to compact")
    summary = await summarise(older, focus)
    return compacted_messages(summary, recent)
