"""How far a rewind, undo or resume, or the first snapshot's scan, has come, told to the
frontends: the `progress` comm message ("restoring 12,400 / 20,000 files", "scanning 12,400 /
60,000 files", "capturing big.bin 120 / 300 MB" with a bar in the sidebar and the status bar)
and the status's `rewinding` phase.

A `Workspace` progress listener: it is told after every path, and sends a `progress` message
before the first path, then at most `PROGRESS_HZ` times a second, and once finished; the
status is pushed when the operation starts and ends, so the phase reads `rewinding` meanwhile
(not for the first snapshot, which is no rewind). A frontend whose comm opens while the work
runs is sent its latest report at once (`replay`). The scan's reports come from the thread
that scans: `comm.send` goes out through ipykernel's IOPub thread, as a rewind's do from the
subshell that runs it.

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

    def __init__(
        self,
        comms: LogicianComms,
        clock: Callable[[], float] = time.monotonic,
        running: RestoreProgress | None = None,
    ) -> None:
        self.comms = comms
        self._clock = clock
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.running: RestoreProgress | None = running
        """The operation under way (its latest report), None when none is."""

    @property
    def rewinding(self) -> bool:
        """A rewind, undo or resume is under way (the status's `rewinding` phase)."""
        running = self.running
        return running is not None and running.operation in ("rewind", "undo", "resume")

    def replay(self) -> None:
        """Send the operation under way again (a frontend just opened its comm); never raises."""
        running = self.running
        if running is None:
            return
        try:
            self._send(running)
        except Exception:  # noqa: BLE001 - a frontend's trouble must never stop the work
            _log.warning("logician: could not announce the work under way", exc_info=True)

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
        self._send(report)
        if (starting or report.finished) and report.operation in ("rewind", "undo", "resume"):
            self.comms.push_status(force=True)  # the phase reads `rewinding`, then not

    def _send(self, report: RestoreProgress) -> None:
        message: dict[str, object] = {
            "operation": report.operation,
            "done": report.done,
            "total": report.total,
            "finished": report.finished,
        }
        if report.path:
            message["path"] = report.path
        self.comms.notify("progress", message)
