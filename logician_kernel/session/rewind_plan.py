"""Rewinds that survive a crash and can be taken back: the plan record and its progress.

Before a rewind touches the first path it appends one `rewind_plan` record (fsynced): every
path it will restore, in order, with the state it brings the path to and the state that stood
there - stored in the object store, permission bits included. That one record is both the
rewind's undo snapshot (`session/undo.py`) and what `--resume` completes after a crash.
`rewind_progress` records follow in batches (flushed, not fsynced: a resume re-reads every
path's state anyway, so progress is a report, never the source of truth). The rewind's own
`rewind` projection item names its plan; a plan without one is an interrupted rewind.

Must never: call a path conflicting because an interrupted pass already restored it, or
touch a path that neither the rewind's before- nor after-state describes (unless forced).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel

from .beneath import Beneath
from .git_snapshot import GitSnapshotter
from .perms import current_perms, remove_debris, with_perms
from .restore import restore_order, restore_path, still_as_left
from .rewind_incomplete import start_notice
from .states import PathState
from .thread_ledger import (
    ProjectionItem,
    RestoredPath,
    RestoredVariable,
    RewindPlanned,
    RewindProgress,
    RewindStep,
    ThreadLedger,
)

if TYPE_CHECKING:
    from .frame_rewind import RewindPlan

BATCH = 500
"""Paths restored between two progress records."""
KILL_AFTER_ENV = "LOGICIAN_TEST_REWIND_KILL_AFTER"
"""Test-only: a rewind (or undo) kills its own process with SIGKILL after this many paths, so
a test of an interrupted rewind is exact instead of racing a sleep."""


def write_plan(
    ledger: ThreadLedger,
    snap: GitSnapshotter | None,
    frame_id: int,
    plan: RewindPlan | None,
    *,
    since: str | None,
    files: bool,
    conversation: bool,
    variables: bool,
    force: bool,
    include_external: bool = False,
) -> RewindPlanned:
    """Store what every path of the plan holds now and record the plan durably."""
    steps = []
    if plan is not None and snap is not None:
        for path, target in restore_order(plan.restore):
            # Exact bits, usual ones too: an undo must put back a 0644 the rewind made 0600.
            current = with_perms(snap.store_path(path), current_perms(snap.workspace / path))
            steps.append(RewindStep(path=path, target=target, current=current))
    record: RewindPlanned = ledger.append(
        RewindPlanned,
        frame=frame_id,
        frames=plan.frames if plan is not None else [],
        files=files,
        conversation=conversation,
        variables=variables,
        force=force,
        include_external=include_external,
        steps=steps,
        known=(plan.conflicts + plan.skipped + plan.external) if plan is not None else [],
        since=since,
        durable=True,
    )
    return record


def carry_out(
    ledger: ThreadLedger,
    snap: GitSnapshotter,
    record: RewindPlanned,
    *,
    undo: bool = False,
    verify: bool = False,
    force: bool = False,
    on_path: Callable[[str], None] | None = None,
    steps: Sequence[RewindStep] | None = None,
) -> list[RestoredPath]:
    """Bring every path of the plan to its target (or, `undo`, back to what stood there);
    `steps`, when given, only those (a retry of the paths an incomplete pass failed).

    `verify` (a resume, an undo) first reads each path: one already as wanted is done, not a
    conflict; one in neither state changed under us and is left alone unless `force`.
    """
    kill_after = int(os.environ.get(KILL_AFTER_ENV) or 0)
    results: list[RestoredPath] = []
    todo = record.steps if steps is None else steps
    # One walk beneath the workspace for the whole pass: each directory is opened once.
    with Beneath(snap.workspace) as tree:
        for index, step in enumerate(todo, start=1):
            want, was = (step.current, step.target) if undo else (step.target, step.current)
            results.append(_one(snap, tree, step.path, want, was, verify=verify, force=force,
                                undo=undo))  # fmt: skip
            if on_path is not None:
                on_path(step.path)
            if kill_after and index == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            if index % BATCH == 0 and index < len(todo) and steps is None:
                ledger.append(RewindProgress, plan=record.seq, done=index, undo=undo)
        emptied = [s.path for s in record.steps if not (s.current if undo else s.target).exists]
        since = record.time if undo else record.since
        for directory in remove_debris(snap.workspace, emptied, since, tree):
            results.append(RestoredPath(path=directory + "/", action="deleted", detail=(
                "an empty directory the rewind made" if undo else
                "an empty directory the rewound frames made")))  # fmt: skip
    snap.invalidate()
    return results


def _one(
    snap: GitSnapshotter, tree: Beneath, path: str, want: PathState, was: PathState, *,
    verify: bool, force: bool, undo: bool,
) -> RestoredPath:  # fmt: skip
    if want.kind == "uncaptured":
        return RestoredPath(path=path, action="skipped", detail=(
            "its state before the rewind was not captured (not a regular file, or over "
            "checkpoints.max_file_bytes)"))  # fmt: skip
    if verify and (blocked := tree.blocked(path)) is not None:
        return RestoredPath(path=path, action="conflict", detail=blocked)  # before reading it
    if verify:
        now = snap.hash_path(path)
        if matches(snap, path, now, want):
            return RestoredPath(path=path, action="deleted" if not want.exists else "restored",
                                detail="already done before the interruption" if not undo
                                else "already as before the rewind")  # fmt: skip
        if not force and not matches(snap, path, now, was):
            return RestoredPath(path=path, action="conflict", detail=(
                "changed since the rewind; `%logician undo --force` overwrites it" if undo else
                "changed since the interrupted rewind planned it; `--force` overwrites it"))  # fmt: skip
    return restore_path(snap, path, want, tree)


def matches(snap: GitSnapshotter, path: str, now: PathState, state: PathState) -> bool:
    if not still_as_left(now, state):
        return False
    return state.perms is None or current_perms(snap.workspace / path) == state.perms


def finish(
    ledger: ThreadLedger,
    record: RewindPlanned,
    results: list[RestoredPath],
    *,
    messages: list[dict],
    restored: Sequence[RestoredVariable],
    variable_frames: list[int],
    note: str,
) -> ProjectionItem:
    """The rewind's `rewind` projection item: it pops the frames and completes the plan."""
    item: ProjectionItem = ledger.append(
        ProjectionItem,
        reason="rewind",
        messages=messages,
        frames=record.frames if record.files else [],
        paths=sorted(list(record.known) + results, key=lambda r: r.path),
        note=note,
        variables=list(restored),
        variable_frames=variable_frames,
        plan=record.seq,
        durable=True,
    )
    return item


