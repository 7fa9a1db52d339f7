"""Rewinds as the front door does them: over the open thread's frames and variables, with
the checks every asker shares (a cell running, a ledger that cannot be written) said the same
way for the magics, the rewind control, the sidebar and scripts.

`Workspace` (workspace.py) calls these under its `frame_lock`; the frame stack itself
(`frames/`) plans and carries the rewinds out.

The rewind's machinery (`frames/frame_rewind.py`, `rewind_plan.py`, `restore.py`, `undo.py`,
`call_plan.py`) is imported by the function that first needs it: a start and a plain cell load
none of it (`tests/kernel/test_kernel_lazy_start.py`).

Must never: take the `frame_lock` (the caller holds it once), turn a frame id into text, or
read a rewind's scope from free text (it is a `RewindScope` from the request to the record).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..durable.journal import JournalError
from ..frames.file_checkpoints import FileCheckpoints, RewindError, RewindPlan
from ..frames.recovery import CallRewindError
from ..frames.recovery import rewind_call as rewind_one_call
from ..frames.store_budget import usage
from ..frames.variable_checkpoints import VariableCheckpoints, VariableStep
from ..ledger.frame_view import FrameView
from ..ledger.rewind_state import rewind_state
from ..ledger.thread_ledger import CallRewound, ProjectionItem
from ..types.rewind_scope import RestoreOperation, RewindScope

__all__ = ["FramePage", "Preview", "RestoreProgress", "RewindScope"]

RUNNING = "a cell is running; {what} when it has finished (or interrupt it first)"
"""What a frontend's rewind, resume or undo says while a cell's frame is open."""


@dataclass(frozen=True)
class Preview:
    """What a rewind would do, computed without touching anything."""

    frame: int
    """The frame the rewind goes back to just before."""
    scope: RewindScope
    """What it would restore."""
    plan: RewindPlan | None
    """Files and conversation: the frames popped, each path's fate, messages dropped; None
    for a rewind of the variables only."""
    variables: list[VariableStep] = field(default_factory=list)
    """What it would do to each user variable (empty when the scope leaves them alone)."""


@dataclass(frozen=True)
class FramePage:
    """A page of frames, newest first, for the sidebar."""

    frames: list[FrameView]
    """The page's frames."""
    total: int
    """Frames of the thread in all."""
    evicted: dict[int, list[str]]
    """Frame -> paths whose large pre-image the disk budget evicted (this page's frames)."""


@dataclass(frozen=True, slots=True)
class RestoreProgress:
    """How far a rewind, undo or resume (or the first snapshot's scan) has come: told to
    `Workspace.progress_listeners` before its first path, after each one (the scan: a few
    times a second), and once `finished` (done or failed)."""

    operation: RestoreOperation
    """What is restoring the paths."""
    done: int
    """Paths carried out so far."""
    total: int
    """Paths it carries out in all (0 for a rewind of the conversation or variables only)."""
    finished: bool = False
    """The operation has ended (done or failed); no more reports follow for it."""
    path: str = ""
    """`large_capture`: the file being copied (`done` and `total` are then its bytes)."""


