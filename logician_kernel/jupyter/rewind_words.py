"""What the rewind control and the sidebar say of frames and rewinds: a frame's row, the
headline a toast shows after a rewind, undo or resume, the cell steps a rewind would take in
the notebook, and an undo's refusal as a tooltip. Plain functions over the ledger's views,
used by `rewind_source.py`.

Must never: read or change the workspace (what to say only), or name ledger entries or
frame numbers where a person reads it.
"""

from __future__ import annotations

from typing import Any

from ..workspace import CellEdit, FrameView, ProjectionItem

CODE_SHOWN = 240
"""Characters of a frame's code sent per row: rows stay small however long a cell is."""

EVICTED_SHOWN = 20
"""Evicted paths sent per row: the row says "large files evicted" and names the first few."""


_CELL_STEP = {
    "insert": ("remove", "inserted by the agent → removed"),
    "replace": ("restore", "replaced by the agent → its source restored"),
    "delete": ("re-insert", "deleted by the agent → inserted again"),
}


def cell_steps(edits: list[CellEdit]) -> list[dict[str, Any]]:
    """What a rewind would do to the notebook's cells, newest edit first (a cell the user
    edited since is found a conflict only when the notebook's frontend applies it)."""
    steps = []
    for edit in reversed(edits):
        cell = edit.after or edit.before
        action, detail = _CELL_STEP[edit.mode]
        steps.append({"id": cell.id if cell else "?", "action": action, "detail": detail})
    return steps


_PATH_WORDS = (
    ("deleted", "deleted"),
    ("restored", "restored"),
    ("recreated", "recreated"),
    ("failed", "failed"),
)
"""What a headline counts; the files left alone are named by a toast of their own."""


def headline(verb: str, cells: str, item: ProjectionItem) -> str:
    """`Rewound In [2]: 20,000 files deleted, 1 restored; 3 variables`: what a toast says."""
    files = [p for p in item.paths if not p.path.endswith("/")]
    said: list[str] = []
    for action, words in _PATH_WORDS:
        n = sum(1 for p in files if p.action == action)
        if n:
            noun = "" if said else (" file" if n == 1 else " files")
            said.append(f"{n:,}{noun} {words}")
    variables = len(item.variables)
    tail = f"; {variables} variable{'' if variables == 1 else 's'}" if variables else ""
    return f"{verb} {cells}: {', '.join(said) or 'no files changed'}{tail}"


def undo_words(refusal: str | None) -> str | None:
    """The kernel's reason as a tooltip says it: no ledger entries, no frame numbers."""
    if refusal is None:
        return None
    if "there is no rewind to undo" in refusal:
        return "Nothing to undo: no cell of this notebook was rewound yet"
    if "was already undone" in refusal:
        return "Nothing to undo: the last rewind was already undone"
    return refusal.removeprefix("undo: ")


def frame_row(f: FrameView, evicted: list[str] | None = None) -> dict[str, Any]:
    """One frame as the sidebar's list and the rewind control show it (a `FrameRow`)."""
    row: dict[str, Any] = {
        "frame": f.frame,
        "execution_count": f.execution_count,
        "cell_id": f.cell_id,
        "code": f.code[:CODE_SHOWN],
        "time": f.opened_at,
        "outcome": f.outcome,
        "status": f.status,
        "rewound_at": f.rewound_at,
        "rewound_by": f.rewound_by,
        "files": len(f.changes),
        "skipped": len(f.skipped),
        "input_tokens": f.input_tokens,
        "output_tokens": f.output_tokens,
    }
    if f.incomplete:
        # Optional too: "rewind incomplete: N path(s) failed" (the sidebar offers Resume).
        row["incomplete"] = f.incomplete
    if evicted:
        # Optional, so an older extension (and frames with nothing evicted) see the same row.
        row["evicted"] = evicted[:EVICTED_SHOWN]
    return row
