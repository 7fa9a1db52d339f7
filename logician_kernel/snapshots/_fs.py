"""Small pure helpers of the snapshotter: NUL-separated plumbing I/O, git blob ids, and stat
fingerprints of paths whose content is not captured. No git processes here."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..types.path_states import Fingerprint, PathState
from .git_trees import write_loose

IGNORED_WALK_BUDGET = 5000
"""Files of one ignored directory fingerprinted one by one; beyond it the directory stands in."""
MODE_FILE, MODE_EXEC, MODE_LINK, MODE_GITLINK = "100644", "100755", "120000", "160000"


def file_mode(st_mode: int) -> str:
    """A regular file's git mode, by git's rule: the owner's execute bit makes it 100755.
    Every capture and every look at a file now must use this one rule: a file executable by
    its group only (0o654) that one side called 100755 and the other 100644 read as changed
    by someone else, and a rewind left it alone."""
    return MODE_EXEC if st_mode & stat.S_IXUSR else MODE_FILE


def split_z(data: bytes) -> list[bytes]:
    return [p for p in data.split(b"\0") if p]


def join_z(paths: Iterable[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def state(mode: str, sha: str) -> PathState:
    if mode == "000000":
        return PathState.absent()
    if mode == MODE_GITLINK:
        return PathState.uncaptured("nested-repository", Fingerprint(size=0, mtime_ns=0, mode=0))
    return PathState.blob(mode, sha)


def fingerprint(st: os.stat_result) -> Fingerprint:
    return Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, mode=st.st_mode)


def fingerprint_dir(path: Path) -> Fingerprint:
    try:
        return fingerprint(os.lstat(path))
    except OSError:
        return Fingerprint(size=0, mtime_ns=0, mode=0)


def fingerprint_ignored(workspace: Path, rel: str) -> Iterable[tuple[str, Fingerprint]]:
    """Fingerprints of an ignored path; directories are walked up to a fixed budget."""
    full = workspace / rel
    try:
        st = os.lstat(full)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        yield rel, fingerprint(st)
        return
    found: list[tuple[str, Fingerprint]] = []
    stack = [rel]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(workspace / current))
        except OSError:
            continue
        for entry in entries:
            if len(found) >= IGNORED_WALK_BUDGET:
                # Too big to inspect file by file: the directory stands for its contents.
                yield rel + "/", fingerprint(st)
                return
            sub = f"{current}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                stack.append(sub)
                continue
            try:
                found.append((sub, fingerprint(entry.stat(follow_symlinks=False))))
            except OSError:
                continue
    yield from found


_READ_FLAGS = (
    os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
)
"""A regular file is opened as it is; a symlink swapped in is refused (ELOOP), a FIFO does not
block the open and a terminal is not adopted (the `fstat` then refuses both)."""


def read_file(full: str | Path, size: int = 0) -> bytes | None:
    """The bytes of the regular file at `full`, read through no symlink and no buffer object
    (a plan reads 20,000); None when what stands there now is not a regular file (swapped since
    the caller's `lstat`: the caller looks again or calls it unstable). `size`: the size the
    caller's `lstat` gave, so that one `read` usually takes it all."""
    try:
        fd = os.open(full, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, max(size + 1, 65536)):  # to the end, however it grew
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def path_state(
    full: str | Path, max_file_bytes: int, st: os.stat_result | None = None
) -> PathState:
    """What a snapshot would record for one path now (hashed, not stored); `st`: its `lstat`,
    taken by the caller just before."""
    try:
        st = os.lstat(full) if st is None else st
    except (FileNotFoundError, NotADirectoryError):  # gone, or its parent became a file
        return PathState.absent()
    if stat.S_ISLNK(st.st_mode):
        return PathState.blob(
            MODE_LINK, blob_id(os.readlink(full).encode("utf-8", "surrogateescape"))
        )
    if stat.S_ISDIR(st.st_mode):
        return PathState.uncaptured("not-a-file", fingerprint(st))
    if st.st_size > max_file_bytes:
        return PathState.uncaptured("too-large", fingerprint(st))
    try:
        data = read_file(full, st.st_size)
    except (FileNotFoundError, NotADirectoryError):  # gone since the lstat (or swapped away)
        return PathState.absent()
    if data is None:  # no longer a regular file since the lstat: changing as we look
        return PathState.uncaptured("unstable", fingerprint(st))
    return PathState.blob(file_mode(st.st_mode), blob_id(data))


def write_loose_blob(objects: Path, data: bytes) -> str:
    """Write a blob as a loose object (atomically) unless it is already there; its id."""
    return write_loose(objects, b"blob", data)


def store_path(
    full: str | Path,
    max_file_bytes: int,
    objects: Path,
    write: Callable[[bytes], str] | None = None,
    st: os.stat_result | None = None,
) -> PathState:
    """Like `path_state`, and the content is stored too: the blob written and the state
    returned come from one read, so a file changing meanwhile cannot make them disagree.
    `write` stores a blob and gives its id (a pack being filled); loose objects otherwise.
    `st`: its `lstat`, taken by the caller just before."""
    if write is None:
        write = functools.partial(write_loose_blob, objects)
    try:
        st = os.lstat(full) if st is None else st
    except (FileNotFoundError, NotADirectoryError):  # a parent is a file now: absent too
        return PathState.absent()
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(full).encode("utf-8", "surrogateescape")
        return PathState.blob(MODE_LINK, write(target))
    if not stat.S_ISREG(st.st_mode) or st.st_size > max_file_bytes:
        return path_state(full, max_file_bytes)
    mode = file_mode(st.st_mode)
    try:
        data = read_file(full, st.st_size)
    except (FileNotFoundError, NotADirectoryError):  # gone since the lstat (or swapped away)
        return PathState.absent()
    if data is None:  # no longer a regular file since the lstat: changing as we look
        return PathState.uncaptured("unstable", fingerprint(st))
    return PathState.blob(mode, write(data))


def open_files(pid: int | str) -> Iterator[tuple[str, str]]:
    """(fd, target) of every file process `pid` holds open (`/proc/<pid>/fd`); nothing for a
    process we may not inspect or that is gone."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return
    for fd in fds:
        try:
            yield fd, os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
