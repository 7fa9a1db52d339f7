"""Conversation operations: branches (list, merge, discard) and compaction on demand.

Those that need the model (a branch summary, a compaction summary) are coroutines the session
runs on its worker loop (`_loop.run_coroutine`); they either append one projection item or
change nothing: a failed summary leaves the conversation exactly as it was. Rendering is the
caller's business.
"""

from __future__ import annotations

from ..compaction import CompactionFailed, compact
from ..ledger.branches import (
    Branch,
    branch_discard_fields,
    branch_merge_fields,
    derive_branches,
)
from ..ledger.thread_ledger import ProjectionItem, ThreadLedger
from ..loop.summarizer import summariser, summarize
from ..providers import Metered, Provider
from ..types import MESSAGE_ADAPTER
from ._loop import run_coroutine
from .errors import AgentError
from .model_calls import released
from .script import Compacted, Merged

__all__ = ["Branch", "branches", "compact_now", "discard", "merge", "open_branch"]


def branches(ledger: ThreadLedger) -> list[Branch]:
    return derive_branches(ledger.entries)


def open_branch(ledger: ThreadLedger, branch_id: str, *, merging: bool = False) -> Branch:
    """The open branch `branch_id`, or an `AgentError` saying why it cannot be used."""
    found = {b.id: b for b in derive_branches(ledger.entries)}
    if branch_id not in found:
        known = ", ".join(found) or "none"
        raise AgentError(f"branch: no branch {branch_id!r} (branches: {known})")
    chosen = found[branch_id]
    if chosen.status != "open":
        raise AgentError(f"branch: {branch_id} was already {chosen.status}")
    if merging and not chosen.messages:
        raise AgentError(f"branch: {branch_id} dropped no messages; nothing to merge")
    return chosen


def discard(ledger: ThreadLedger, chosen: Branch) -> None:
    ledger.append(ProjectionItem, **branch_discard_fields(chosen, ledger.messages()), durable=True)


async def merge(ledger: ThreadLedger, provider: Provider, chosen: Branch) -> tuple[str, str]:
    """Summarise `chosen` and append the summary to the conversation; returns the summary and
    what it cost (`the summary used N in / M out tokens`)."""
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in chosen.messages]
    metered = Metered(provider)
    try:
        summary = await summarize(metered, messages, focus="what the discarded branch found or did")
    except CompactionFailed as exc:
        raise AgentError(f"branch merge: no summary ({exc}); nothing changed") from None
    current = ledger.messages()
    ledger.append(ProjectionItem, **branch_merge_fields(chosen, summary, current), durable=True)
    return summary, metered.spent()


async def compact_now(
    ledger: ThreadLedger, provider: Provider, *, keep_recent_turns: int, focus: str | None
) -> tuple[int, int, str]:
    """Compact the conversation now; returns (messages before, messages after, what the
    summary cost)."""
    current = [MESSAGE_ADAPTER.validate_python(m) for m in ledger.messages()]
    metered = Metered(provider)
    try:
        new = await compact(
            summariser(metered), current, keep_recent_turns=keep_recent_turns, focus=focus
        )
    except CompactionFailed as exc:
        raise AgentError(f"compact: {exc}; the conversation is unchanged") from None
    dumped = [MESSAGE_ADAPTER.dump_python(m, mode="json") for m in new]
    ledger.append(
        ProjectionItem,
        reason="compaction",
        messages=dumped,
        note=f"on demand{': ' + focus if focus else ''}",
        durable=True,
    )
    return len(current), len(new), metered.spent()


def compact_on_demand(
    ledger: ThreadLedger, provider: Provider, keep: int, focus: str | None
) -> Compacted:
    """`%logician compact`: summarise the older turns now, on the worker loop."""
    return Compacted(
        *run_coroutine(
            released(
                provider,
                lambda p: compact_now(ledger, p, keep_recent_turns=keep, focus=focus),
            ),
            name="logician-compaction",
        )
    )


def merge_branch(ledger: ThreadLedger, provider: Provider, branch_id: str) -> Merged:
    """Merge a summary of the rewound branch `branch_id` into the conversation."""
    chosen = open_branch(ledger, branch_id, merging=True)
    merging = released(provider, lambda p: merge(ledger, p, chosen))
    return Merged(*run_coroutine(merging, name="logician-merge"))
