"""`rewind --call ID` for any tool: put back what one call of a closed frame changed (its
paths as attribution credited them: a `write`, an `edit`, the files a `bash` or `python` call's
processes wrote, an MCP server's writes during the call; or a `bash` call a dead kernel cut
off, from what its watch recorded, `call_watched.py`), leaving the rest of the frame.

It goes through the same recorded plan as a frame rewind (`rewind_plan.py`), with no frame
popped and only files in its scope, so a crash mid-way is resumed by `rewind --resume` and
`%logician undo` takes it back.

Must never: touch a path the call did not change, revert a change someone else made on top of
the call's (a later frame's change, an outside write, a file changed since the frame closed)
unless `force`, or pop a frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ledger.thread_ledger import ProjectionItem, RestoredPath, RewindPlanned
from ..types.path_states import PathChange
from . import rewind_plan
from .call_watched import watched_changes
from .frame_rewind import complete
from .restore import SKIP_TEXT, still_as_left
from .rewind_types import RewindError, RewindPlan

if TYPE_CHECKING:
    from .file_checkpoints import FileCheckpoints


def call_changes(checkpoints: FileCheckpoints, call_id: str) -> tuple[int, list[PathChange]] | None:
    """The active frame that ran `call_id` and the changes credited to it, or None when no
    closed, active frame credits any change to that call (nor, for a watched call a dead
    kernel cut off, its watch records: `call_watched.py`)."""
    for view in reversed(checkpoints.active_frames()):  # the newest, should an id repeat
        mine = [c for c in view.changes if c.call_id == call_id and c.by == "tool"]
        if mine:
            return view.frame, mine
    return watched_changes(checkpoints, call_id)


def plan_call(
    checkpoints: FileCheckpoints, frame: int, changes: list[PathChange], *, force: bool
) -> RewindPlan:
    """What restoring the call's changes would do, touching nothing."""
    checkpoints.settle()
    later: dict[str, int] = {}
    for view in checkpoints.active_frames():
        if view.frame > frame:
            for change in view.changes:
                later.setdefault(change.path, view.frame)
    plan = RewindPlan(frames=[])
    snap = checkpoints.snapshotter
    for change in changes:
        path, target = change.path, change.before
        conflict = ""
        if path in later:
            conflict = (
                f"frame {later[path]} changed it again after the call; rewind that frame first "
                "(`--force` restores it anyway)"
            )
        elif change.outside_write:
            conflict = f"also changed outside this kernel ({change.outside_write}); `--force` restores it anyway"
        else:
            after = change.after
            if checkpoints.budget is not None:
                after = checkpoints.budget.large.resolve(path, after)
            current = snap.hash_path(path) if snap is not None else None
            if not still_as_left(current, after):
                conflict = f"changed since frame {frame} recorded it; `--force` restores it anyway"
        if conflict and not force:
            plan.conflicts.append(RestoredPath(path=path, action="conflict", detail=conflict))
        elif target.kind == "uncaptured":
            reason = SKIP_TEXT[target.reason or "not-a-file"]
            plan.skipped.append(
                RestoredPath(path=path, action="skipped", detail=f"not captured ({reason})")
            )
        else:
            plan.restore.append((path, target))
            if not conflict and change.after.kind == "absent" and target.kind != "absent":
                plan.recreate.add(path)  # the call deleted it and it is still gone
    return plan


def preview_call(checkpoints: FileCheckpoints, call_id: str, *, force: bool) -> RewindPlan:
    """What `rewind --call ID` would do, touching nothing (`--dry-run`)."""
    found = call_changes(checkpoints, call_id)
    if found is None:
        raise RewindError(f"rewind --call: no active frame credits a change to call {call_id!r}")
    return plan_call(checkpoints, found[0], found[1], force=force)


def rewind_call(checkpoints: FileCheckpoints, call_id: str, *, force: bool) -> ProjectionItem:
    """Restore what `call_id` changed through a recorded, undoable plan."""
    found = call_changes(checkpoints, call_id)
    if found is None:
        raise RewindError(f"rewind --call: no active frame credits a change to call {call_id!r}")
    if checkpoints.snapshotter is None:
        raise RewindError("rewind --call: file capture is unavailable for this session")
    frame, changes = found
    _refuse_twice(checkpoints, call_id)
    plan = plan_call(checkpoints, frame, changes, force=force)
    record = rewind_plan.write_plan(
        checkpoints.ledger,
        checkpoints.snapshotter,
        frame,
        plan,
        since=None,  # no directory is the call's debris to remove: only its paths move
        files=True,
        conversation=False,
        variables=False,
        force=force,
        call_id=call_id,
    )
    return complete(checkpoints, record)


def _refuse_twice(checkpoints: FileCheckpoints, call_id: str) -> None:
    entries = checkpoints.ledger.entries
    plans = {e.seq for e in entries if isinstance(e, RewindPlanned) and e.call_id == call_id}
    done = [e for e in entries if isinstance(e, ProjectionItem) and e.plan in plans]
    undone = {e.undoes for e in entries if isinstance(e, ProjectionItem) and e.undoes}
    for item in done:
        if item.seq not in undone:
            raise RewindError(
                f"rewind --call: call {call_id} was already rewound at {item.time[:19]} UTC "
                f"(ledger entry {item.seq}); `%logician undo` takes that back"
            )
