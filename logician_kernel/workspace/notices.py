"""Notices: what Logician tells the user unasked, said through one sink.

Owns every notice the workspace, the frame bracket and the kernel say outside a `%logician`
command's own output and an agent cell's lines: a thread reopened or renamed, variables or
paths not captured, a first snapshot, a capture failure, frames off. `NoticeBoard.say` keeps
each one for the session (with its time and the frame and cell it is about; read or unread for
`%logician notices`), writes it to the kernel log, hands it to the listeners (the `logician`
comm: the lab sidebar and its status-bar count) and, only where `ui.notices = "cell"` says so,
prints it into the output of the cell it is about. `"sidebar"` (the default) and `"off"` keep a
plain cell's outputs exactly what ipykernel's would be; `"off"` also tells no listener.

Where there is no notebook (a script's run, a terminal IPython: `inline`), a notice is printed
on the stream as before: there stderr is the user's log, not a cell's saved output. Where no
sidebar can connect (`%load_ext` in a stock kernel, which the lab extension does not talk to),
`"sidebar"` means the cell.

A notice is critical when it says Logician stopped recording something (frames or file capture
off, variables not captured or restored, a cell that is not a frame, a frame not recorded): the
kernel log gets it at INFO like every notice (headless runners check that a kernel's stderr
is as clean as ipykernel's), `%logician status` shows it in full until it is read, and the
sidebar marks it.

Must never: write into a cell's outputs under `"sidebar"` or `"off"`, forget a notice during the
session (`--all` lists every one), or raise out of `say` (a failing listener is logged).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal, TextIO

NoticeMode = Literal["sidebar", "cell", "off"]

CRITICAL_MARKS = (
    "frames are off for this session",
    "file capture is off for this session",
    "variables are not captured or restored",
    "this cell is not a frame",
    "frame could not be recorded",
    "were not captured:",
    "variables were not captured (",
)
"""Phrases of the notices that say Logician stopped recording something."""

LOG = logging.getLogger("logician_kernel.notices")
"""Where notices go until a kernel hands in its log (`NoticeBoard.attach`). It has a handler
of its own, so Python's last-resort handler never prints a notice on a cell's stderr."""
LOG.addHandler(logging.NullHandler())


@dataclass(frozen=True)
class Notice:
    """One notice as kept for the session."""

    id: int
    """1, 2, ... in the order they were said this session."""
    text: str
    time: str
    """When it was said, ISO 8601 UTC."""
    frame: int | None
    """The frame it is about (None: said between cells, e.g. at the kernel's start)."""
    execution_count: int | None
    """The cell (`In [n]`) running when it was said."""
    cell_id: str | None
    critical: bool
    """It says Logician stopped recording something (`CRITICAL_MARKS`)."""

    @property
    def where(self) -> str:
        """`frame 3, cell [5]`, `cell [5]`, or `between cells` (e.g. at the kernel's start)."""
        parts = []
        if self.frame is not None:
            parts.append(f"frame {self.frame}")
        if self.execution_count is not None:
            parts.append(f"cell [{self.execution_count}]")
        return ", ".join(parts) or "between cells"


def is_critical(text: str) -> bool:
    """Whether `text` says Logician stopped recording something."""
    return any(mark in text for mark in CRITICAL_MARKS)


class NoticeBoard:
    """The session's notices and where they go; thread-safe (a sidebar's rewind runs on a
    subshell thread)."""

    def __init__(self, mode: Callable[[], NoticeMode]) -> None:
        self._mode = mode
        self.inline = True
        """Print every notice on the stream (no notebook: a script, a terminal IPython). A
        kernel sets it to False: then `ui.notices` decides."""
        self.sidebar = True
        """Whether a sidebar can show the notices (the Logician kernel's `logician` comm)."""
        self.log: logging.Logger | logging.LoggerAdapter[logging.Logger] = LOG
        """The kernel log (the kernel hands in its own logger, which writes to the process's
        real stderr, never into a cell)."""
        self.listeners: list[Callable[[Notice], None]] = []
        """Told of every notice (under `"sidebar"`), e.g. the `logician` comm."""
        self.read_listeners: list[Callable[[], None]] = []
        """Told when notices were marked read (the status bar's count changed)."""
        self._all: list[Notice] = []
        self._read: set[int] = set()
        self._pending: list[str] = []
        """Said between cells, to print in the next cell's output (`"cell"` or `inline`)."""
        self._context: tuple[int | None, int | None, str | None] = (None, None, None)
        self._lock = threading.Lock()

    def attach(
        self,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger],
        *,
        sidebar: bool = True,
    ) -> None:
        """A kernel's notices: `ui.notices` decides where they go from now on, and `log` (the
        kernel log) gets every one, those said before (at the workspace's open) included.
        `sidebar=False`: no sidebar can connect (`%load_ext` in a stock kernel), so
        `"sidebar"` means the cells there."""
        self.inline = False
        self.sidebar = sidebar
        self.log = log
        for notice in self.all():
            self._log(notice)
        if not self.in_cells:
            self._pending = []

    @property
    def mode(self) -> NoticeMode:
        return self._mode()

    @property
    def in_cells(self) -> bool:
        """Whether notices are printed into cells' outputs."""
        mode = self.mode
        return self.inline or mode == "cell" or (mode == "sidebar" and not self.sidebar)

    def cell(self, frame: int | None, execution_count: int | None, cell_id: str | None) -> None:
        """The cell running now (notices said until `between_cells` are about it)."""
        self._context = (frame, execution_count, cell_id)

    def between_cells(self) -> None:
        self._context = (None, None, None)

    def say(self, text: str, stream: TextIO | None = None) -> Notice:
        """Keep `text`, log it, tell the listeners; print it on `stream` (else in the next
        cell's output) only where notices go into cells. Never raises."""
        frame, count, cell_id = self._context
        with self._lock:
            notice = Notice(
                len(self._all) + 1,
                text,
                datetime.now(timezone.utc).isoformat(timespec="seconds"),
                frame,
                count,
                cell_id,
                is_critical(text),
            )
            self._all.append(notice)
        self._log(notice)
        if self.in_cells:
            if stream is None:
                self._pending.append(text)
            else:
                print(text, file=stream, flush=True)
        elif self.mode == "sidebar":
            for listener in list(self.listeners):
                try:
                    listener(notice)
                except Exception as exc:  # noqa: BLE001 - a closed comm must not break a cell
                    LOG.debug("a notice listener failed: %r", exc)
        return notice

    def _log(self, notice: Notice) -> None:
        try:
            self.log.info("%s (%s)", notice.text, notice.where)
        except Exception:  # noqa: BLE001 - a broken log handler must not break a cell
            pass

    def flush(self, stream: TextIO | None = None) -> None:
        """Print what was said between cells, once, in the output of the cell that runs now
        (nothing when notices do not go into cells: they were kept and sent when said)."""
        pending, self._pending = self._pending, []
        for text in pending:
            print(text, file=stream if stream is not None else sys.stderr)

    def drop_pending(self, texts: set[str]) -> None:
        """Forget not-yet-printed notices that no longer hold (a thread switched away)."""
        self._pending = [t for t in self._pending if t not in texts]

    # -- reading ---------------------------------------------------------------------------

    def all(self) -> list[Notice]:
        with self._lock:
            return list(self._all)

    def unread(self) -> list[Notice]:
        with self._lock:
            return [n for n in self._all if n.id not in self._read]

    def is_read(self, notice_id: int) -> bool:
        with self._lock:
            return notice_id in self._read

    def unread_count(self) -> int:
        with self._lock:
            return len(self._all) - len(self._read)

    def mark_read(self, up_to: int | None = None) -> int:
        """Mark every notice (or those with id <= `up_to`) read; how many were unread."""
        with self._lock:
            ids = {n.id for n in self._all if up_to is None or n.id <= up_to}
            fresh = len(ids - self._read)
            self._read |= ids
        if fresh:
            for listener in list(self.read_listeners):
                try:
                    listener()
                except Exception as exc:  # noqa: BLE001 - a closed comm must not break a cell
                    LOG.debug("a notice-read listener failed: %r", exc)
        return fresh
