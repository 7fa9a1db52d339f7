"""Permission bits git does not keep, and directory birth times: the two facts a rewind needs
to leave no debris (`chmod 600` comes back; directories the rewound frames made go away, and
an undo makes them again with their bits).

Git trees record a file as 100644 or 100755 only, so the snapshotter keeps the full bits of
files whose bits differ from what that mode and the umask give; everything else is implied.

Must never: raise for a path that vanished, remove a directory that holds anything, or
remove one through a symlinked parent.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from ..types.path_states import PathChange, PathState
from .beneath import Beneath, Conflict, PathRefused

_UMASK = os.umask(0)
os.umask(_UMASK)  # read once, at import: os.umask is process-wide and not thread-safe


_DIR_READ = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def default_perms(executable: bool) -> int:
    """The bits a file of this git mode gets when created under the umask."""
    return (0o777 if executable else 0o666) & ~_UMASK


def unusual_perms(st: os.stat_result) -> int | None:
    """A regular file's permission bits, or None when its git mode and the umask imply them."""
    if not stat.S_ISREG(st.st_mode):
        return None
    bits = st.st_mode & 0o7777
    return None if bits == default_perms(bool(bits & stat.S_IXUSR)) else bits


def current_perms(full: Path) -> int | None:
    """A file's permission bits now (None for a symlink, a directory or nothing)."""
    try:
        st = os.lstat(full)
    except OSError:
        return None
    return st.st_mode & 0o7777 if stat.S_ISREG(st.st_mode) else None


def current_owner(full: Path) -> tuple[int, int] | None:
    """A file's or symlink's owner and group now (None for a directory or nothing); the link
    itself, never what it points to."""
    try:
        st = os.lstat(full)
    except OSError:
        return None
    return (st.st_uid, st.st_gid) if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode) else None


def with_perms(state: PathState, perms: int | None) -> PathState:
    """`state` carrying `perms` (unchanged when there is nothing to add)."""
    if perms is None or state.kind not in ("blob", "large") or state.mode == "120000":
        return state
    if state.perms == perms:
        return state
    # Built anew, not `model_copy`: validation is faster than pydantic's copy (20,000 paths).
    return PathState(**{**state.__dict__, "perms": perms})


def carry_perms(
    changes: list[PathChange],
    before: Mapping[str, int],
    after: Mapping[str, int],
    hash_path: Callable[[str], PathState],
) -> list[PathChange]:
    """Changes carrying the permission bits git drops, plus chmod-only changes (git sees
    none: 100644 is 100644 whether the file is 0644 or 0600). `before`/`after`: the unusual
    bits by path of the two snapshots."""
    out = [
        c.model_copy(
            update={
                "before": with_perms(c.before, before.get(c.path)),
                "after": with_perms(c.after, after.get(c.path)),
            }
        )
        for c in changes
    ]
    if before == after:
        return out
    seen = {c.path for c in changes}
    for path in sorted(set(before) | set(after)):
        b, a = before.get(path), after.get(path)
        if path in seen or b == a:
            continue
        now = hash_path(path)
        if now.kind != "blob" or now.mode == "120000":
            continue
        executable = now.mode == "100755"
        out.append(
            PathChange(
                path=path,
                before=with_perms(now, b if b is not None else default_perms(executable)),
                after=with_perms(now, a if a is not None else default_perms(executable)),
            )
        )
    return out


def walk_unusual(workspace: Path, skip: Iterable[str]) -> dict[str, int]:
    """Every file under `workspace` with unusual permission bits (`skip`: top-level-relative
    directories not to enter, e.g. `.git`, `.logician` and ignored directories)."""
    skipped = {s.rstrip("/") for s in skip}
    found: dict[str, int] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(workspace / rel if rel else workspace))
        except OSError:
            continue
        for entry in entries:
            sub = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    # Any repository's own store (nested ones too) holds no workspace files.
                    if sub not in skipped and entry.name != ".git":
                        stack.append(sub)
                    continue
                bits = unusual_perms(entry.stat(follow_symlinks=False))
            except OSError:
                continue
            if bits is not None:
                found[sub] = bits
    return found


# -- directory birth times (statx) ------------------------------------------------------------

_AT_FDCWD, _AT_SYMLINK_NOFOLLOW, _STATX_BTIME = -100, 0x100, 0x800
_statx: Any
try:
    _statx = ctypes.CDLL(None, use_errno=True).statx
except (OSError, AttributeError):  # not glibc >= 2.28: birth times are unknown
    _statx = None


def birth_time(full: Path, dir_fd: int = _AT_FDCWD) -> float | None:
    """When a directory was created (seconds since the epoch), or None where the system or
    the file system does not say. With `dir_fd`, `full` is a name inside that directory."""
    if _statx is None:
        return None
    buf = ctypes.create_string_buffer(256)
    if _statx(dir_fd, os.fsencode(full), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buf) != 0:
        return None
    (mask,) = struct.unpack_from("I", buf, 0)
    if not mask & _STATX_BTIME:
        return None
    sec, nsec = struct.unpack_from("qI", buf, 80)  # struct statx: stx_btime at offset 80
    return sec + nsec / 1e9


