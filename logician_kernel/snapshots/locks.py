"""Locks that survive shared storage and killed kernels: who may write our private git index,
and when a git `index.lock` left behind is stale.

Two kernels of one user on one workspace (two notebooks, or a JupyterHub pod and a gateway
kernel on the same volume) share the private index of `.logician/git`. Each write of it is
bracketed by an OS lock (`flock`, which the kernel drops when the process dies, and which NFS
carries to the server), so writers take turns instead of failing on git's `index.lock`. While
holding it, a leftover `logician-index.lock` can only come from a kernel killed mid-`git`:
it is removed and the user is told once.

The user's own `.git/index.lock` is not ours; it is removed only when no process on this
machine has it open and it is older than `STALE_AFTER_SECONDS` (git holds it for the length
of one command), so a `git commit` running right now is never broken.

Must never: import Jupyter, wait forever (a held lock times out into a clear error), or
remove a lock a live process holds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

STALE_AFTER_SECONDS = 60.0
"""A user's `index.lock` older than this, open in no process here, is taken as abandoned."""
WAIT_SECONDS = 60.0
"""How long one kernel waits for another to finish writing the shared private index."""


class IndexBusy(RuntimeError):
    """Another kernel held the private index longer than `WAIT_SECONDS`; names the lock."""


class IndexGuard:
    """Serializes writes of one private git index across kernels; clears its stale lock."""

    def __init__(self, index: Path, *, wait: float = WAIT_SECONDS) -> None:
        self.index = Path(index)
        self.wait = wait
        self._lock = FileLock(f"{index}.flock", mode=0o600)
        self.notice: str | None = None
        """Set once when a stale lock was cleared; the session shows it in the next cell."""

    @contextmanager
    def hold(self) -> Iterator[None]:
        try:
            self._lock.acquire(timeout=self.wait)
        except Timeout:
            raise IndexBusy(
                f"another kernel has held {self._lock.lock_file} for over {self.wait:.0f} s"
            ) from None
        try:
            self._clear_stale()
            yield
        finally:
            self._lock.release()

    def _clear_stale(self) -> None:
        # Every kernel writes this index only under the flock we now hold: a git lock file
        # here is from a writer that died before it could remove it.
        stale = Path(f"{self.index}.lock")
        try:
            stale.unlink()
        except FileNotFoundError:
            return
        except OSError:
            return  # git then reports the lock itself, with its path
        self.notice = (
            f"Logician: removed {stale}, left by a kernel that stopped in the middle of a "
            "snapshot; frames are recorded again."
        )


def _open_locally(path: Path) -> bool:
    """Whether any process we can inspect on this machine has `path` open."""
    target = os.path.realpath(path)
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True  # cannot tell: assume it is held
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue  # gone, or not ours to inspect
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") == target:
                    return True
            except OSError:
                continue
    return False


def clear_stale_git_lock(git_dir: Path | None, *, now: float | None = None) -> str | None:
    """Remove the user's abandoned `index.lock` in `git_dir`; a notice saying so, or None."""
    if git_dir is None:
        return None
    lock = git_dir / "index.lock"
    try:
        age = (time.time() if now is None else now) - lock.stat().st_mtime
    except OSError:
        return None
    if age < STALE_AFTER_SECONDS or _open_locally(lock):
        return None
    try:
        lock.unlink()
    except OSError as exc:
        return (
            f"Logician: {lock} looks abandoned ({age / 60:.0f} min old, no process holds it) "
            f"but could not be removed ({exc.strerror}); git commands here will fail until it is."
        )
    return (
        f"Logician: removed {lock}, {age / 60:.0f} min old and held by no running process "
        "(a kernel or git was killed mid-command); git commands in this workspace work again."
    )
