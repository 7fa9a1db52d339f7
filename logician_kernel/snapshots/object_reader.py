"""Reading objects of the private store through one long-lived `git cat-file --batch`.

A rewind, a diff or a tree update asks for objects one at a time; a process per object would
cost a process start each. `ObjectReader` keeps one `cat-file --batch` and asks it an object
per round trip (an id written, a header line and the bytes read back); `BlobStream` asks for
many at once over the same protocol (`read_answer` parses both).

Ids are checked before they are written: the batch protocol is one request per line, so a
hostile id (a newline, a revision expression such as `HEAD:secret`) is refused, never sent.
What git answers is not checked here: the caller checks the bytes against the id
(`git_trees.matches_id`), since git's reader does not and the store may hold planted bytes.

Must never: leave its process running after `close` or after the reader is dropped (a
finalizer kills and reaps it), answer one request with another's bytes (a reader whose
answer broke is closed; the next request starts a fresh process), or run git with any
environment but the one it was given (the store's isolated one).
"""

from __future__ import annotations

import re
import subprocess
import threading
import weakref
from collections.abc import Mapping
from typing import IO

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
"""A full SHA-1 or SHA-256 object id, lower-case hex: all the store's ids are."""


class BrokenReader(OSError):
    """The reader's process died or answered out of protocol; the message says how."""


def read_answer(out: IO[bytes]) -> tuple[str, bytes] | None:
    """One `cat-file --batch` answer from `out`: (kind, content), or None when git lacks the
    object. Raises `ValueError` when the answer is cut short or out of protocol."""
    header = out.readline().split()
    if len(header) == 2 and header[1] == b"missing":
        return None
    if len(header) != 3:
        raise ValueError(f"unexpected cat-file header {header!r}")
    size = int(header[2])
    data = out.read(size)
    if len(data) != size or out.read(1) != b"\n":
        raise ValueError("cat-file output cut short")
    return header[1].decode(), data


class ObjectReader:
    """`git --git-dir=GIT_DIR cat-file --batch`, started on the first `read`, an object per
    round trip. Thread-safe: one request at a time."""

    def __init__(self, git_dir: str, env: Mapping[str, str]) -> None:
        self._argv = ["git", f"--git-dir={git_dir}", "cat-file", "--batch"]
        self._cwd = git_dir
        self._env = dict(env)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], ObjectReader] | None = None

    @property
    def running(self) -> bool:
        """Whether its process is started and not closed."""
        return self._proc is not None

    def read(self, sha: str) -> tuple[str, bytes] | None:
        """(kind, content) of `sha` as git answers it, or None when git lacks it. Raises
        `ValueError` for an id that is not a full lower-case hex object id, and
        `BrokenReader` when the process cannot be started, dies or answers out of protocol
        (it is closed then: the next `read` starts a fresh one)."""
        if not _OBJECT_ID.fullmatch(sha):
            raise ValueError(f"not an object id: {sha[:80]!r}")
        with self._lock:
            proc = self._proc if self._proc is not None else self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(sha.encode() + b"\n")
                proc.stdin.flush()
                return read_answer(proc.stdout)
            except (OSError, ValueError) as exc:
                code = proc.poll()  # how it ended, if it had, before it is killed
                self._close_locked()
                how = f"git cat-file exited with status {code}" if code else str(exc)
                raise BrokenReader(how or "git cat-file broke") from exc

    def close(self) -> None:
        """Kill and reap the process, if started; the next `read` starts another."""
        with self._lock:
            self._close_locked()

    def _start(self) -> subprocess.Popen[bytes]:
        try:
            proc = subprocess.Popen(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self._cwd,
                env=self._env,
            )
        except OSError as exc:
            raise BrokenReader(f"cannot run git cat-file: {exc}") from exc
        self._proc = proc
        self._finalizer = weakref.finalize(self, _stop, proc)
        return proc

    def _close_locked(self) -> None:
        finalizer, self._finalizer, self._proc = self._finalizer, None, None
        if finalizer is not None:
            finalizer()  # stops the process exactly once, even if collection already did


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    try:
        proc.kill()
    except OSError:
        pass
    proc.wait()
