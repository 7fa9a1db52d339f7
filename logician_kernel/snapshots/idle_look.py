"""Looking at the workspace while the kernel is idle between cells, so that a cell after a
short pause walks it once (after the cell) instead of twice: for the stat scan only.

A stat scan's frame skips its opening drain when the previous drain is fresh
(`scan_detector.FRESH_S`): cells run back to back. After a longer pause the opening drain is
a whole walk of the workspace before the cell may run. `IdleLook` keeps the last drain fresh
for a while after each frame: every `INTERVAL_S` it takes the snapshot lock (never waiting
for it) and the snapshotter reads what changed since its last look
(`GitSnapshotter.look_between_cells`: the drain and capture a frame's opening snapshot would
do, so a file saved during the pause is captured with its saved content, and a cell that
then overwrites it has that content as its pre-image).

Bounded, so an idle kernel does not spin: it stops `IDLE_FOR_S` after the frame closed, as
soon as one look costs more than `MAX_LOOK_CPU_S` of CPU (a workspace too large to walk
that often), when the snapshotter declines (not a scan, or a rewind, a diff or a reported
save since the frame: the next frame then reads the workspace before its cell, as always),
and whenever a frame opens or someone else is about to use the snapshotter (`disarm`,
called before they take the lock).

Must never: look while a frame is open, wait for the snapshot lock, import Jupyter, or let
an error escape the thread (a failed look resets the snapshotter, so the next frame reads
the workspace in full).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .scan_detector import FRESH_S

INTERVAL_S = 0.75 * FRESH_S
"""Between the end of one look and the start of the next: a look is always fresh."""
IDLE_FOR_S = 30.0
"""How long after a frame closed the looks go on; a cell after a longer pause walks twice."""
MAX_LOOK_CPU_S = 0.05
"""A look that costs more CPU than this (some 20k files) ends the looks: at most ~7% of a
core while idle."""
_RETRY_S = 0.05  # the lock was busy (a large file being copied): try again soon


class IdleLook:
    """Looks between cells on a daemon thread; `arm()` after a frame, `disarm()` before."""

    def __init__(
        self,
        lock: threading.Lock,
        look: Callable[[], bool],
        on_error: Callable[[Exception], None],
    ) -> None:
        self._lock = lock  # the snapshot lock, held by frames, rewinds and the large copier
        self._look = look
        self._on_error = on_error
        self._cond = threading.Condition()
        self._armed_at: float | None = None
        self._gen = 0  # bumped by arm/disarm: a look of an older generation never starts
        self._closed = False
        self._thread: threading.Thread | None = None
        self._busy = threading.Lock()  # held by a look, inside the snapshot lock
        self.looks = 0
        """How many looks ran (for tests)."""
        self.enabled = True
        """`checkpoints.scan_idle_looks`; off, `arm()` does nothing (the kernel's default)."""

    def arm(self) -> None:
        """A frame closed: look every `INTERVAL_S` from now, for `IDLE_FOR_S`."""
        with self._cond:
            if self._closed or not self.enabled:
                return
            self._gen += 1
            self._armed_at = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="logician-idle-look", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def disarm(self, *, wait: bool = False) -> None:
        """No further look starts; `wait`: and a look already running has ended (for callers
        that change the snapshotter without taking the snapshot lock)."""
        with self._cond:
            self._gen += 1
            self._armed_at = None
            self._cond.notify_all()
        if wait:
            with self._busy:
                pass

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._armed_at = None
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._armed_at is None and not self._closed:
                    self._cond.wait()
                if self._closed or self._armed_at is None:
                    return
                gen, armed_at = self._gen, self._armed_at
            self._looks(gen, armed_at)

    def _looks(self, gen: int, armed_at: float) -> None:
        due = armed_at + INTERVAL_S
        while True:
            with self._cond:
                while not self._closed and self._gen == gen and due > time.monotonic():
                    self._cond.wait(due - time.monotonic())
                if self._closed or self._gen != gen:
                    return
                if time.monotonic() - armed_at > IDLE_FOR_S:
                    self._armed_at = None
                    return
            if not self._lock.acquire(blocking=False):
                due = time.monotonic() + _RETRY_S
                continue
            try:
                self._busy.acquire()
                if self._gen != gen:  # a frame is opening: it disarmed before taking the lock
                    return
                cpu = time.thread_time()
                try:
                    more = self._look()
                except Exception as exc:  # noqa: BLE001 - a thread has no caller to raise to
                    self._on_error(exc)
                    more = False
                cpu = time.thread_time() - cpu
                self.looks += 1
            finally:
                self._busy.release()
                self._lock.release()
            if not more or cpu > MAX_LOOK_CPU_S:
                with self._cond:
                    if self._gen == gen:
                        self._armed_at = None
                return
            due = time.monotonic() + INTERVAL_S
