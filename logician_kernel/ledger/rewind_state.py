"""Where a thread's rewinds stand: the `rewinds` fold of the ledger's projection checkpoint.

A rewind plan without its projection item is an interrupted rewind (`--resume` completes
it); a rewind whose undo recorded progress but no `restore` item is an interrupted undo.
Pure: folded over entries, no I/O (`frames/rewind_plan.py` writes and carries out plans).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .thread_ledger import ProjectionItem, RestoredPath, RewindPlanned, RewindProgress, ThreadLedger


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

    def dump(self) -> dict[str, Any]:
        def entry(e: BaseModel | None) -> dict[str, Any] | None:
            return e.model_dump(mode="json") if e is not None else None

        def paths(items: list[RestoredPath]) -> list[dict[str, Any]]:
            return [p.model_dump(mode="json") for p in items]

        return {
            "pending": entry(self.pending),
            "progress": self.progress,
            "last_rewind": entry(self.last_rewind),
            "undo_started": self.undo_started,
            "undone": self.undone,
            "failed": paths(self.failed),
            "results": paths(self.results),
            "undo_failed": paths(self.undo_failed),
            "undo_results": paths(self.undo_results),
        }

    @classmethod
    def load(cls, data: dict[str, Any]) -> RewindState:
        pending, last = data["pending"], data["last_rewind"]
        return cls(
            pending=RewindPlanned.model_validate(pending) if pending else None,
            progress=int(data["progress"]),
            last_rewind=ProjectionItem.model_validate(last) if last else None,
            undo_started=bool(data["undo_started"]),
            undone=bool(data["undone"]),
            **{
                key: [RestoredPath.model_validate(p) for p in data.get(key, [])]
                for key in ("failed", "results", "undo_failed", "undo_results")
            },
        )

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