@dataclass
class RewindState:
    """Where the thread's rewinds stand, folded forward over the entries (the `rewinds` fold of
    ledger_checkpoint.py, so a kernel start asks it without reading history)."""

    pending: RewindPlanned | None = None
    """The last rewind plan, while its rewind has not finished (the kernel died during it);
    an older unfinished plan is superseded by the plan after it."""
    progress: int = 0
    """Paths the pending plan's last progress record says were restored."""
    last_rewind: ProjectionItem | None = None
    """The most recent finished rewind."""
    undo_started: bool = False
    """Whether an undo of `last_rewind` recorded progress."""
    undone: bool = False
    """Whether `last_rewind` was undone."""
    failed: list[RestoredPath] = field(default_factory=list)
    """The pending plan's paths that its last whole pass failed: a rewind incomplete, not
    interrupted (`--resume` retries exactly these)."""
    results: list[RestoredPath] = field(default_factory=list)
    """What that pass did to the plan's other paths."""
    undo_failed: list[RestoredPath] = field(default_factory=list)
    """The same for an incomplete undo of `last_rewind` (`%logician undo` retries these)."""
    undo_results: list[RestoredPath] = field(default_factory=list)
    """What that undo pass did to the other paths."""

    def fold(self, entries: Sequence[BaseModel]) -> RewindState:
        for entry in entries:
            if isinstance(entry, RewindPlanned):
                self.pending, self.progress, self.failed, self.results = entry, 0, [], []
            elif isinstance(entry, RewindProgress):
                if entry.undo:
                    last = self.last_rewind
                    mine = last is not None and entry.plan == last.plan
                    self.undo_started |= mine
                    if mine and entry.failed:
                        self.undo_failed, self.undo_results = entry.failed, entry.results
                elif self.pending is not None and entry.plan == self.pending.seq:
                    self.progress = max(self.progress, entry.done)
                    if entry.failed:
                        self.failed, self.results = entry.failed, entry.results
            elif isinstance(entry, ProjectionItem):
                if self.pending is not None and entry.plan == self.pending.seq:
                    self.pending, self.progress, self.failed, self.results = None, 0, [], []
                if entry.reason == "rewind":
                    self.last_rewind, self.undo_started, self.undone = entry, False, False
                    self.undo_failed, self.undo_results = [], []
                elif self.last_rewind is not None and entry.undoes == self.last_rewind.seq:
                    self.undone, self.undo_failed, self.undo_results = True, [], []
        return self

    def dump(self) -> dict:
        def entry(e: BaseModel | None) -> dict | None:
            return e.model_dump(mode="json") if e is not None else None

        def paths(items: list[RestoredPath]) -> list[dict]:
            return [p.model_dump(mode="json") for p in items]

        return {"pending": entry(self.pending), "progress": self.progress,
                "last_rewind": entry(self.last_rewind), "undo_started": self.undo_started,
                "undone": self.undone, "failed": paths(self.failed),
                "results": paths(self.results), "undo_failed": paths(self.undo_failed),
                "undo_results": paths(self.undo_results)}  # fmt: skip

    @classmethod
    def load(cls, data: dict) -> RewindState:
        pending, last = data["pending"], data["last_rewind"]
        return cls(pending=RewindPlanned.model_validate(pending) if pending else None,
                   progress=int(data["progress"]),
                   last_rewind=ProjectionItem.model_validate(last) if last else None,
                   undo_started=bool(data["undo_started"]), undone=bool(data["undone"]),
                   **{key: [RestoredPath.model_validate(p) for p in data.get(key, [])]
                      for key in ("failed", "results", "undo_failed", "undo_results")})  # fmt: skip

    @property
    def pending_undo(self) -> ProjectionItem | None:
        """The last rewind, if an undo of it started and never finished."""
        last = self.last_rewind
        return last if last is not None and self.undo_started and not self.undone else None


