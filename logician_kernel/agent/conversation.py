"""Conversation operations: branches (list, merge, discard) and compaction on demand.

Those that need the model (a branch summary, a compaction summary) are coroutines the session
runs on its worker loop (`_loop.run_coroutine`); they either append one projection item or
change nothing: a failed summary leaves the conversation exactly as it was. Each reports
itself through the session's `report` as a pair of events (`CompactionStarted`/`Finished`,
`BranchSummaryStarted`/`Finished`) on the calling thread, before and after the work, however
it ends: the runtime phase (`compaction`, `branch_summary`, then `idle`) comes from these for
every entry point. Rendering is the caller's business.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..compaction import CompactionFailed, compact, estimate_total
from ..events.events import (
    BranchSummaryFinished,
    BranchSummaryStarted,
    CompactionFinished,
    CompactionStarted,
    HarnessEvent,
)
from ..events.runtime_state import fold
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
from .script import Compacted, Listener, Merged

if TYPE_CHECKING:
    from .session import AgentSession

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


Report = Callable[[HarnessEvent], None]
"""Where an operation's events go: folded into the session's status, then to its listeners."""


def reporter(session: AgentSession, on_event: Listener | None) -> Report:
    """Folds each event into the session's status, then tells its listeners and `on_event`."""

    def report(event: HarnessEvent) -> None:
        session.state = fold(session.state, event)
        for listener in [*session.listeners, *([on_event] if on_event else [])]:
            listener(event)

    return report


def compact_on_demand(
    ledger: ThreadLedger, provider: Provider, keep: int, focus: str | None, report: Report
) -> Compacted:
    """`%logician compact`: summarise the older turns now, on the worker loop."""
    before = _tokens(ledger)
    report(
        CompactionStarted(reason=f"asked for{': ' + focus if focus else ''}", trigger="on_demand")
    )
    end = CompactionFinished(
        result="failed", before=before, after=before, detail="interrupted", trigger="on_demand"
    )
    try:
        done = Compacted(
            *run_coroutine(
                released(
                    provider,
                    lambda p: compact_now(ledger, p, keep_recent_turns=keep, focus=focus),
                ),
                name="logician-compaction",
            )
        )
        end = end.model_copy(update={"result": "summary", "after": _tokens(ledger), "detail": ""})
        return done
    except BaseException as exc:
        end = end.model_copy(update={"detail": _why(exc)})
        raise
    finally:
        report(end)


def merge_branch(
    ledger: ThreadLedger, provider: Provider, branch_id: str, report: Report
) -> Merged:
    """Merge a summary of the rewound branch `branch_id` into the conversation."""
    chosen = open_branch(ledger, branch_id, merging=True)
    report(BranchSummaryStarted(branch_id=branch_id))
    end = BranchSummaryFinished(branch_id=branch_id, result="failed", detail="interrupted")
    try:
        merging = released(provider, lambda p: merge(ledger, p, chosen))
        done = Merged(*run_coroutine(merging, name="logician-merge"))
        end = BranchSummaryFinished(branch_id=branch_id, result="merged")
        return done
    except BaseException as exc:
        end = end.model_copy(update={"detail": _why(exc)})
        raise
    finally:
        report(end)


def _why(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        return "interrupted"
    return str(exc) or type(exc).__name__


def _tokens(ledger: ThreadLedger) -> int:
    return estimate_total([MESSAGE_ADAPTER.validate_python(m) for m in ledger.messages()])