def fs_clock() -> float:
    """Now, on the clock Linux stamps file times with (the coarse realtime clock, updated each
    tick: it runs up to a few milliseconds behind `time.time()`, more on a loaded machine);
    `time.time()` where there is no such clock."""
    try:
        return time.clock_gettime(_COARSE)
    except OSError:
        return time.time()


_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)  # Linux's id; Python names it nowhere


def _coarse_tick() -> float:
    """The resolution of the clock the kernel stamps file times with."""
    try:
        return min(time.clock_getres(_COARSE), 0.02)
    except OSError:
        return 0.01


def remove_debris(
    workspace: Path,
    paths: Iterable[str],
    since: str | None,
    tree: Beneath | None = None,
    known: Iterable[str] = (),
    since_fs: float | None = None,
) -> list[tuple[str, int]]:
    """Remove the directories born after `since` (ISO time) that are empty once `paths` are
    gone: those above `paths`, those beneath them that never held a file (`git init`
    makes `objects/pack/`, `refs/tags/`...), and those among `known` (the change detector's
    directories: `os.makedirs('a/b')` made no file to find them by), deepest first; (path,
    permission bits) of each, so an undo can make it again. A directory that existed before
    (or whose birth is unknown) stays. Through `tree` (beneath.py): nothing behind a
    symlinked parent. `since_fs`, when recorded, is `since` read on the clock that stamps file
    times (`fs_clock`): the birth of a directory made after it is never earlier, so it is
    compared exactly; else `since` is taken with the doubt below."""
    if since is None:
        return []
    if tree is None:
        with Beneath(workspace) as own:
            return remove_debris(workspace, paths, since, own, known, since_fs)
    # File times come from the kernel's coarse clock, a tick or more behind `since`'s clock.
    cutoff = datetime.fromisoformat(since).timestamp() - 0.02 if since_fs is None else since_fs
    candidates: set[str] = set()
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent:
            candidates.add(parent)
            parent = parent.rpartition("/")[0]
    born_after: dict[str, bool] = {}

    def new(rel: str) -> bool:
        if rel not in born_after:
            try:
                dir_fd, name = tree.parent(rel)
                born = birth_time(Path(name), dir_fd)
            except OSError:  # gone, or behind a symlink (Conflict)
                born = None
            born_after[rel] = born is not None and born >= cutoff
        return born_after[rel]

    # One tick of the coarse clock file times come from (4 ms at HZ=250), not the 20 ms of
    # doubt above: `os.makedirs('out')` as a cell's first line is born within that tick of
    # the frame's open, while the previous cell's directories are older than its reply, the
    # next request and this frame's open.
    strict = cutoff + 0.02 - _coarse_tick() if since_fs is None else since_fs
    for rel in known:
        # Looked at by name first (a read of its birth, never through it): only the few
        # born since are walked to through `tree`, which opens their parents.
        born = birth_time(workspace / rel) if rel else None
        if born is not None and born >= strict:
            candidates.add(rel)
    # Below a directory the frames made, every directory they made is debris if empty.
    stack = [c for c in candidates if new(c)]
    while stack:
        for sub in _subdirectories(tree, stack.pop()):
            if sub not in candidates and new(sub):
                candidates.add(sub)
                stack.append(sub)
    removed = []
    for rel in sorted(candidates, key=lambda p: (p.count("/"), p), reverse=True):
        if not new(rel):
            continue
        try:
            st = tree.lstat(rel)
            if st is None or not stat.S_ISDIR(st.st_mode):
                continue
            tree.rmdir(rel)  # fails, harmlessly, for a directory that holds anything
        except OSError:  # gone, not empty, or behind a symlink (Conflict): left as it is
            continue
        removed.append((rel, st.st_mode & 0o7777))
    return removed


def _subdirectories(tree: Beneath, rel: str) -> list[str]:
    """The directories directly inside `rel` (never through a symlink); [] when unreadable."""
    try:
        parent, name = tree.parent(rel)
        fd = os.open(name, _DIR_READ, dir_fd=parent)
    except OSError:
        return []
    try:
        with os.scandir(fd) as entries:
            return [f"{rel}/{e.name}" for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    finally:
        os.close(fd)


def make_directories(
    tree: Beneath, made: Iterable[tuple[str, int]]
) -> dict[str, tuple[Literal["conflict", "failed"], str]]:
    """Make each directory (path, permission bits) a rewind removed, parents first, then give
    each its bits again, deepest first (a read-only parent is made read-only last); an
    existing one keeps its content. For each that was not made: (action, why), the action
    `conflict` where a symlink or a file stands in its place (left alone, as a file's
    conflict is), else `failed`."""
    failed: dict[str, tuple[Literal["conflict", "failed"], str]] = {}
    wanted = sorted(made, key=lambda m: (m[0].count("/"), m[0]))
    for rel, _ in wanted:
        try:
            tree.dir_fd(rel, create=True)
        except Conflict as exc:  # a file or a symlink stands there: never written through
            failed[rel] = ("conflict", str(exc))
        except (OSError, PathRefused) as exc:
            failed[rel] = ("failed", str(exc))
    for rel, bits in reversed(wanted):
        if rel in failed:
            continue
        try:
            parent, name = tree.parent(rel)
            fd = os.open(name, _DIR_READ, dir_fd=parent)
            try:
                os.fchmod(fd, bits)
            finally:
                os.close(fd)
        except OSError as exc:
            failed[rel] = ("failed", str(exc))
    return failed
