"""The `Workspace`'s rewinds: pop frames (`rewind`), finish one a crash cut short or a path
left incomplete (`resume`), take the last one back (`undo`), put back one tool call's files
(`rewind_call`), and what each would do (`preview`, `preview_call`, `undo_refusal`), with the
frame pages and targets a frontend names; and the progress every long pass reports (a
rewind's paths, a full scan's files, a large file's bytes) to the listeners. A mix-in of
`Workspace` (workspace.py): the work itself is `rewinds.py`'s.

Must never: run a rewind, undo or resume while a frame opens or closes (`frame_lock`), or end
one without its `finished` progress report, however it ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..frames.file_checkpoints import FileCheckpoints, RewindError, RewindPlan
from ..frames.variable_checkpoints import VariableCheckpoints
from ..ledger.frame_view import FrameView
from ..ledger.thread_ledger import CallRewound, ProjectionItem
from . import rewinds
from .open_thread import OpenThread
from .rewinds import FramePage, Preview, RestoreProgress

if TYPE_CHECKING:
    from .call_rows import CallRow

RewindTarget = int | str
"""A frame id, or `--last` / `cell:N` as the user typed it."""


class Rewinding:
    """The rewinds of `Workspace` (see the module docstring)."""

    frame_lock: threading.RLock
    progress_listeners: list[Callable[[RestoreProgress], None]]
    long_work: RestoreProgress | None
    _thread: OpenThread

    if TYPE_CHECKING:

        @property
        def checkpoints(self) -> FileCheckpoints: ...

        @property
        def checkpoints_if_on(self) -> FileCheckpoints | None: ...

        @property
        def variables(self) -> VariableCheckpoints | None: ...

    def rewind(
        self,
        target: RewindTarget,
        scope: rewinds.RewindScope | None = None,
        *,
        force: bool = False,
        include_external: bool = False,
        refuse_if_running: bool = False,
        keep_uncertain: bool = False,
    ) -> ProjectionItem:
        """Pop `target` and every frame after it, restoring what `scope` names (all by
        default). `refuse_if_running`: asked by a frontend while a cell may run (the sidebar,
        another thread), so an open frame refuses it instead of popping the closed frames."""
        with self.frame_lock, self._reporting("rewind") as progress:  # never interleaved
            return rewinds.rewind(  # with a frame opening or closing
                self.checkpoints,
                self.variables,
                target,
                scope or rewinds.RewindScope(),
                force=force,
                include_external=include_external,
                refuse_if_running=refuse_if_running,
                keep_uncertain=keep_uncertain,
                progress=progress,
            )

    def resume(
        self,
        *,
        force: bool = False,
        retry: bool = True,
        skip_failed: bool = False,
        refuse_if_running: bool = False,
    ) -> ProjectionItem:
        """Complete the rewind a crash cut short or a failed path left incomplete (`rewind
        --resume`), or finish an incomplete one without its failed paths (`skip_failed`)."""
        with self.frame_lock, self._reporting("resume") as progress:
            return rewinds.resume(
                self.checkpoints,
                self.variables,
                force=force,
                retry=retry,
                skip_failed=skip_failed,
                refuse_if_running=refuse_if_running,
                progress=progress,
            )

    def undo(
        self, *, force: bool = False, skip_failed: bool = False, refuse_if_running: bool = False
    ) -> ProjectionItem:
        """Take back the most recent rewind exactly (`%logician undo`)."""
        # Like a rewind: never interleaved with a frame's open or close.
        with self.frame_lock, self._reporting("undo") as progress:
            return rewinds.undo(
                self.checkpoints,
                self.variables,
                force=force,
                skip_failed=skip_failed,
                refuse_if_running=refuse_if_running,
                progress=progress,
            )

    @contextmanager
    def _reporting(self, operation: rewinds.RestoreOperation) -> Iterator[rewinds.Progress | None]:
        """The `(done, total)` callback of one rewind, undo or resume for the progress
        listeners, and its `finished` report however it ends."""
        last = [0, 0]

        def tell(done: int, total: int) -> None:
            last[:] = [done, total]
            self._tell(RestoreProgress(operation, done, total))

        try:
            yield tell
        finally:
            self._tell(RestoreProgress(operation, last[0], last[1], finished=True))

    def _scanned(self, done: int, total: int) -> None:
        """A full scan's `(files read, files in all)`, from the thread that scans: the first
        snapshot's, or (`capture`) a later one reading a cell's thousands of new files."""
        checkpoints = self._thread.checkpoints
        snapshotter = checkpoints.snapshotter if checkpoints is not None else None
        later = snapshotter is not None and snapshotter.scanned_once
        operation: rewinds.RestoreOperation = "capture" if later else "first_snapshot"
        self._tell(RestoreProgress(operation, done, total))
        if done >= total:
            self._tell(RestoreProgress(operation, done, total, finished=True))

    def _copying(self, path: str, done: int, total: int) -> None:
        """A large file's `(bytes copied, bytes in all)` into the side store, from the thread
        that copies (after a cell, in the background)."""
        self._tell(RestoreProgress("large_capture", done, total, path=path))
        if done >= total:
            self._tell(RestoreProgress("large_capture", done, total, finished=True, path=path))

    def _tell(self, report: RestoreProgress) -> None:
        self.long_work = None if report.finished else report
        for listener in list(self.progress_listeners):
            listener(report)

    def rewind_call(
        self, call_id: str, *, force: bool = False, refuse_if_running: bool = False
    ) -> CallRewound | ProjectionItem:
        """`rewind --call`: put back the pre-images one tool call recorded (frames stay).
        `refuse_if_running`: asked by a frontend (`frames.rewind_call`) while a cell may run."""
        checkpoints = self.checkpoints
        checkpoints.settle()  # a background capture of large files uses the snapshotter
        with self.frame_lock:
            if refuse_if_running and checkpoints.is_open:
                raise RewindError(rewinds.RUNNING.format(what="rewind the call"))
            return rewinds.rewind_call(checkpoints, call_id, force=force)

    def calls(self, frame: int) -> list[CallRow]:
        """The tool calls of one frame, for the *Rewind this call* buttons."""
        from .call_rows import frame_calls  # loads with the first listing of calls

        return frame_calls(self.checkpoints, frame)

    def frame_of_call(self, call_id: str) -> int | None:
        """The frame a tool call ran in, or None when the ledger knows no such call."""
        from .call_rows import frame_of_call

        return frame_of_call(list(self.checkpoints.ledger.entries), call_id)

    def preview_call(self, call_id: str, *, force: bool = False) -> RewindPlan:
        """What `rewind --call ID` would do, touching nothing (`--dry-run`)."""
        return rewinds.preview_call(self.checkpoints, call_id, force=force)

    def preview(
        self,
        target: RewindTarget,
        scope: rewinds.RewindScope | None = None,
        *,
        force: bool = False,
        include_external: bool = False,
        keep_uncertain: bool = False,
    ) -> Preview:
        """What `rewind(target, scope)` would do, touching nothing (a dry run, the dialog)."""
        return rewinds.preview(
            self.checkpoints,
            self.variables,
            target,
            scope or rewinds.RewindScope(),
            force=force,
            include_external=include_external,
            keep_uncertain=keep_uncertain,
        )

    def undo_refusal(self) -> str | None:
        """Why `undo()` would be refused now (one line), or None when there is a rewind to undo."""
        return rewinds.undo_refusal(self.checkpoints_if_on)

    def target(self, frame: int | None, cell_id: str | None = None) -> int:
        """The active frame a frontend names: by id, else its cell's newest frame."""
        return rewinds.cell_target(self.checkpoints, frame, cell_id)

    def evicted(self, views: list[FrameView]) -> dict[int, list[str]]:
        """Frame -> paths whose large pre-image the disk budget evicted, for these frames."""
        checkpoints = self.checkpoints_if_on
        return rewinds.evicted(checkpoints, views) if checkpoints is not None else {}

    def page(self, offset: int, limit: int) -> FramePage:
        """A page of the thread's frames, newest first (empty when frames are off)."""
        return rewinds.page(self.checkpoints_if_on, offset, limit)
