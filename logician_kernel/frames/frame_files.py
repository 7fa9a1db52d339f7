"""What the Lab's diff view reads: the files one frame changed, with their kind and sizes
(`changed_files`, the comm's `frames.files`), and one path's two sides, a page at a time
(`diff_sides`, the comm's `frames.diff`); a notebook's cells matched by nbdime where it is
importable (`notebook_match.py`).

A frame's sides are the state it opened with and the state it left, read from its snapshot. A
rewind preview's sides are the file now on disk and what the rewind would put back (the state
the oldest frame it pops that changed the path opened with). Reading is `file_sides.py`'s.

Must never: write to the workspace or the ledger, or answer a path the frame (or the rewind)
does not touch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..ledger.frame_view import FrameView
from ..snapshots.git_snapshot import SnapshotError
from ..types.path_states import PathChange, PathState
from . import file_sides as fs
from .file_checkpoints import FileCheckpoints
from .notebook_match import CellMatch, match_cells


def _checkpoints(checkpoints: FileCheckpoints | None) -> FileCheckpoints:
    if checkpoints is None or checkpoints.snapshotter is None:
        raise ValueError("this kernel session records no file snapshots")
    return checkpoints


def _view(checkpoints: FileCheckpoints, frame: int) -> FrameView:
    view = checkpoints.frames().get(frame)
    if view is None:
        raise ValueError(f"frame: there is no frame {frame}")
    return view


def _side(checkpoints: FileCheckpoints, state: PathState) -> fs.Side:
    snap = checkpoints.snapshotter
    assert snap is not None
    large = fs.large_store_path(snap.large.store.root) if snap.large is not None else None
    return fs.from_state(state, snap.read_blob, large)


def changed_files(
    checkpoints: FileCheckpoints | None, frame: int, offset: int, limit: int
) -> dict[str, Any]:
    """A page of the files `frame` changed: path, action, kind, sizes before and after."""
    cp = _checkpoints(checkpoints)
    view = _view(cp, frame)
    changes = sorted(view.changes, key=lambda c: c.path)[offset : offset + limit]
    sizes = _blob_sizes(cp, [s for c in changes for s in (c.before, c.after)])
    rows = []
    for change in changes:
        sides = (_side(cp, change.before), _side(cp, change.after))
        rows.append(
            {
                "path": change.path,
                "action": change.action,
                "kind": fs.kind_of(change.path, sides),
                "before_size": _size(sides[0], change.before, sizes),
                "after_size": _size(sides[1], change.after, sizes),
            }
        )
    return {"frame": frame, "rows": rows, "total": len(view.changes), "offset": offset}


def _blob_sizes(cp: FileCheckpoints, states: list[PathState]) -> dict[str, int]:
    """The sizes of the page's git blobs, from one `cat-file --batch-check` (none read)."""
    shas = sorted({s.sha for s in states if s.kind == "blob" and s.sha})
    if not shas or cp.snapshotter is None:
        return {}
    try:
        out = cp.snapshotter.git.run("cat-file", "--batch-check", stdin="\n".join(shas).encode())
    except SnapshotError:
        return {}
    sizes = {}
    for line in out.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


def _size(side: fs.Side, state: PathState, sizes: dict[str, int]) -> int | None:
    if side.size is not None:
        return side.size
    if side.opener is None:
        return None
    return sizes.get(state.sha or "")


def diff_sides(
    checkpoints: FileCheckpoints | None,
    root: Path,
    frame: int,
    path: str,
    page: int,
    *,
    preview: bool,
) -> dict[str, Any]:
    """Page `page` of both sides of `path`: what `frame` changed, or (`preview`) what a rewind
    to `frame` would change (before: on disk now; after: what the rewind puts back)."""
    cp = _checkpoints(checkpoints)
    view = _view(cp, frame)
    if preview:
        restores = _restored_state(cp, frame, path)
        if restores is None:
            raise ValueError(f"path: a rewind to frame {frame} does not touch {path!r}")
        sides = (fs.on_disk(root, path), _side(cp, restores))
    else:
        change = _change(view, path)
        if change is None:
            raise ValueError(f"path: frame {frame} did not change {path!r}")
        sides = (_side(cp, change.before), _side(cp, change.after))
    kind = fs.kind_of(path, sides)
    notebooks: tuple[list[bytes], list[bytes]] = ([], [])
    before = fs.read_side(sides[0], kind, path, page, notebooks[0])
    after = fs.read_side(sides[1], kind, path, page, notebooks[1])
    answer = {
        "frame": frame,
        "path": path,
        "kind": kind,
        "preview": preview,
        "page": page,
        "pages": max(before["pages"], after["pages"], 1),
        "before": before,
        "after": after,
    }
    if kind == "notebook":
        matches = _matched_cells(sides, notebooks)
        if matches is not None:
            answer["cell_matches"] = matches
    return answer


def _matched_cells(
    sides: tuple[fs.Side, fs.Side], notebooks: tuple[list[bytes], list[bytes]]
) -> list[CellMatch] | None:
    """nbdime's matching of the two notebooks' cells, when each side is absent or was read
    whole (a side above the bound, uncaptured or refused has no cells to match)."""
    texts: list[bytes | None] = []
    for side, read in zip(sides, notebooks, strict=True):
        if read:
            texts.append(read[0])
        elif side.state == "absent":
            texts.append(None)
        else:
            return None
    return match_cells(texts[0], texts[1])


def _change(view: FrameView, path: str) -> PathChange | None:
    return next((c for c in view.changes if c.path == path), None)


def _restored_state(cp: FileCheckpoints, frame: int, path: str) -> PathState | None:
    """The state a rewind to `frame` restores `path` to: what the oldest popped frame that
    changed it opened with."""
    for view in sorted(cp.active_frames(), key=lambda v: v.frame):
        if view.frame < frame:
            continue
        change = _change(view, path)
        if change is not None:
            return change.before
    return None