Progress = Callable[[int, int], None]
"""`(done, total)` paths, as `frames/rewind_plan.py` tells it."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic collector off for one rewind, undo, resume or preview: its records of
    20,000 paths are young objects that would trigger collection after collection, none of
    them garbage. On again after, whatever happened (and left off if it was off)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _refuse_if_running(checkpoints: FileCheckpoints, refuse: bool, what: str) -> None:
    if refuse and checkpoints.is_open:
        raise RewindError(RUNNING.format(what=what))


@gc_paused()
def rewind(
    checkpoints: FileCheckpoints,
    variables: VariableCheckpoints | None,
    target: int | str,
    scope: RewindScope,
    *,
    force: bool,
    include_external: bool,
    refuse_if_running: bool,
    keep_uncertain: bool = False,
    progress: Progress | None = None,
) -> ProjectionItem:
    _refuse_if_running(checkpoints, refuse_if_running, "rewind")
    from ..frames import frame_rewind  # loads with the first rewind

    frame_id = frame_rewind.resolve_target(checkpoints, target)
    namespace = variables if scope.variables else None
    try:
        return frame_rewind.rewind(
            checkpoints,
            frame_id,
            force=force,
            files=scope.files,
            conversation=scope.conversation,
            include_external=include_external,
            keep_uncertain=keep_uncertain,
            progress=progress,
            variables=(lambda: namespace.rewind(frame_id)) if namespace is not None else None,
        )
    except JournalError as exc:
        raise RewindError(f"rewind: the ledger could not be written ({exc})") from exc


@gc_paused()
def resume(
    checkpoints: FileCheckpoints,
    variables: VariableCheckpoints | None,
    *,
    force: bool,
    retry: bool,
    skip_failed: bool,
    refuse_if_running: bool,
    progress: Progress | None = None,
) -> ProjectionItem:
    _refuse_if_running(checkpoints, refuse_if_running, "resume the rewind")
    state = rewind_state(checkpoints.ledger)
    record = state.pending
    command = "rewind --resume" if retry else "rewind --skip-failed"
    if record is None:
        raise RewindError(
            f"{command}: no rewind was interrupted or is incomplete; nothing to resume"
        )
    if not retry and not state.failed:
        raise RewindError(
            "rewind --skip-failed: the pending rewind failed no path (it was "
            "interrupted); `%logician rewind --resume` completes it"
        )
    namespace = variables if record.variables else None
    from ..frames import frame_rewind  # loads with the first rewind

    try:
        return frame_rewind.complete(
            checkpoints,
            record,
            resume=retry,
            force=force,
            skip_failed=skip_failed,
            progress=progress,
            variables=(lambda: namespace.rewind(record.frame)) if namespace is not None else None,
        )
    except JournalError as exc:
        raise RewindError(f"rewind --resume: the ledger could not be written ({exc})") from exc


@gc_paused()
def undo(
    checkpoints: FileCheckpoints,
    variables: VariableCheckpoints | None,
    *,
    force: bool,
    skip_failed: bool,
    refuse_if_running: bool,
    progress: Progress | None = None,
) -> ProjectionItem:
    _refuse_if_running(checkpoints, refuse_if_running, "undo")
    from ..frames import undo as undo_  # loads with the first rewind

    try:
        return undo_.undo_rewind(
            checkpoints, variables, force=force, skip_failed=skip_failed, progress=progress
        )
    except JournalError as exc:
        raise RewindError(f"undo: the ledger could not be written ({exc})") from exc


def undo_refusal(checkpoints: FileCheckpoints | None) -> str | None:
    """Why an undo would be refused now (its one-line reason), or None when one is possible."""
    if checkpoints is None:
        return "undo: frames are off for this workspace"
    from ..frames import undo as undo_  # loads with the first rewind

    try:
        undo_.undoable(checkpoints)
    except RewindError as exc:
        return str(exc)
    return None


@gc_paused()
def rewind_call(
    checkpoints: FileCheckpoints, call_id: str, *, force: bool
) -> CallRewound | ProjectionItem:
    """A call of a closed, active frame: its credited changes through an undoable plan
    (call_plan.py); else a call a dead kernel cut off, from the pre-images it recorded."""
    from ..frames import call_plan  # loads with the first rewind

    try:
        if call_plan.call_changes(checkpoints, call_id) is not None:
            return call_plan.rewind_call(checkpoints, call_id, force=force)
        return rewind_one_call(checkpoints.ledger, checkpoints.snapshotter, call_id, force=force)
    except CallRewindError as exc:
        raise RewindError(str(exc)) from None
    except JournalError as exc:
        raise RewindError(f"rewind --call: the ledger could not be written ({exc})") from exc


@gc_paused()
def preview_call(checkpoints: FileCheckpoints, call_id: str, *, force: bool) -> RewindPlan:
    from ..frames import call_plan  # loads with the first rewind

    return call_plan.preview_call(checkpoints, call_id, force=force)


@gc_paused()
def preview(
    checkpoints: FileCheckpoints,
    variables: VariableCheckpoints | None,
    target: int | str,
    scope: RewindScope,
    *,
    force: bool,
    include_external: bool,
    keep_uncertain: bool = False,
) -> Preview:
    from ..frames import frame_rewind  # loads with the first rewind

    frame_id = frame_rewind.resolve_target(checkpoints, target)
    plan = (
        frame_rewind.plan_rewind(
            checkpoints,
            frame_id,
            force=force,
            include_external=include_external,
            keep_uncertain=keep_uncertain,
        )
        if scope.files or scope.conversation
        else None
    )
    steps = variables.plan(frame_id) if variables is not None and scope.variables else []
    return Preview(frame_id, scope, plan, steps)


def cell_target(checkpoints: FileCheckpoints, frame: int | None, cell_id: str | None) -> int:
    """The frame a frontend names: by id, else the newest active frame of its cell."""
    if cell_id is None:
        if frame is None:
            raise RewindError("frame: give a frame id or a cell id")
        from ..frames import frame_rewind  # loads with the first rewind

        return frame_rewind.resolve_target(checkpoints, frame)
    matches = [f.frame for f in checkpoints.active_frames() if f.cell_id == cell_id]
    if not matches:
        raise RewindError(
            "this cell has no frame left to rewind (it has not run on this kernel's thread, "
            "did no work, or was already rewound)"
        )
    return matches[-1]


def page(checkpoints: FileCheckpoints | None, offset: int, limit: int) -> FramePage:
    if checkpoints is None:
        return FramePage([], 0, {})
    frames = checkpoints.frames()
    ids = sorted(frames, reverse=True)
    shown = [frames[i] for i in ids[offset : offset + limit]]
    return FramePage(shown, len(ids), evicted(checkpoints, shown))  # 10,000 frames stay cheap


def evicted(checkpoints: FileCheckpoints, views: list[FrameView]) -> dict[int, list[str]]:
    """Frame -> paths whose large pre-image the disk budget evicted, for these frames (empty
    without a side store)."""
    budget = checkpoints.budget
    if budget is None:
        return {}
    return {u.frame: u.evicted for u in usage(views, budget.large.store) if u.evicted}
