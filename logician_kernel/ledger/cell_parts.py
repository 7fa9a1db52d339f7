"""The cell parts of rewinds and undos no frontend has applied yet: the `cells` fold of the
ledger's projection checkpoint, so a frontend attaching at kernel start asks it without
reading history. Pure: folded over entries, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .entries import ENTRY_ADAPTER, CellRestore


def fold_pending(state: dict[int, CellRestore], entries: Sequence[Any]) -> dict[int, CellRestore]:
    """By the rewind's (or undo's) projection seq: its `pending` record, until an `applied`
    or `skipped` one settles it."""
    for entry in entries:
        if isinstance(entry, CellRestore):
            if entry.state == "pending":
                state[entry.by] = entry
            else:
                state.pop(entry.by, None)
    return state


def dump(state: dict[int, CellRestore]) -> list[dict[str, Any]]:
    return [entry.model_dump(mode="json") for entry in state.values()]


def load(data: list[dict[str, Any]]) -> dict[int, CellRestore]:
    entries = [ENTRY_ADAPTER.validate_python(e) for e in data]
    return {e.by: e for e in entries if isinstance(e, CellRestore)}
