"""Settling what a dead kernel left half-done, from the ledger alone (no files touched).

- an approval the user never answered (`approval_request` without a resolution): the call
  never ran, so it is settled as a denial through `restart` and the user is told which call
  was waiting and what it would have done;
- a `restorable` call (write, edit) whose pre-image was recorded (`file_checkpoint` with its
  `call_id`): its effects are known to be those paths, so it is offered for
  `%logician rewind --call ID` (`frames/recovery.py` puts them back) instead of only quarantined;
- a `bash` call whose writes were watched exactly (`call_watch` records, written while it ran
  by `frames/call_watch.py`: a baseline snapshot and the paths its processes changed): offered
  the same way (`frames/call_watched.py` puts them back); watched inexactly, it stays
  quarantined and `why_not_restorable` says why.

Must never: re-run a call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .thread_ledger import (
    ApprovalRequested,
    ApprovalResolved,
    CallRewound,
    CallWatch,
    FileCheckpoint,
    MessageEntry,
    ProjectionItem,
    RestorableCall,
    RewindPlanned,
    SessionStart,
    ThreadLedger,
    ToolIntent,
)


def result_message(call_id: str, text: str, *, is_error: bool = True) -> dict[str, Any]:
    """A tool result message as the ledger records it (JSON), for a call settled here or by
    `run_store.py`."""
    from ..types.messages import MESSAGE_ADAPTER, TextPart, ToolResultMessage  # not at start

    message = ToolResultMessage(
        tool_call_id=call_id, content=[TextPart(text=text)], is_error=is_error
    )
    dumped: dict[str, Any] = MESSAGE_ADAPTER.dump_python(message, mode="json")
    return dumped


def unread_tail(ledger: ThreadLedger) -> Sequence[Any]:
    """The entries the ledger's projection checkpoint does not cover. A killed session's are
    all here (a checkpoint is written at open and at a clean close), and reading them never
    loads the thread's history."""
    entries = ledger.entries
    return entries[getattr(entries, "pending", 0) :]


def resolve_pending_approvals(ledger: ThreadLedger) -> list[str]:
    """Settle approvals a dead kernel left waiting; one notice per call, for the first cell."""
    tail = unread_tail(ledger)
    resolved = {e.request_id for e in tail if isinstance(e, ApprovalResolved)}
    answered = {
        e.message.get("tool_call_id")
        for e in tail
        if isinstance(e, MessageEntry) and e.message.get("kind") == "tool_result"
    }
    notices = []
    for request in [e for e in tail if isinstance(e, ApprovalRequested)]:
        if request.request_id in resolved:
            continue
        text = (
            f"Error: the {request.tool} call did not run: the kernel stopped while it was "
            "waiting for the user's decision. Ask again if it is still needed."
        )
        ledger.append(
            ApprovalResolved,
            request_id=request.request_id,
            choice="deny",
            via="restart",
            note="the kernel stopped before anyone answered",
        )
        if request.call_id not in answered:
            ledger.append(
                MessageEntry, frame=request.frame, message=result_message(request.call_id, text)
            )
        where = f"frame {request.frame}" if request.frame is not None else "a run"
        notices.append(
            f"Logician: this call was waiting for your decision when the kernel stopped: "
            f"{request.tool} in {where} (call {request.call_id}), which would have done "
            f"`{request.description}` ({request.reason}). It never ran; the agent is told so."
        )
    return notices


def captures_of(
    ledger: ThreadLedger, call_id: str, *, recent: bool = False
) -> list[FileCheckpoint]:
    """The pre-images `call_id` recorded before writing, in capture order (`recent`: among the
    entries no checkpoint covers, as on reopen after a crash)."""
    entries = unread_tail(ledger) if recent else ledger.entries
    return [e for e in entries if isinstance(e, FileCheckpoint) and e.call_id == call_id]


@dataclass
class Watched:
    """What the `call_watch` records of one call say (`frames/call_watch.py`)."""

    baseline: str | None = None
    """The git tree of the snapshot taken as the call began (its paths' pre-images)."""
    paths: list[str] = field(default_factory=list)
    """What its processes changed, in the order first seen."""
    others: list[str] = field(default_factory=list)
    """What other processes changed while it ran."""
    not_exact: str = ""
    """Why the records do not tell its writes exactly ("" when they do)."""
    ended: bool = False
    """The call returned and every event of it was read (else the kernel died mid-call)."""


def watched(ledger: ThreadLedger, call_id: str, *, recent: bool = False) -> Watched | None:
    """The call's watch records folded, or None when it was not watched (`recent`: among the
    entries no checkpoint covers, as on reopen after a crash)."""
    entries = unread_tail(ledger) if recent else ledger.entries
    records = [e for e in entries if isinstance(e, CallWatch) and e.call_id == call_id]
    if not records:
        return None
    out = Watched()
    for record in records:
        out.baseline = record.baseline or out.baseline
        out.paths += record.paths
        out.others += record.others
        out.not_exact = out.not_exact or record.not_exact
        out.ended = out.ended or record.phase == "end"
    out.paths = list(dict.fromkeys(out.paths))
    out.others = list(dict.fromkeys(out.others))
    if out.baseline is None:
        out.not_exact = out.not_exact or "no snapshot was taken as it began"
    return out


