"""File checkpoints: the frame stack and per-frame pre-images (frame_rewind.py rewinds it).

Owns the life of a frame (open -> pre-snapshot -> the cell runs -> post-snapshot -> diff ->
close) and the rewind that pops frames. The stack itself is derived from the thread ledger,
so a kernel restart sees the same frames. Restores are per file: a path that no popped frame
changed is never touched, and a path changed by something else since the frame recorded it is
a conflict left alone unless forced.

Must never: raise into the user's cell during capture (failures are recorded in the frame),
run a whole-tree checkout or clean, or drop an entry from the ledger.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TextIO

from ..durable.redact import redact
from ..ledger.entries import FRAME_KINDS, build_validators
from ..ledger.frame_view import FrameView
from ..ledger.thread_ledger import (
    FileCheckpoint,
    FrameClose,
    FrameOpen,
    FrameOutcome,
    FramePreSnapshot,
    Recovery,
    ThreadLedger,
)
from ..snapshots.first_snapshot_wait import Deferred, FirstSnapshotWait
from ..snapshots.git_snapshot import GitSnapshotter, Snapshot, SnapshotError
from ..snapshots.idle_look import IdleLook
from ..snapshots.perms import fs_clock
from ..snapshots.stat_memory import StatMemory
from ..snapshots.tree_watch import TREE
from ..snapshots.write_audit import AUDIT
from .attribution import SaveLog, attribute, tool_names
from .gc_pause import gc_paused
from .rewind_types import RewindError, RewindPlan
from .store_budget import SideStoreBudget
from .write_rate import RATE

__all__ = ["FileCheckpoints", "RewindError", "RewindPlan"]
"""The rewind's error and plan live in rewind_types.py; callers import them from here."""


@dataclass
class _OpenFrame:
    frame: int
    pre: Snapshot | None
    started: float
    captured: dict[str, str | None] = field(default_factory=dict)
    """Paths a tool captured before writing -> its call id (None for cell code)."""
    by_call: set[tuple[str, str]] = field(default_factory=set)
    """(path, call id) pairs captured: each call records its own pre-image of a path."""
    deferred: Deferred | None = None
    """Opened while the first snapshot ran: its pre-snapshot waits for a write (first_snapshot_wait.py)."""


