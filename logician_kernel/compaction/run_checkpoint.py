"""The run checkpoint: a reset to one "continue from here" message when compaction alone
does not keep the context within budget. Pure functions; the session layer appends the
result as a `compaction` projection item, so the full history stays in the ledger.
"""

from __future__ import annotations

from collections.abc import Sequence

from logician_kernel.types.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolResultMessage,
    UserMessage,
    without_notebook_context,
)

from ._render import call_text, clip, parts_text

CHECKPOINT_HEADER = "[Continue from here]"
"""First line of a run-checkpoint message."""
DEFAULT_EVIDENCE_CALLS = 5
"""How many of the most recent tool calls are kept as evidence."""
DEFAULT_RESULT_CHARS = 2_000
"""Each evidence result is clipped to about this many characters."""
DEFAULT_TEXT_CHARS = 8_000
"""The objective and the last assistant message are clipped to about this many characters."""


def should_reset(
    compactions_so_far: int, max_compactions_before_checkpoint: int, still_over_threshold: bool
) -> bool:
    """Whether to reset to a run checkpoint instead of compacting again: the projection is
    still over the threshold and the thread has already been compacted
    `max_compactions_before_checkpoint` times or more."""
    if max_compactions_before_checkpoint < 1:
        raise ValueError(
            "max_compactions_before_checkpoint must be >= 1, "
            f"got {max_compactions_before_checkpoint}"
        )
    return still_over_threshold and compactions_so_far >= max_compactions_before_checkpoint


def _user_text(message: UserMessage) -> str:
    # the objective is what the user asked, not the notebook as it was when they asked
    return without_notebook_context(parts_text(message.content)).strip()


def _evidence(messages: Sequence[Message], limit: int, result_chars: int) -> list[str]:
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    calls = [
        call
        for message in messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
    ]
    lines = []
    for call in calls[-limit:] if limit > 0 else []:
        result = results.get(call.id)
        if result is None:
            outcome = "(no result)"
        else:
            status = "error" if result.is_error else "ok"
            outcome = f"({status})\n{clip(parts_text(result.content), result_chars)}"
        lines.append(f"- {call_text(call)} -> {outcome}")
    return lines


def build_run_checkpoint(
    messages: Sequence[Message],
    *,
    task_state: str | None,
    objective: str | None = None,
    evidence_calls: int = DEFAULT_EVIDENCE_CALLS,
    result_chars: int = DEFAULT_RESULT_CHARS,
    text_chars: int = DEFAULT_TEXT_CHARS,
) -> list[Message]:
    """Exactly one user message, starting with `CHECKPOINT_HEADER`, holding:

    - the original objective: `objective` when given, else the text of the first user
      message in `messages` (pass the full ledger history, or `objective`, when the
      projection's first message is already a summary);
    - recent tool evidence: the last `evidence_calls` tool calls with their results, each
      clipped to `result_chars`;
    - the text of the last assistant message that has any;
    - the current task state (e.g. the rendered todo list), or "(none recorded)".
    """
    if objective is None:
        first = next((m for m in messages if isinstance(m, UserMessage)), None)
        objective = _user_text(first) if first is not None else ""
    last_answer = next(
        (
            m.text.strip()
            for m in reversed(messages)
            if isinstance(m, AssistantMessage) and m.text.strip()
        ),
        "",
    )
    evidence = _evidence(messages, evidence_calls, result_chars)
    sections = [
        CHECKPOINT_HEADER,
        "The conversation was reset to this checkpoint to save context. Continue the work "
        "from here; earlier details are summarised below.",
        "## Original objective\n" + (clip(objective, text_chars) or "(unknown)"),
        "## Recent tool evidence\n" + ("\n".join(evidence) or "(no tool calls)"),
        "## Last assistant message\n" + (clip(last_answer, text_chars) or "(none)"),
        "## Current task state\n" + (task_state.strip() if task_state else "(none recorded)"),
    ]
    return [UserMessage(content=[TextPart(text="\n\n".join(sections))])]
