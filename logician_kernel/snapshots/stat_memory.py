"""What this session last stored for each path, keyed by the file's `lstat`: a rewind's plan
and its conflict check ask it before reading and hashing 20,000 files again.

When a snapshot stores a changed file's blob (`incremental_tree.py`), or a rewind hashes or
stores a file (`git_snapshot.py`), it notes the file's identity as it was just before the read
(inode, device, size, mode, modification and change times, in nanoseconds) with the blob's id
and git mode, and which blob ids it wrote to the store (a stored pre-image is then not written
again). Later, a file whose `lstat` gives the
same identity still holds those bytes, under git's racy rule: a note is trusted only when both
of the file's times are more than `RACY_NS` older than the clock read before that `lstat`, so
a write in the same clock tick as the look (same size, same times) can never pass for the old
content. Times in whole milliseconds (a file system with coarse timestamps) are never trusted,
and neither is anything but a regular file.

A rewind's restore notes the files it writes itself (`wrote`): it sets each one's modification
time one nanosecond before the time its write gave it, then takes its `lstat` through its own
descriptor after the rename. Any later write gives the file a modification time at least that
of our write (unless the system clock is set back), so it can never keep that identity: such a
note is trusted at once, with no racy window (a rewind of the creation right after the rewind
of its rewrite, or the undo of a rewind, reads none of the files again).

Memory only, bounded (`LIMIT` paths; past it the oldest notes go), lost with the process: a
miss costs a read and a hash, exactly what happened before.

Must never: answer for a path whose identity differs in any field, answer a note taken within
`RACY_NS` of the file's times (a look's note), or do any I/O beyond the `lstat` its caller
hands it.
"""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .beneath import Beneath, Conflict, PathRefused

Looked = tuple[int, os.stat_result]
"""(the clock read just before a path's `lstat`, that `lstat`): what a note is judged by."""

RACY_NS = 100_000_000
"""A file whose modification or change time is this close to the note's clock reading (or
later) may have been written again in the same tick: read and hashed, never trusted."""

LIMIT = 200_000
"""Paths remembered at most (about 200 bytes each); the oldest notes are dropped past it."""

WROTE = -1
"""The clock reading a note of our own write carries (`wrote`): never racy, and never a look
since any clock reading (`looked_since`)."""

Identity = tuple[int, int, int, int, int, int]
"""(inode, device, size, st_mode, mtime_ns, ctime_ns)."""


def identity(st: os.stat_result) -> Identity:
    return (st.st_ino, st.st_dev, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)


class StatMemory:
    """Path -> (identity, clock before the look, git mode, blob id) of the last stored read."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._notes: dict[str, tuple[Identity, int, str, str]] = {}
        self._stored: set[str] = set()
        self._limit = limit

    def __len__(self) -> int:
        return len(self._notes)

    @staticmethod
    def clock() -> int:
        """The reading to take before the `lstat` a note will carry."""
        return time.time_ns()

    def note(
        self, path: str, st: os.stat_result, looked_at: int, mode: str, sha: str, *, stored: bool
    ) -> None:
        """`path`, as `st` (taken after `looked_at`) described it, held the blob `sha`;
        `stored`: that blob is now in the store."""
        if stored:
            self.stored(sha)
        if not stat.S_ISREG(st.st_mode):
            self._notes.pop(path, None)
            return
        self._notes.pop(path, None)  # re-inserted last: the dict's order is the notes' age
        self._notes[path] = (identity(st), looked_at, mode, sha)
        if len(self._notes) > self._limit:
            for old in list(self._notes)[: len(self._notes) - self._limit]:
                del self._notes[old]

    def wrote(self, path: str, st: os.stat_result, mode: str, sha: str) -> None:
        """`path` is the file this session just wrote with the blob `sha`, `st` its `lstat`
        as `Beneath.write_file` returned it: its modification time is one no later write can
        give it (module docstring). Whether the blob is in the store is known from `stored`
        alone (it may have come from the user's own objects)."""
        self.note(path, st, WROTE, mode, sha, stored=False)

    def stored(self, sha: str) -> None:
        """The blob `sha` is in the store (a frame recorded it)."""
        if len(self._stored) >= self._limit:
            self._stored.clear()  # only costs a write of a blob already there
        self._stored.add(sha)

    def forget(self, path: str | None = None) -> None:
        """Drop one path's note, or every note (`None`: the store was recreated)."""
        if path is None:
            self._notes.clear()
            self._stored.clear()
        else:
            self._notes.pop(path, None)

    def looked_since(self, path: str, since: int) -> Identity | None:
        """The identity noted for `path` by a look whose clock read `since` or later (the
        snapshot of the frame closing now, which read those bytes), else None."""
        found = self._notes.get(path)
        return found[0] if found is not None and found[1] >= since else None

    def recall(
        self, path: str, st: os.stat_result, *, stored: bool = False
    ) -> tuple[str, str] | None:
        """(git mode, blob id) when `st` is exactly the noted identity and the note is not
        racy (`stored`: and the blob is in the store); else None (read the file)."""
        found = self._notes.get(path)
        if found is None:
            return None
        ident, looked_at, mode, sha = found
        if ident != identity(st) or (stored and sha not in self._stored):
            return None
        mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
        if mtime % 1_000_000 == 0 and ctime % 1_000_000 == 0:
            return None  # coarse timestamps: a rewrite may keep both
        if looked_at != WROTE and max(mtime, ctime) > looked_at - RACY_NS:
            return None
        return mode, sha


def timed_look(
    tree: Beneath, path: str
) -> tuple[Conflict | PathRefused | None, os.stat_result | None, Looked | None]:
    """`tree.look(path)` with the clock read just before it: (why it cannot be reached, its
    `lstat`, and the two as `Looked` when it was reached and stands), so the snapshotter can
    hash or store it without a look of its own."""
    looked_at = StatMemory.clock()  # before the look: a note of it is judged by it
    why, st = tree.look(path)
    return why, st, ((looked_at, st) if why is None and st is not None else None)
