"""Rewinds (and undos) that could not bring every path back: their record and their words.

A rewind is done only when every path is. When a whole pass leaves paths `failed` (the disk
is full, an I/O error), one durable `rewind_progress` record names them (and what the pass did
to the others) instead of the `rewind` projection item: the frames stay active, marked
"rewind incomplete", and the variables and the conversation are not rewound yet.
`%logician rewind --resume` (for an undo: `%logician undo`) retries exactly the failed paths;
`--skip-failed` finishes on purpose, each given-up path named in the finishing record.

Must never: let a rewind with a failed path leave the frame list as if done, or retry a path
that the pass already brought back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ..ledger.rewind_state import rewind_state
from ..ledger.thread_ledger import (
    RestoredPath,
    RewindPlanned,
    RewindProgress,
    RewindStep,
    ThreadLedger,
)

if TYPE_CHECKING:
    from ..ledger.rewind_state import RewindState

SHOWN = 5
"""Failed paths named in one message; the rest are counted."""


def failed_of(results: Sequence[RestoredPath]) -> list[RestoredPath]:
    return [r for r in results if r.action == "failed"]


def record_incomplete(
    ledger: ThreadLedger, record: RewindPlanned, results: Sequence[RestoredPath], *, undo: bool
) -> RewindProgress:
    """Durably record a pass that left paths failed: they stay pending (see the docstring)."""
    failed = failed_of(results)
    entry: RewindProgress = ledger.append(
        RewindProgress,
        plan=record.seq,
        done=len(record.steps),
        undo=undo,
        failed=failed,
        results=[r for r in results if r.action != "failed"],
        frames=record.frames,
        durable=True,
    )
    return entry


def retry_steps(record: RewindPlanned, failed: Sequence[RestoredPath]) -> list[RewindStep]:
    """The plan's steps of exactly the paths a pass failed, in the plan's order."""
    names = {r.path for r in failed}
    return [s for s in record.steps if s.path in names]


def given_up(failed: Sequence[RestoredPath], *, undo: bool) -> list[RestoredPath]:
    """The failed paths as `--skip-failed` records them: still failed, now on purpose."""
    left = "as the rewind found it" if undo else "as the rewound frames left it"
    return [
        r.model_copy(
            update={
                "detail": f"given up with --skip-failed, left {left}"
                + (f" ({r.detail})" if r.detail else "")
            }
        )
        for r in failed
    ]


def _named(failed: Sequence[RestoredPath]) -> str:
    shown = ", ".join(f"{r.path} ({r.detail})" if r.detail else r.path for r in failed[:SHOWN])
    more = f" and {len(failed) - SHOWN} more" if len(failed) > SHOWN else ""
    return shown + more


def frames_text(frames: Sequence[int]) -> str:
    return f"frame(s) {', '.join(map(str, frames))}" if frames else "the conversation"


def incomplete_text(entry: RewindProgress) -> str:
    """What the cell says when a pass leaves paths failed."""
    failed, done = entry.failed, len(entry.results)
    if entry.undo:
        return (
            f"undo incomplete: {len(failed)} path(s) failed and stay pending: {_named(failed)}. "
            f"{done} other path(s) were handled; {frames_text(entry.frames)} stay rewound and "
            "variables and the conversation are not undone yet. Fix the cause (e.g. free disk "
            "space), then `%logician undo` retries exactly the failed path(s), or "
            "`%logician undo --skip-failed` finishes the undo without them."
        )
    return (
        f"rewind incomplete: {len(failed)} path(s) failed and stay pending: {_named(failed)}. "
        f"{done} other path(s) were handled; {frames_text(entry.frames)} stay active (rewind "
        "incomplete) and variables and the conversation are not rewound yet. Fix the cause (e.g. "
        "free disk space), then `%logician rewind --resume` retries exactly the failed "
        "path(s), or `%logician rewind --skip-failed` finishes the rewind without them."
    )


def pending_text(state: RewindState, command: str) -> str | None:
    """Why `command` must wait for an unfinished rewind, or None when there is none."""
    record = state.pending
    if record is None:
        return None
    if state.failed:
        return (
            f"{command}: the rewind of {frames_text(record.frames)} is incomplete "
            f"({len(state.failed)} path(s) failed: {_named(state.failed)}); "
            "`%logician rewind --resume` retries them, `%logician rewind --skip-failed` "
            "finishes it without them"
        )
    return (
        f"{command}: an earlier rewind was interrupted and is not finished; "
        "`%logician rewind --resume` completes it first"
    )


def start_notice(state: RewindState) -> str | None:
    """What a kernel start says about an incomplete rewind or undo, or None."""
    record = state.pending
    if record is not None and state.failed:
        return (
            f"Logician: the rewind of {frames_text(record.frames)} (to just before frame "
            f"{record.frame}) is incomplete: {len(state.failed)} path(s) failed "
            f"({_named(state.failed)}). `%logician rewind --resume` retries them; "
            "`%logician rewind --skip-failed` finishes it without them."
        )
    undo = state.pending_undo
    if record is None and undo is not None and state.undo_failed:
        return (
            f"Logician: the undo of the rewind in ledger entry {undo.seq} is incomplete: "
            f"{len(state.undo_failed)} path(s) failed ({_named(state.undo_failed)}). "
            "`%logician undo` retries them; `%logician undo --skip-failed` finishes it "
            "without them."
        )
    return None


def interrupted_notice(entries: Sequence[BaseModel] | ThreadLedger) -> str | None:
    """What the next start says about a rewind (or an undo) a crash cut short, or None."""
    state = rewind_state(entries)
    if (incomplete := start_notice(state)) is not None:
        return incomplete
    record = state.pending
    if record is None:
        undo = state.pending_undo
        return (
            None
            if undo is None
            else (
                f"Logician: an undo of the rewind in ledger entry {undo.seq} was interrupted; "
                "`%logician undo` finishes it (paths already back count as done)."
            )
        )
    what = f"frame(s) {', '.join(map(str, record.frames))}" if record.frames else "the conversation"
    if record.call_id:
        return (
            f"Logician: a rewind of call {record.call_id} (frame {record.frame}, started "
            f"{record.time[:19]} UTC) was interrupted: at least {state.progress} of "
            f"{len(record.steps)} path(s) were restored. `%logician rewind --resume` completes "
            "it (paths already restored are not conflicts)."
        )
    return (
        f"Logician: a rewind of {what} (to just before frame {record.frame}, started "
        f"{record.time[:19]} UTC) was interrupted: at least {state.progress} of "
        f"{len(record.steps)} path(s) were restored. `%logician rewind --resume` completes it "
        "(paths already restored are not conflicts)."
    )
