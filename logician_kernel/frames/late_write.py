"""The clock's evidence of someone else's later write: a file the kernel wrote whose
modification time came later than the kernel's last write to it could have accounted for.

Owns the one judgement `attribution.attribute` asks of a file the kernel's own process wrote:
"modified N s after this kernel's last write to it, by something outside this kernel" (the
rewind then calls it a conflict and leaves it). The allowance is `LATE_WRITE_SLACK` plus the
time to write the file's size at the rate this kernel's cells write (`write_rate.py`), stretched
by the machine's load. Under exact attribution (fanotify saw every writer on the workspace's
file system) the clock is not asked at all: another writer would have been named.

Must never: call the kernel's own slow write someone else's (a loaded disk, a stalled
process), or read more than one `lstat` per file in the common case (none where the frame's
snapshot says what it found).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..snapshots.stat_memory import Identity
from ..snapshots.write_audit import open_in_process
from .write_rate import RATE

LATE_WRITE_SLACK = 0.5
"""Seconds a file's modification time may follow the kernel's last write to it before the
change counts as someone else's later write too (plus the time to write its size at the
rate this kernel's cells were measured to write: `write_rate.py`)."""


def slowdown() -> float:
    """How much slower than alone the machine writes now: the run queue per core (1-minute load
    average over the cores, at least 1). On a loaded machine the kernel's own 300 MB write takes
    seconds longer than the measured rate (`write_rate.py`) says, and must not read as someone else's later write."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def device(path: Path) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def written_later(
    full: Path | str,
    last: float | None,
    exact_dev: int | None = None,
    looked: Identity | None = None,
) -> str:
    """ "modified N s after this kernel's last write" when the file's mtime says someone wrote
    it after the kernel did (a file the kernel still holds open is still being written).
    Never for a file on `exact_dev`, the file system fanotify watched: a kernel stalled
    between opening a file and writing it (a loaded machine) is not someone else. `looked`:
    the file as the frame's snapshot found it when it stored its bytes (stat_memory.py), the
    version the question is about; else it is looked at now."""
    if last is None:
        return ""
    if looked is not None:
        _ino, dev, size, _mode, mtime_ns, _ctime = looked
        mtime = mtime_ns / 1e9
    else:
        try:
            st = os.lstat(full)
        except OSError:
            return ""
        dev, size, mtime = st.st_dev, st.st_size, st.st_mtime
    if exact_dev is not None and dev == exact_dev:
        return ""
    late = mtime - last - LATE_WRITE_SLACK
    if late <= 0:  # the common case, decided without the rate (thousands of paths a cell)
        return ""
    # The time to write its size at the rate this cell wrote (the slower of the kernel's
    # measured figure and the cell's own sample: write_rate.py).
    late -= size / RATE.for_last_cell * slowdown()
    if late <= 0 or open_in_process({str(full)}):
        return ""
    return (
        f"modified {mtime - last:.1f} s after this kernel's last write to it, by "
        "something outside this kernel"
    )