def rewind_state(entries: Sequence[BaseModel] | ThreadLedger) -> RewindState:
    """The thread's rewind state: the ledger's incremental fold, or a fold over `entries`."""
    if isinstance(entries, ThreadLedger):
        state: RewindState = entries.fold("rewinds")
        return state
    return RewindState().fold(entries)


def pending_plan(entries: Sequence[BaseModel] | ThreadLedger) -> RewindPlanned | None:
    """The last rewind plan, if its rewind never finished (the kernel died during it)."""
    return rewind_state(entries).pending


def pending_undo(entries: Sequence[BaseModel] | ThreadLedger) -> ProjectionItem | None:
    """The last rewind, if an undo of it started and never finished."""
    return rewind_state(entries).pending_undo


def interrupted_notice(entries: Sequence[BaseModel] | ThreadLedger) -> str | None:
    """What the next start says about a rewind (or an undo) a crash cut short, or None."""
    state = rewind_state(entries)
    if (incomplete := start_notice(state)) is not None:
        return incomplete
    record = state.pending
    if record is None:
        undo = state.pending_undo
        return None if undo is None else (
            f"Logician: an undo of the rewind in ledger entry {undo.seq} was interrupted; "
            "`%logician undo` finishes it (paths already back count as done)."
        )  # fmt: skip
    what = f"frame(s) {', '.join(map(str, record.frames))}" if record.frames else "the conversation"
    return (
        f"Logician: a rewind of {what} (to just before frame {record.frame}, started "
        f"{record.time[:19]} UTC) was interrupted: at least {state.progress} of "
        f"{len(record.steps)} path(s) were restored. `%logician rewind --resume` completes it "
        "(paths already restored are not conflicts)."
    )