class FileCheckpoints:
    """The frame stack of one thread, over one workspace snapshotter."""

    def __init__(
        self,
        ledger: ThreadLedger,
        snapshotter: GitSnapshotter | None,
        *,
        capture_disabled_reason: str | None = None,
    ) -> None:
        self.ledger = ledger
        self.snapshotter = snapshotter
        self.capture_disabled_reason = capture_disabled_reason
        self._open: _OpenFrame | None = None
        # The snapshotter is not thread-safe; the warm-up thread and cells take turns.
        self.snap_lock = threading.Lock()
        self._frames_lock = threading.Lock()
        self._warmup: threading.Thread | None = None
        self._first = (
            FirstSnapshotWait(
                snapshotter,
                self.snap_lock,
                lambda: self._warmup,
                self._record_late_pre,
                say=lambda text, stream: self._say(text, stream),
            )
            if snapshotter is not None
            else None
        )
        self.say: Callable[[str, TextIO | None], object] | None = None
        """Says a notice about the running cell (the workspace's notice sink; `ui.notices`
        decides where it goes); None: printed on the stream."""
        self.attribute_changes = True
        """Record who made each change (cell, tool call, external); off: all are the cell's."""
        self.saves = SaveLog()
        """Document saves the Lab reported (`note_save`), attributed to the open frame."""
        large = snapshotter.large if snapshotter is not None else None
        self.budget = SideStoreBudget(self.frames, large, self._open_large) if large else None
        """The side store's budget keeper; None when large files are not captured."""
        self.idle = IdleLook(self.snap_lock, self._look_between_cells, self._look_failed)
        """Looks at the workspace between cells (a stat scan's cell after a pause walks once)."""

    def _say(self, text: str, stream: TextIO | None) -> None:
        if self.say is not None:
            self.say(text, stream)
        else:
            print(text, file=stream or sys.stderr, flush=True)

    def _look_between_cells(self) -> bool:
        return self.snapshotter is not None and self.snapshotter.look_between_cells()

    def _look_failed(self, exc: Exception) -> None:
        if self.snapshotter is not None:
            self.snapshotter.reset()  # the next frame re-reads the workspace in full

    def _open_large(self) -> set[str]:
        current = self._open
        pre = current.pre if current is not None else None
        return {s.sha for s in pre.large.values() if s.sha} if pre is not None else set()

    def drain_notices(self) -> list[str]:
        """Notices of the side store (evictions, a paused capture) not yet shown."""
        if self.budget is None:
            return []
        notices, self.budget.large.notices[:] = list(self.budget.large.notices), []
        return notices

    def start_warmup(self) -> None:
        """Take the first (full) snapshot in the background, off the first cell's path."""
        if self.snapshotter is None or self._warmup is not None:
            return
        if self._first is not None:
            self._first.install()  # cells that touch no file then never wait for it
        self._warmup = threading.Thread(
            target=self._first_snapshot, name="logician-warmup", daemon=True
        )
        self._warmup.start()

    def _first_snapshot(self) -> None:
        self._snapshot()
        # then what the first cell's frame would otherwise build on its own path
        build_validators(FRAME_KINDS)

    @property
    def warming_up(self) -> bool:
        return self._warmup is not None and self._warmup.is_alive()

    def wait_for_first_snapshot(self, timeout: float | None = None) -> None:
        """Block until the background first snapshot is done (tests, benchmarks)."""
        if self._warmup is not None:
            self._warmup.join(timeout)

    @property
    def first_snapshot_blocks(self) -> bool:
        """A frame opening now waits for the first snapshot (a stat-scan detector: no cheap
        way to learn what a cell changed)."""
        return self.warming_up and (self._first is None or not self._first.can_defer())

    # -- the frame stack, derived from the ledger ---------------------------------------------

    def frames(self) -> dict[int, FrameView]:
        """Every frame of the thread by id (open, active and rewound)."""
        # Folded incrementally: cost per cell stays flat however long the thread grows. A
        # frontend's comm may ask from a subshell thread while a cell appends: one folder at a
        # time, or an entry could be folded twice.
        with self._frames_lock:
            frames: dict[int, FrameView] = self.ledger.fold("frames")  # seeded by its checkpoint
            return frames

    def active_frames(self) -> list[FrameView]:
        return [f for f in self.frames().values() if f.status == "active"]

    @property
    def is_open(self) -> bool:
        return self._open is not None

    @property
    def pre_deferred(self) -> bool:
        """The open frame's pre-snapshot waits for the first snapshot (first_snapshot_wait.py)."""
        return self._open is not None and self._open.deferred is not None

    @property
    def current_frame(self) -> int | None:
        return self._open.frame if self._open is not None else None

    def capture(self, path: str, call_id: str | None = None) -> None:
        """Record `path`'s pre-state in the open frame before a tool writes it (first wins),
        with the tool call that captured it (`call_id`; None for cell code).

        The frame's own snapshots catch the change too; this makes the tool's pre-image
        explicit and durable before the write, whatever happens to the snapshot after it.
        """
        current = self._open
        if current is None or self.snapshotter is None:
            return
        call_id = call_id or AUDIT.current_call() or None
        # The frame keeps the first pre-state of a path; each call still records its own, so a
        # second call cut off mid-write can be rewound to the state just before it.
        if path in current.captured and (call_id is None or (path, call_id) in current.by_call):
            return
        current.captured.setdefault(path, call_id)  # the frame's pre-state: the first capture's
        if call_id is not None:
            current.by_call.add((path, call_id))
        before = self.snapshotter.store_path(path)
        self.ledger.append(
            FileCheckpoint,
            frame=current.frame,
            path=path,
            before=before,
            call_id=call_id,
            durable=True,
        )

    # -- capture ----------------------------------------------------------------------------

    def _snapshot(
        self, *, defer_large: bool = False, opening: bool = False
    ) -> tuple[Snapshot | None, str | None]:
        if self.snapshotter is None:
            return None, self.capture_disabled_reason or "capture is off"
        with self.snap_lock:
            try:
                if defer_large:
                    return self.snapshotter.snapshot_deferring_large(), None
                return self.snapshotter.snapshot(opening=opening), None
            except (SnapshotError, OSError) as exc:
                # The changes drained for this snapshot were not recorded: the next one must
                # re-read the workspace, not inherit the failure.
                self.snapshotter.reset()
                return None, str(exc)

    def _finish_large_in_background(self) -> None:
        """Copy a closed frame's new large files while the cell's reply goes out; the next
        snapshot, rewind or storage report waits for it (they take the same lock)."""
        snap = self.snapshotter
        if snap is None or snap.large is None or not snap.large.pending:
            return
        self.snap_lock.acquire()

        def run() -> None:
            try:
                snap.finish_large()
            except (OSError, SnapshotError) as exc:  # never lost silently: the next cell says so
                snap.large.notices.append(f"Logician: large files were not captured: {exc}")  # type: ignore[union-attr]
            finally:
                self.snap_lock.release()

        threading.Thread(target=run, name="logician-large-capture", daemon=True).start()

    def settle(self) -> None:
        """Wait for a background capture of large files (or a look between cells) to finish;
        no look starts after it (the caller uses the snapshotter next)."""
        self.idle.disarm()
        with self.snap_lock:
            pass

    def open_frame(
        self,
        *,
        execution_count: int | None,
        cell_id: str | None,
        code: str,
        secrets: tuple[str, ...] = (),
    ) -> int:
        """Open a frame and take its pre-snapshot. Never raises for capture problems."""
        self.idle.disarm()  # before the lock: a look holding it finishes, no other starts
        frame_id = max(self.frames(), default=0) + 1
        deferred = self._first.open() if self._first is not None else None
        pre, error = (None, None) if deferred is not None else self._snapshot(opening=True)
        first_line = next((ln for ln in code.splitlines() if ln.strip()), "")
        first_line = redact(first_line, secrets)[:200]  # the ledger never holds a secret
        self.ledger.append(
            FrameOpen,
            frame=frame_id,
            execution_count=execution_count,
            cell_id=cell_id,
            code=first_line,
            pre_tree=pre.tree if pre else None,
            capture_error=error,
            fs_time=fs_clock(),
        )
        self._open = _OpenFrame(
            frame=frame_id, pre=pre, started=time.perf_counter(), deferred=deferred
        )
        if deferred is not None:
            self._first.arm(deferred)  # type: ignore[union-attr]
        RATE.begin()  # after the pre-snapshot: the cell's own writes are measured
        if self.attribute_changes and self.snapshotter is not None:
            AUDIT.begin(self.snapshotter.workspace)
            TREE.begin(self.snapshotter.workspace, busy=AUDIT.busy)
            self.saves.begin()
        return frame_id

    def close_frame(self, outcome: FrameOutcome) -> FrameClose | None:
        """Post-snapshot, diff, keep pre-images, and close durably with the outcome."""
        with gc_paused():  # hundreds of collections in a close of 5,000 paths (gc_pause.py)
            return self._close_frame(outcome)

    def _close_frame(self, outcome: FrameOutcome) -> FrameClose | None:
        current, self._open = self._open, None
        if current is None:
            return None
        RATE.end()  # before the post-snapshot (write_rate.py)
        attributing = AUDIT.recording
        evidence, saves = AUDIT.end(), self.saves.end()
        tree = TREE.end() if attributing else None
        late = None
        if current.deferred is not None and self._first is not None:
            late = self._first.close(current.deferred)
            if current.deferred.pre is None:  # wrote nothing: the first snapshot may still run
                return self._close_unwritten(current, outcome, late)
            current.pre = current.deferred.pre
        closing = StatMemory.clock()  # a note of the snapshot below reads this or later
        post, error = self._snapshot(defer_large=True)
        # A stat scan read the workspace once, after the cell: what changed between cells is
        # in the frame's start, not in its changes (see scan_detector.py).
        start = self.snapshotter.take_start() if self.snapshotter is not None else None
        opened_tree = current.pre.tree if current.pre is not None else None
        if start is not None and current.pre is not None:
            current.pre = start
        changes, skipped = [], []
        if current.pre is not None and post is not None:
            try:
                changes, skipped = self.snapshotter.diff(current.pre, post)  # type: ignore[union-attr]
                for change in changes:
                    if change.before.kind == "blob":
                        self.snapshotter.own_blob(change.before.sha)  # type: ignore[union-attr, arg-type]
                if attributing and changes:
                    changes = attribute(
                        changes,
                        evidence,
                        saves,
                        workspace=self.snapshotter.workspace,  # type: ignore[union-attr]
                        tool_names=tool_names(
                            self.ledger.entries,
                            current.frame,
                            {*evidence.callers(), *evidence.windows, *current.captured.values()},
                        ),
                        checkpointed=current.captured,
                        tree=tree,
                        looked=partial(self.snapshotter.looked_since, since=closing),  # type: ignore[union-attr]
                    )
            except (SnapshotError, OSError) as exc:
                error = str(exc)
        elif error is None:
            error = "no pre-snapshot for this frame"
        error = "; ".join(e for e in (error, late) if e) or None
        closed = self.ledger.append(
            FrameClose,
            frame=current.frame,
            outcome=outcome,
            post_tree=post.tree if post else None,
            start_tree=start.tree if start is not None and start.tree != opened_tree else None,
            changes=changes,
            skipped=skipped,
            capture_error=error,
            duration_ms=round((time.perf_counter() - current.started) * 1000, 3),
            # A frame that changed nothing has nothing to lose in a crash (recovery closes it
            # as `killed`, with no changes): its records reach the disk with the next fsync.
            durable=bool(changes or skipped or error),
        )
        self._finish_large_in_background()
        self.idle.arm()
        return closed

    def _record_late_pre(self, pre: Snapshot) -> None:
        current = self._open
        if current is not None:
            self.ledger.append(
                FramePreSnapshot, frame=current.frame, pre_tree=pre.tree, durable=True
            )

    def _close_unwritten(
        self, current: _OpenFrame, outcome: FrameOutcome, error: str | None
    ) -> FrameClose:
        """Close a frame that opened during the first snapshot and made no write we saw:
        nothing to diff, and no waiting for that snapshot (`error`: what changed unseen)."""
        closed: FrameClose = self.ledger.append(
            FrameClose,
            frame=current.frame,
            outcome=outcome,
            post_tree=None,
            changes=[],
            skipped=[],
            capture_error=error,
            duration_ms=round((time.perf_counter() - current.started) * 1000, 3),
            durable=error is not None,
        )
        return closed

    def note_save(self, path: str, at: str) -> bool:
        """The Lab saved `path` (workspace-relative) at `at`; True if a frame was open."""
        recorded = self.saves.note(path, at)
        if not recorded and self.snapshotter is not None:
            self.snapshotter.read_before_next_frame()  # a save between cells
        return recorded

    def recover_incomplete(self, *, failed: str | None = None) -> list[int]:
        """Close frames whose kernel died mid-cell, diffing their pre-tree against now; with
        `failed` (why the ledger could not be written), frames this kernel left running when
        their close failed, as `failed` with that reason."""
        closed = []
        for view in list(self.frames().values()):
            if view.status != "open" or (self._open is not None and view.frame == self._open.frame):
                continue
            changes, skipped, error = [], [], None
            post, error = self._snapshot()
            if post is not None and view.pre_tree is not None:
                try:
                    pre = Snapshot(tree=view.pre_tree)
                    changes, skipped = self.snapshotter.diff(pre, post)  # type: ignore[union-attr]
                    # Uncaptured paths of the lost pre-snapshot are unknown: do not guess.
                    skipped = [s for s in skipped if s.exists_after and not s.existed_before]
                    # So are its large files (the ledger keeps only the git tree).
                    changes = [c for c in changes if c.after.kind != "large" or c.before.exists]
                except (SnapshotError, OSError) as exc:
                    error = str(exc)
            why = f"its close could not be written: {failed}" if failed else None
            self.ledger.append(
                FrameClose,
                frame=view.frame,
                outcome="failed" if failed else "killed",
                post_tree=post.tree if post else None,
                changes=changes,
                skipped=skipped,
                capture_error="; ".join(e for e in (why, error) if e) or None,
            )
            self.ledger.append(
                Recovery,
                what="journal-error" if failed else "incomplete-frame",
                frame=view.frame,
                detail=(
                    f"frame {view.frame} (In [{view.execution_count}]) was left running when "
                    f"the ledger could not be written ({failed}); closed it as 'failed' with "
                    f"{len(changes)} change(s) found since it opened"
                    if failed
                    # Mid-cell, or after the cell while its close was being written: which
                    # one is unknown here, so neither is claimed.
                    else f"frame {view.frame} (In [{view.execution_count}]) never closed: the kernel "
                    f"died before its end was recorded; closed it as 'killed' with "
                    f"{len(changes)} change(s) found since it opened"
                ),
                durable=True,
            )
            closed.append(view.frame)
        return closed
