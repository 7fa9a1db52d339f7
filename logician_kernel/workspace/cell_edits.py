"""The agent's cell edits in the ledger: recorded with the frame they belong to, gathered for
a rewind (reversed) or an undo (again), and the cell part of a rewind that is still pending.

A rewind takes cell edits back through the notebook's frontend, which may be gone: the
`cell_restore` entries say what was asked and whether the frontend answered, so the part
left pending is applied when a client reconnects or given up with `--skip-cells`.

Must never: talk to a frontend or write a notebook file (the kernel's Jupyter side does, and
records here what it did).
"""

from __future__ import annotations

from typing import Any

from ..ledger import CellEdit, CellRestore, ProjectionItem, ThreadLedger


def record_edit(ledger: ThreadLedger, frame: int | None, record: dict[str, Any]) -> CellEdit:
    """Append one applied edit (`call_id`, `notebook`, `mode`, `before`, `after`); a cell
    state missing a field the ledger needs is a `ValueError` naming it."""
    return ledger.append(
        CellEdit,
        frame=frame,
        call_id=record.get("call_id"),
        notebook=record.get("notebook"),
        mode=record["mode"],
        before=_state(record.get("before")),
        after=_state(record.get("after")),
        durable=True,
    )


def _state(cell: Any) -> dict[str, Any] | None:
    if cell is None:
        return None
    return {k: cell[k] for k in ("id", "cell_type", "source", "index")}


def edits_of(ledger: ThreadLedger, frames: list[int]) -> list[CellEdit]:
    """The cell edits the given frames made, oldest first."""
    wanted = set(frames)
    return [e for e in ledger.entries if isinstance(e, CellEdit) and e.frame in wanted]


def plan_for(ledger: ThreadLedger, item: ProjectionItem) -> CellRestore | None:
    """After a rewind or an undo (`item`): record its cell part as pending and return it, or
    None when it has none. A rewind takes back the cell edits of the frames it popped (unless
    its scope leaves files alone: cells go with the files); an undo makes again those its
    rewind took back, and gives up a part of that rewind still pending."""
    if item.undoes is None:
        if item.scope is not None and not item.scope.files:
            return None
        edits = edits_of(ledger, list(item.frames))
        if not edits:
            return None
        seqs = [e.seq for e in reversed(edits)]
        direction = "rewind"
    else:
        last = _last_restore(ledger, item.undoes)
        if last is None or last.state == "skipped":
            return None
        if last.state == "pending":  # never reached the notebook: nothing to put back
            settle(ledger, last, "skipped")
            return None
        seqs = list(reversed(last.edits))
        direction = "undo"
    return ledger.append(
        CellRestore, by=item.seq, direction=direction, edits=seqs, state="pending", durable=True
    )


def _last_restore(ledger: ThreadLedger, by: int) -> CellRestore | None:
    found = None
    for entry in ledger.entries:
        if isinstance(entry, CellRestore) and entry.by == by:
            found = entry
    return found


def pending(ledger: ThreadLedger) -> list[CellRestore]:
    """The cell parts asked for and never answered nor skipped, oldest first (the `cells`
    fold: no history is read)."""
    return sorted(ledger.fold("cells").values(), key=lambda r: r.seq)


def edits_by_seq(ledger: ThreadLedger, seqs: list[int]) -> list[CellEdit]:
    """The `cell_edit` entries named, in the order named."""
    wanted = set(seqs)
    found = {e.seq: e for e in ledger.entries if isinstance(e, CellEdit) and e.seq in wanted}
    return [found[s] for s in seqs if s in found]


def settle(
    ledger: ThreadLedger,
    restore: CellRestore,
    state: str,
    *,
    conflicts: list[str] | None = None,
    missing: list[str] | None = None,
) -> CellRestore:
    """Record what became of a pending cell part (`applied` or `skipped`)."""
    return ledger.append(
        CellRestore,
        by=restore.by,
        direction=restore.direction,
        edits=restore.edits,
        state=state,
        conflicts=conflicts or [],
        missing=missing or [],
        durable=True,
    )
