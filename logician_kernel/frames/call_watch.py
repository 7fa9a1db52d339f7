"""A `bash` call's writes, recorded in the ledger while it runs, so a call a dead kernel cut off
can be offered for `rewind --call` (`ledger/settle.py`) instead of only quarantined.

fanotify reports a write after it happened: no pre-image can be read at the first write. The
pre-images are the snapshot taken as the call begins instead (its git tree is the `start`
record's `baseline`, written durably before the call runs), and the records name the paths:
as the tree watcher reads events, a thread of the watch appends a `seen` record at most every
`FLUSH_EVERY` (one fsync each, never one per path) with the paths the call's processes
changed first since the last, and the paths other processes changed meanwhile; when the call returns, every event queued until
then is read and an `end` record closes the call, after any `seen` record on its way (never
before one, and nothing after it). After a kill -9 the ledger holds the
baseline and the paths written up to the last batch read (`end` missing: the last instant's
writes may be too).

Exact only with fanotify attribution, no event lost and no other watched call running at the
same time; otherwise a record says why (`not_exact`) and the call stays quarantined.

Must never: raise into the call (a watch that cannot start records why and lets it run), or
take a snapshot that walks the whole workspace (`GitSnapshotter.look_in_frame` refuses).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..ledger.thread_ledger import CallWatch, ThreadLedger
from ..snapshots.git_snapshot import SnapshotError
from ..snapshots.tree_watch import LABELS, TREE
from ..snapshots.write_audit import AUDIT

if TYPE_CHECKING:
    from ..snapshots._processes import Who
    from .file_checkpoints import FileCheckpoints

FLUSH_EVERY = 0.05
"""A call's `seen` records are at most this often (seconds): a storm of writes costs one fsync
per interval, never one per path. A write in the last interval before a kill -9 may be
unrecorded (the notice says so when the `end` record is missing)."""


class _Watch:
    """One call's paths not yet recorded."""

    def __init__(self, ledger: ThreadLedger, frame: int, call_id: str) -> None:
        self.ledger, self.frame, self.call_id = ledger, frame, call_id
        self.seen: set[str] = set()
        self.others: set[str] = set()
        self.new: list[str] = []
        self.new_others: list[str] = []
        self.not_exact = ""
        self.said = ""
        self.ending = False
        self.writing = threading.Lock()
        """Held while one record is taken and appended: the flusher's `seen` record, once it
        has taken paths, lands before the call's `end` (never after it, nor lost to it)."""
        self.ended = False

    def note(self, rel: str, who: Who | None, kernel: bool) -> None:
        if who is None:
            self.not_exact = self.not_exact or (
                f"the writer of {rel} exited before it could be identified"
            )
        elif who.own and not (who.earlier or who.server or kernel):
            if rel not in self.seen:
                self.seen.add(rel)
                self.new.append(rel)
        elif rel not in self.others:
            self.others.add(rel)
            self.new_others.append(rel)

    def record(self, phase: str) -> None:
        """Append what is new (always for `end`), durably: one fsync for the batch. The
        watcher's thread and the call's may both record: one at a time, and nothing after
        `end`."""
        with self.writing:
            if self.ended:
                return
            with _HUB.lock:
                paths, others, self.new, self.new_others = self.new, self.new_others, [], []
                not_exact = self.not_exact if self.not_exact != self.said else ""
                if phase != "end" and not (paths or others or not_exact):
                    return
                self.said = self.not_exact
            self.ended = phase == "end"
            self.ledger.append(
                CallWatch,
                frame=self.frame,
                call_id=self.call_id,
                phase=phase,
                not_exact=not_exact,
                paths=paths,
                others=others,
                durable=True,
            )


class _Hub:
    """The tree watcher's event sink while any call is watched, and the thread that records
    what it noted (`FLUSH_EVERY`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.watches: dict[str, _Watch] = {}
        self.wake = threading.Event()
        self.flusher: threading.Thread | None = None

    def event(self, rel: str, who: Who | None, kernel: bool) -> None:
        with self.lock:
            for watch in self.watches.values():
                watch.note(rel, who, kernel)

    def read_done(self, lost: bool) -> None:
        if lost:
            with self.lock:
                for watch in self.watches.values():
                    watch.not_exact = watch.not_exact or "the kernel dropped file events"
        self.wake.set()  # the tree watcher's thread goes back to reading at once

    def _flush(self) -> None:
        while True:
            self.wake.wait()
            with self.lock:
                if not self.watches:
                    self.flusher = None
                    return
                self.wake.clear()
                watches = [w for w in self.watches.values() if not w.ending]
            for watch in watches:
                try:
                    watch.record("seen")
                except OSError:  # a ledger that cannot be written: said in the `end` record
                    watch.not_exact = watch.not_exact or "its paths could not be recorded"
            time.sleep(FLUSH_EVERY)  # what arrives meanwhile goes into the next record

    def add(self, watch: _Watch) -> None:
        with self.lock:
            self.watches[watch.call_id] = watch
            if len(self.watches) > 1:  # whose process wrote what can no longer be told
                for each in self.watches.values():
                    each.not_exact = each.not_exact or "another tool call ran at the same time"
            TREE.sink = self
            if self.flusher is None:
                self.flusher = threading.Thread(
                    target=self._flush, name="logician-call-watch", daemon=True
                )
                self.flusher.start()

    def remove(self, watch: _Watch) -> None:
        with self.lock:
            self.watches.pop(watch.call_id, None)
            if not self.watches:
                TREE.sink = None
                self.wake.set()  # the flusher ends


_HUB = _Hub()


@contextmanager
def watch(checkpoints: FileCheckpoints, call_id: str) -> Iterator[None]:
    """Record the writes of the processes `call_id` starts while the block runs."""
    started = _start(checkpoints, call_id)
    try:
        yield
    finally:
        if started is not None:
            started.ending = True
            TREE.drain()  # every event queued until the call returned
            _HUB.remove(started)
            try:
                started.record("end")
            except OSError:  # never into the call; the restart then says the list may be short
                pass


def _start(checkpoints: FileCheckpoints, call_id: str) -> _Watch | None:
    frame, snap = checkpoints.current_frame, checkpoints.snapshotter
    if frame is None or snap is None or not AUDIT.recording:
        return None  # no frame, no capture or no attribution: nothing to rewind from
    why = ""
    if TREE.mode != "fanotify":
        why = f"its writes are attributed {LABELS[TREE.mode or 'time']}, not exactly"
    elif checkpoints.warming_up or checkpoints.pre_deferred:
        why = "the workspace's first snapshot was still being taken"
    watch = _Watch(checkpoints.ledger, frame, call_id)
    baseline = None
    if not why:
        TREE.drain()  # earlier events are not the call's
        _HUB.add(watch)  # from here on, every write is the call's or another's
        try:
            with checkpoints.snap_lock:
                baseline = snap.look_in_frame().tree
        except (SnapshotError, OSError) as exc:
            why = f"no snapshot could be taken as it began ({exc})"
            _HUB.remove(watch)
    try:
        checkpoints.ledger.append(
            CallWatch,
            frame=frame,
            call_id=call_id,
            phase="start",
            baseline=baseline,
            not_exact=why,
            durable=True,  # before the call runs: its effects can only follow
        )
    except OSError:  # the journal's errors (JournalError) included
        why = why or "the ledger could not be written"
    if why:
        _HUB.remove(watch)
        return None
    return watch
