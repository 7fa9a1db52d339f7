"""How fast this kernel's cells write, measured: the rate attribution allows for a big file the
kernel was still writing (`late_write.written_later`), instead of an assumed 25 MB/s.

Each frame reads `write_bytes` of `/proc/self/io` (bytes this process sent to the storage
layer, its threads included) when the cell starts and when it ends. A cell that wrote at least
`MIN_SAMPLE` gives one sample, bytes over the cell's wall time: a lower bound of what the disk
did (the cell may have computed between writes), which is the safe side here (a lower rate
allows more time). Samples are kept as a moving figure (exponential, weight `WEIGHT` for the
newest), starting from `DEFAULT_RATE` and held between `FLOOR` and `CEILING`. Attribution of
the cell that just ended allows the slower of the figure and that cell's own sample
(`for_last_cell`): a cell sharing the disk with another writer is slower than its history.

Must never: raise (no `/proc`, or a kernel without I/O accounting, keeps the default), or let a
cell that wrote little (a computation with a log line) drag the figure down.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

DEFAULT_RATE = 25 * 1024 * 1024
"""Bytes a second assumed before any cell has written enough to measure. A VM's disk with a
cold cache wrote 300 MB in 5.5 s (55 MB/s) on an otherwise quiet machine; 25 MB/s leaves room."""
MIN_SAMPLE = 8 * 1024 * 1024
"""A cell's writes count as a sample of the rate only from this many bytes on."""
WEIGHT = 0.3
"""The newest sample's share of the moving figure."""
FLOOR = 1024 * 1024
"""The figure never falls below 1 MB/s (a cell that wrote 8 MB then slept an hour)."""
CEILING = 2 * 1024 * 1024 * 1024
"""Nor rises above 2 GB/s (a page-cache burst is not the disk's rate)."""


def proc_write_bytes() -> int | None:
    """`write_bytes` of `/proc/self/io`, or None where there is none to read."""
    try:
        with open("/proc/self/io", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


class WriteRate:
    """The moving write rate of this process's cells (one per kernel: `RATE`)."""

    def __init__(
        self,
        read: Callable[[], int | None] = proc_write_bytes,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read, self._clock = read, clock
        self._lock = threading.Lock()
        self._start: tuple[int, float] | None = None
        self._rate = float(DEFAULT_RATE)
        self.samples = 0
        """How many cells have been measured (0: the figure is still the default)."""
        self._cell: float | None = None
        """The sample of the cell that ended last (None: it wrote too little to tell)."""

    def begin(self) -> None:
        """A cell starts: remember the counter and the time."""
        written = self._read()
        with self._lock:
            self._start = None if written is None else (written, self._clock())
            self._cell = None

    def end(self) -> None:
        """A cell ended: fold its rate into the figure when it wrote enough to tell."""
        written, now = self._read(), self._clock()
        with self._lock:
            start, self._start = self._start, None
            if start is None or written is None:
                return
            wrote, took = written - start[0], now - start[1]
            if wrote < MIN_SAMPLE or took <= 0:
                return
            sample = min(CEILING, max(FLOOR, wrote / took))
            self._cell = sample
            self._rate = (
                sample if self.samples == 0 else WEIGHT * sample + (1 - WEIGHT) * self._rate
            )
            self.samples += 1

    @property
    def bytes_per_second(self) -> float:
        """The current figure (bytes a second)."""
        with self._lock:
            return self._rate

    @property
    def for_last_cell(self) -> float:
        """The rate to allow for the cell that just ended: the slower of the figure and that
        cell's own sample. A cell slowed by a shared disk (the previous frame's large-file copy
        still running, another program's writes) wrote its big file slower than the figure
        says; its own bytes over its own wall time are a lower bound of how fast it wrote."""
        with self._lock:
            return self._rate if self._cell is None else min(self._rate, self._cell)


RATE = WriteRate()
"""This kernel's figure: frames feed it (`file_checkpoints.py`), attribution reads it."""
