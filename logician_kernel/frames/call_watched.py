"""`rewind --call ID` of a `bash` call a dead kernel cut off, whose writes were watched exactly
(`call_watch.py` recorded them, `ledger/settle.py` offered the call): its changes, each path
the call's processes changed from its state in the snapshot taken as the call began to its
state when the restart closed the killed frame.

The changes go through `call_plan.py`'s recorded plan like a closed frame's call: a path
changed since the restart (or by a later frame) is a conflict left alone unless `--force`, a
path another process also wrote while the call ran is one too, a crash mid-way is resumed
by `rewind --resume`, and `%logician undo` takes it back.

Must never: name a path the records do not name, or read a pre-image from anything but the
call's baseline snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ledger.settle import watched
from ..ledger.thread_ledger import FrameClose, RestorableCall
from ..snapshots.git_snapshot import Snapshot, SnapshotError
from ..types.path_states import PathChange, PathState
from .rewind_types import RewindError

if TYPE_CHECKING:
    from .file_checkpoints import FileCheckpoints

BASIS = "written by a process of the call (exact attribution, recorded as it ran)"


def watched_changes(
    checkpoints: FileCheckpoints, call_id: str
) -> tuple[int, list[PathChange]] | None:
    """The killed frame and the watched call's changes, or None when `call_id` is no call
    the restart offered from its watch records."""
    entries = checkpoints.ledger.entries
    offered = next(
        (e for e in entries if isinstance(e, RestorableCall) and e.call_id == call_id), None
    )
    seen = watched(checkpoints.ledger, call_id) if offered is not None else None
    if offered is None or seen is None or seen.not_exact or seen.baseline is None:
        return None
    frame = offered.frame
    view = checkpoints.frames().get(frame) if frame is not None else None
    closed = next((e for e in entries if isinstance(e, FrameClose) and e.frame == frame), None)
    if frame is None or view is None or closed is None or closed.post_tree is None:
        raise RewindError(
            f"rewind --call: frame {frame} of call {call_id} has no snapshot of how the kernel "
            "left it; `%logician rewind` of the frame restores all it changed"
        )
    if view.status != "active":
        raise RewindError(
            f"rewind --call: frame {frame} of call {call_id} was rewound already "
            "(`%logician undo` brings it back first)"
        )
    snap = checkpoints.snapshotter
    if snap is None:
        raise RewindError("rewind --call: file capture is unavailable for this session")
    try:
        diff, _ = snap.diff(Snapshot(tree=seen.baseline), Snapshot(tree=closed.post_tree))
    except (SnapshotError, OSError) as exc:
        raise RewindError(f"rewind --call: the call's snapshots cannot be read ({exc})") from None
    mine, others = set(seen.paths), set(seen.others)
    changes = []
    for change in diff:
        if change.path not in mine:
            continue  # unchanged since, or changed by someone else: never the call's
        update: dict[str, object] = {
            "by": "tool",
            "call_id": call_id,
            "tool": offered.name,
            "basis": BASIS,
        }
        if change.path in others:
            update["outside_write"] = "also written by another process while the call ran"
        changes.append(change.model_copy(update=update))
    # What the call changed that no snapshot captures (ignored, too large): said, not restored.
    listed = {c.path for c in diff}
    for skipped in closed.skipped:
        if skipped.path in mine and skipped.path not in listed:
            changes.append(
                PathChange(
                    path=skipped.path,
                    before=PathState(kind="uncaptured", reason=skipped.reason),
                    after=snap.hash_path(skipped.path),  # as it is: never a conflict
                    by="tool",
                    call_id=call_id,
                    tool=offered.name,
                    basis=BASIS,
                )
            )
    return frame, changes
