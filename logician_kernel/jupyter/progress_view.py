"""How far a rewind, undo or resume has come, told to the frontends: the `progress` comm
message ("restoring 12,400 / 20,000 files" with a bar in the sidebar and the status bar) and
the status's `rewinding` phase.

A `Workspace` progress listener: it is told after every path, and sends a `progress` message
before the first path, then at most `PROGRESS_HZ` times a second, and once finished; the
status is pushed when the operation starts and ends, so the phase reads `rewinding` meanwhile.

Must never: raise into the rewind (a comm that cannot send must not stop a restore), send one
message per path, or say anything when no frontend listens.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..workspace import RestoreProgress
from .comm import LogicianComms

PROGRESS_HZ = 5.0
"""`progress` messages per second at most, however fast the paths go."""

_log = logging.getLogger(__name__)


class ProgressAnnouncer:
    """Sends a rewind's, undo's or resume's progress to every open `logician` comm."""

    def __init__(self, comms: LogicianComms, clock: Callable[[], float] = time.monotonic) -> None:
        self.comms = comms
        self._clock = clock
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.running: RestoreProgress | None = None
        """The operation under way (its latest report), None when none is."""

    def __call__(self, report: RestoreProgress) -> None:
        """A `Workspace.progress_listeners` entry; never raises."""
        try:
            self._tell(report)
        except Exception:  # noqa: BLE001 - a frontend's trouble must never stop a restore
            _log.warning("logician: could not announce the rewind's progress", exc_info=True)

    def _tell(self, report: RestoreProgress) -> None:
        with self._lock:
            starting = self.running is None and not report.finished
            self.running = None if report.finished else report
            now = self._clock()
            due = starting or report.finished or now - self._last >= 1.0 / PROGRESS_HZ
            if not due:
                return
            self._last = now
        if not self.comms.listening:
            return
        self.comms.notify(
            "progress",
            {
                "operation": report.operation,
                "done": report.done,
                "total": report.total,
                "finished": report.finished,
            },
        )
        if starting or report.finished:
            self.comms.push_status(force=True)  # the phase reads `rewinding`, then not
