"""The blobs a rewind will restore, read in one `git cat-file --batch` pass in restore order.

The store's object reader answers one object per round trip (a request written, a header
line and the bytes read back): for a rewind of 20,000 files that is 20,000 round trips with
a process switch each, most of the rewind's time. `BlobStream` hands git every id up front
(a daemon thread feeds them, so neither side waits on a full pipe) and reads the answers
as the rewind asks for them, in the same order. An object the rewind no longer asks for (a
path found already as wanted, a conflict) is read past and dropped; one it asks for that is
not ahead in the stream, that git lacks, or whose bytes do not hash to its id (planted in the
store), is left to the usual reader (`take` answers None), which says so by name.

Must never: hold more than one object in memory, block the rewind on the feeding thread, or
outlive its `with` block (the process is killed and reaped at `close`).
"""

from __future__ import annotations

import subprocess
import threading
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from typing import IO

from .git_trees import matches_id
from .object_reader import read_answer

STREAM_MIN_BLOBS = 64
"""Below this many blobs the usual reader's round trips cost less than another process."""


class BlobStream:
    """`git cat-file --batch` over `ids`, answered in their order (see the module docstring)."""

    def __init__(self, git_dir: str, env: Mapping[str, str], ids: Sequence[str]) -> None:
        self._ahead = deque(ids)
        self._counts = Counter(ids)
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
        )
        assert self._proc.stdin is not None
        self._feeder = threading.Thread(
            target=_feed,
            args=(self._proc.stdin, list(ids)),
            name="logician-blob-stream",
            daemon=True,
        )
        self._feeder.start()

    def take(self, sha: str) -> tuple[str, bytes] | None:
        """(kind, content) of `sha` if it is ahead in the stream, the ones before it dropped;
        None when it is not ahead, git lacks it, or the stream broke (read it another way)."""
        if self._proc is None or not self._counts.get(sha):
            return None
        try:
            while self._ahead:
                ahead = self._ahead.popleft()
                self._counts[ahead] -= 1
                got = self._read_one()
                if ahead == sha:
                    # git's reader does not check: an object planted under this id is not it
                    return got if got is not None and matches_id(sha, *got) else None
        except (OSError, ValueError):
            self.close()
        return None

    def _read_one(self) -> tuple[str, bytes] | None:
        out = self._proc.stdout if self._proc is not None else None
        if out is None:
            raise ValueError("closed")
        return read_answer(out)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        self._feeder.join(timeout=5)


def _feed(stdin: IO[bytes], ids: list[str]) -> None:
    try:
        for i in range(0, len(ids), 512):
            stdin.write(("\n".join(ids[i : i + 512]) + "\n").encode())
        stdin.close()
    except (OSError, ValueError):  # the reader was closed early: nothing more to ask
        pass
