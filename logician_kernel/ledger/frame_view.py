"""The frame stack as a read-only view derived from ledger entries (pure; no I/O).

A frame is `open` between its frame_open and frame_close entries, `active` once closed, and
`rewound` once a projection item with reason `rewind` popped it, and `active` again when a
`restore` item undid that rewind (`%logician undo`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from ..types.path_states import PathChange, SkippedPath
from .thread_ledger import (
    FileCheckpoint,
    FrameClose,
    FrameOpen,
    FramePreSnapshot,
    ProjectionItem,
    RewindProgress,
    RunEnd,
)


@dataclass
class FrameView:
    """One frame as listings and rewinds see it."""

    frame: int
    execution_count: int | None
    cell_id: str | None
    code: str
    opened_at: str
    pre_tree: str | None
    status: Literal["open", "active", "rewound"] = "open"
    outcome: str | None = None
    closed_at: str | None = None
    duration_ms: float | None = None
    changes: list[PathChange] = field(default_factory=list)
    skipped: list[SkippedPath] = field(default_factory=list)
    capture_error: str | None = None
    rewound_by: int | None = None
    rewound_at: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    opened_fs: float | None = None
    """`opened_at` on the file system's clock (`FrameOpen.fs_time`), when recorded."""
    incomplete: str | None = None
    """"rewind incomplete: N path(s) failed" while a rewind of this frame (or the undo of
    one) left paths failed; cleared when it finishes (`rewind_incomplete.py`)."""


def derive_frames(entries: Sequence[BaseModel]) -> dict[int, FrameView]:
    """Fold ledger entries into frames by id, in order of opening."""
    return fold_frames({}, entries)


def fold_frames(frames: dict[int, FrameView], entries: Sequence[BaseModel]) -> dict[int, FrameView]:
    """Fold more entries into `frames` (in place) - the incremental form of `derive_frames`."""
    for entry in entries:
        if isinstance(entry, FrameOpen):
            frames[entry.frame] = FrameView(
                frame=entry.frame,
                execution_count=entry.execution_count,
                cell_id=entry.cell_id,
                code=entry.code,
                opened_at=entry.time,
                pre_tree=entry.pre_tree,
                capture_error=entry.capture_error,
                opened_fs=entry.fs_time,
            )
        elif isinstance(entry, FramePreSnapshot) and entry.frame in frames:
            frames[entry.frame].pre_tree = entry.pre_tree  # taken at the cell's first write
        elif isinstance(entry, FrameClose) and entry.frame in frames:
            view = frames[entry.frame]
            view.status = "active"
            view.outcome = entry.outcome
            view.closed_at = entry.time
            view.duration_ms = entry.duration_ms
            view.pre_tree = entry.start_tree or view.pre_tree
            view.changes = _merge_tool_checkpoints(view.changes, entry.changes)
            view.skipped = list(entry.skipped)
            view.capture_error = view.capture_error or entry.capture_error
        elif isinstance(entry, FileCheckpoint) and entry.frame in frames:
            view = frames[entry.frame]
            if all(c.path != entry.path for c in view.changes):
                view.changes.append(
                    PathChange(
                        path=entry.path,
                        before=entry.before,
                        after=entry.before,
                        by="tool" if entry.call_id else None,
                        call_id=entry.call_id,
                    )
                )
        elif isinstance(entry, RunEnd) and entry.frame in frames:
            frames[entry.frame].input_tokens += entry.input_tokens
            frames[entry.frame].output_tokens += entry.output_tokens
        elif isinstance(entry, RewindProgress) and entry.failed:
            what = "undo" if entry.undo else "rewind"
            for frame_id in entry.frames:
                if frame_id in frames:
                    frames[
                        frame_id
                    ].incomplete = f"{what} incomplete: {len(entry.failed)} path(s) failed"
        elif isinstance(entry, ProjectionItem) and entry.reason == "rewind":
            for frame_id in entry.frames:
                if frame_id in frames:
                    frames[frame_id].incomplete = None
                    frames[frame_id].status = "rewound"
                    frames[frame_id].rewound_by = entry.seq
                    frames[frame_id].rewound_at = entry.time
        elif isinstance(entry, ProjectionItem) and entry.undoes is not None:
            # An undone rewind: the frames it popped are on the stack again.
            for frame_id in entry.frames:
                if frame_id in frames and frames[frame_id].rewound_by == entry.undoes:
                    frames[frame_id].incomplete = None
                    frames[frame_id].status = "active"
                    frames[frame_id].rewound_by = frames[frame_id].rewound_at = None
    return frames


def _merge_tool_checkpoints(
    captured: list[PathChange], diffed: list[PathChange]
) -> list[PathChange]:
    """Within a frame only the first pre-state of a path counts: a tool's capture wins."""
    first = {c.path: c.before for c in captured}
    merged = [
        c.model_copy(update={"before": first.pop(c.path)}) if c.path in first else c for c in diffed
    ]
    return merged