def why_not_restorable(ledger: ThreadLedger, intent: ToolIntent) -> str:
    """Why a watched call cut off mid-run is only quarantined (for the notice), or ""."""
    seen = watched(ledger, intent.call_id, recent=True)
    if seen is None:
        return ""
    if seen.not_exact:
        return f"not offered for rewind: {seen.not_exact}"
    return "not offered for rewind: its processes changed no workspace file that was seen"


def _shown(paths: list[str]) -> str:
    return ", ".join(repr(p) for p in paths[:3]) + (
        f" and {len(paths) - 3} more" if len(paths) > 3 else ""
    )


def _offer_watched(intent: ToolIntent, seen: Watched) -> tuple[list[str], str, str]:
    shown = _shown(seen.paths)
    late = (
        ""
        if seen.ended
        else " A write in the instant before the kernel died may be missing from that list "
        f"(`%logician diff {intent.frame}` shows all the frame changed)."
    )
    text = (
        f"OUTCOME UNKNOWN: the kernel died while this {intent.name} call was running; its "
        f"processes had changed {shown}. It was NOT repeated, and anything else it did (outside "
        "the workspace, processes) is unknown. The user can restore those files as they were "
        "before the call. Check the state before relying on it."
    )
    notice = (
        f"Logician: the {intent.name} call of frame {intent.frame} ({_describe(intent)}) was "
        f"cut off by the kernel's death after its processes changed {shown}, each recorded "
        f"as it was written (exact attribution).{late} "
        f"`%logician rewind --call {intent.call_id}` restores them as they were before the call."
    )
    return seen.paths, text, notice


def _describe(intent: ToolIntent) -> str:
    command = intent.arguments.get("command")
    if isinstance(command, str) and command.strip():
        return f"`{command.strip().splitlines()[0][:80]}`"
    return f"call {intent.call_id}"


def offer_restorable(ledger: ThreadLedger, intent: ToolIntent) -> tuple[str, str] | None:
    """For a `restorable` call cut off mid-run whose pre-images were recorded, or a call whose
    writes were watched exactly: record it as restorable and return (what the model is told,
    the user's notice); None otherwise."""
    if intent.recovery != "restorable":
        seen = watched(ledger, intent.call_id, recent=True)
        if seen is None or seen.not_exact or not seen.paths:
            return None
        paths, text, notice = _offer_watched(intent, seen)
        return _record(ledger, intent, paths, text), notice
    paths = list(dict.fromkeys(c.path for c in captures_of(ledger, intent.call_id, recent=True)))
    if not paths:
        return None  # died before capturing (nothing written) or the frame held an older one
    shown = _shown(paths)
    text = (
        f"OUTCOME UNKNOWN: the kernel died while this {intent.name} call was writing {shown}. "
        "It was NOT repeated; the file may be partly written. The user can restore it as it was "
        "before the call. Check the file before relying on it."
    )
    notice = (
        f"Logician: the {intent.name} call of frame {intent.frame} was cut off by the kernel's "
        f"death while writing {shown}; its pre-image was recorded. "
        f"`%logician rewind --call {intent.call_id}` restores it as it was before the call."
    )
    return _record(ledger, intent, paths, text), notice


def _record(ledger: ThreadLedger, intent: ToolIntent, paths: list[str], text: str) -> str:
    ledger.append(
        RestorableCall,
        frame=intent.frame,
        call_id=intent.call_id,
        name=intent.name,
        paths=paths,
        detail=text,
    )
    return text


def restorable_calls(ledger: ThreadLedger) -> list[RestorableCall]:
    """Calls offered for `rewind --call` and not yet rewound (or whose rewind was undone),
    oldest first."""
    entries = ledger.entries
    done = {e.call_id for e in entries if isinstance(e, CallRewound)}
    plans = {e.seq: e.call_id for e in entries if isinstance(e, RewindPlanned) and e.call_id}
    items = [e for e in entries if isinstance(e, ProjectionItem)]
    undone = {e.undoes for e in items if e.undoes}
    done |= {plans[e.plan] for e in items if e.plan in plans and e.seq not in undone}
    return [e for e in entries if isinstance(e, RestorableCall) and e.call_id not in done]


def found_at_this_start(ledger: ThreadLedger) -> list[RestorableCall]:
    """The restorable calls this kernel session's start found (what its first cell offers),
    read from the ledger's unread tail only."""
    tail = list(unread_tail(ledger))
    starts = [i for i, e in enumerate(tail) if isinstance(e, SessionStart)]
    since = tail[starts[-1] :] if starts else tail
    done = {e.call_id for e in since if isinstance(e, CallRewound)}
    return [e for e in since if isinstance(e, RestorableCall) and e.call_id not in done]
