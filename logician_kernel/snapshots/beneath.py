"""Writes beneath the workspace root: every restore, delete, mkdir, rename, chmod and temporary
file a rewind (or undo, resume, `rewind --call`, the large-file store) makes in the workspace,
and the one read the diff view makes of a file on disk (`open_read`).

A path is reached from the root through directory file descriptors, never by name from `/`:
`openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has it (Linux >= 5.6), else
one `openat(O_NOFOLLOW | O_DIRECTORY)` per component; then `unlinkat`, `mkdirat`, `renameat`,
`symlinkat`, `fchmod` and `fchown` act on one name inside that directory. Another program that replaces
`d/` by a symlink to a folder outside (before or during a rewind) makes `d/` a `Conflict`:
reported by path and left alone, never followed. The final component is never followed when
writing a file (a new temporary file is renamed over it, which replaces a symlink rather than
writing through it); a symlink the frame recorded is restored as a symlink (symlinks are data).

Directory descriptors are cached for the life of one `Beneath` (one rewind): a 3,000-file
rewind opens each directory once. An entry is changed only inside a directory that was, when
this rewind first reached it, the workspace's own directory of that name, reached from the
root without a symlink; if someone moves that directory away afterwards, writes follow the
directory, not the name, and never any symlink.

Must never: follow a symlink in any component below the root, accept an absolute path or a
`..` component, open an existing file for writing (every write is a new file and a rename),
or raise for a conflict anything but `Conflict` (the caller reports it and goes on).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from pathlib import Path
from types import TracebackType
from typing import Any

_O_PATH = getattr(os, "O_PATH", 0)
_DIR_OPEN = (_O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

SYS_OPENAT2 = 437
"""The same number on every Linux architecture (it was added after the tables were unified)."""
RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x02, 0x04, 0x08
_RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
_UNAVAILABLE = (errno.ENOSYS, errno.EPERM, errno.E2BIG)
"""What a kernel before 5.6 (ENOSYS), a seccomp filter that does not know the call (EPERM,
ENOSYS) or a struct it does not accept (E2BIG) answers: the per-component walk is used."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_syscall: Any
try:
    _syscall = ctypes.CDLL(None, use_errno=True).syscall
    _syscall.restype = ctypes.c_long
except (OSError, AttributeError):  # not a libc with syscall(): the walk does it all
    _syscall = None

openat2_available = _syscall is not None and bool(_O_PATH)
"""Whether `openat2` is tried; set False for good after the first ENOSYS/EPERM (tests set it
False to exercise the per-component walk)."""


class PathRefused(ValueError):
    """A path that cannot name an entry beneath the workspace (absolute, empty, `.`/`..`
    components, NUL); the message names it. A ledger that says so was not written by us."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path!r}: not a path inside the workspace (absolute, empty, '.' or '..' "
            "component); left alone"
        )
        self.path = path


class Conflict(OSError):
    """A parent of the path is no longer a plain directory of the workspace: `where` (such as
    `d/`) is a symlink, a file or something else. The path is left alone."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(
            errno.ELOOP if "symlink" in what else errno.ENOTDIR, f"{where}: {what}; left alone"
        )
        self.where = where
        self.what = what

    def __str__(self) -> str:
        return str(self.strerror)


_NOT_NAMES = frozenset(("", ".", ".."))
"""Components a workspace-relative path never has."""


def split(path: str) -> list[str]:
    """The components of a workspace-relative path, or PathRefused."""
    parts = path.split("/")
    if not path or "\0" in path or any(p in _NOT_NAMES for p in parts):
        raise PathRefused(path)
    return parts


def _openat2(dir_fd: int, rel: str) -> int:
    how = _OpenHow(_DIR_OPEN, 0, _RESOLVE)
    fd = _syscall(
        ctypes.c_long(SYS_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(rel)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), rel)
    return int(fd)


def _what(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "a directory became a symlink"
    if stat.S_ISREG(st.st_mode):
        return "a directory became a file"
    return "a directory became something else (not a directory)"


class Beneath:
    """Directory descriptors under one workspace root, opened without following symlinks, and
    the operations a restore makes through them. A context manager: `close` frees the fds."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        # The root itself is opened by name: it is the workspace the user chose (which may
        # be reached through a symlink of theirs); only what lies beneath is checked.
        self._fds: dict[str, int] = {
            "": os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        }
        self.owners: dict[str, tuple[int, int]] = {}
        """Owner and group (uid, gid) a path written next must get, when root: what an undo
        recorded for a file the rewind deleted or replaced. Paths not named keep the owner of
        the entry they replace (`keep_owner`)."""

    def __enter__(self) -> Beneath:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)

    # -- directories ---------------------------------------------------------------------------

    def dir_fd(self, rel: str, *, create: bool = False) -> int:
        """The descriptor of directory `rel` ("" is the root); missing ones are made when
        `create`, else FileNotFoundError. Conflict where a component is not a directory."""
        fd = self._fds.get(rel)
        if fd is not None:
            return fd
        parts = split(rel)
        # The deepest directory already open, then one openat2 for the rest where possible.
        known = len(parts) - 1
        while known and "/".join(parts[:known]) not in self._fds:
            known -= 1
        base = "/".join(parts[:known])
        global openat2_available
        if openat2_available and known < len(parts):
            try:
                fd = _openat2(self._fds[base], "/".join(parts[known:]))
            except OSError as exc:
                if exc.errno in _UNAVAILABLE:
                    openat2_available = False
                # Any other failure (a symlink, a file, a missing directory): the walk below
                # finds which component it was, and makes what is missing.
            else:
                self._fds[rel] = fd
                return fd
        for depth in range(known, len(parts)):
            parent = self._fds["/".join(parts[:depth])]
            here = "/".join(parts[: depth + 1])
            self._fds[here] = self._open_dir(parent, parts[depth], here, create=create)
        return self._fds[rel]

    @staticmethod
    def _open_dir(parent: int, name: str, here: str, *, create: bool) -> int:
        for attempt in (1, 2):
            try:
                return os.open(name, _DIR_OPEN, dir_fd=parent)
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
                    raise
            try:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                if not create or attempt == 2:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: opened next
                    os.mkdir(name, 0o777, dir_fd=parent)
                continue
            if stat.S_ISDIR(st.st_mode):
                continue  # a symlink was swapped back for a directory meanwhile: try again
            raise Conflict(here + "/", _what(st))
        raise Conflict(here + "/", "a directory kept changing while it was opened")

    def parent(self, path: str, *, create: bool = False) -> tuple[int, str]:
        """(descriptor of the path's directory, the path's last component)."""
        # A directory already open was checked by name when it was opened: only the last
        # component is left to check (a rewind asks this of each of 20,000 paths, several
        # times). "/x" is not "x" beneath the root: the slow path refuses it.
        head, sep, name = path.rpartition("/")
        if (head or not sep) and name not in _NOT_NAMES and "\0" not in name:
            fd = self._fds.get(head)
            if fd is not None:
                return fd, name
        parts = split(path)
        return self.dir_fd("/".join(parts[:-1]), create=create), parts[-1]

    def forget(self, rel: str) -> None:
        """Drop the cached descriptors of `rel` and everything under it (it was removed)."""
        for key in [k for k in self._fds if k == rel or k.startswith(rel + "/")]:
            if key:
                with contextlib.suppress(OSError):
                    os.close(self._fds.pop(key))

    def blocking(self, path: str) -> Conflict | PathRefused | None:
        """Why `path` cannot be reached beneath the root now (a parent that is not a plain
        directory, or a path that is not one beneath the root at all), else None."""
        try:
            self.parent(path)
        except (Conflict, PathRefused) as exc:
            return exc
        except OSError:
            return None  # a missing parent: the path is simply absent
        return None

    def look(self, path: str) -> tuple[Conflict | PathRefused | None, os.stat_result | None]:
        """`blocking` and `lstat` in one walk to the parent (a rewind's plan asks both of
        each of 20,000 paths): (why it cannot be reached, None) or (None, its stat or None
        when it or a parent is absent or cannot be looked at)."""
        try:
            fd, name = self.parent(path)
        except (Conflict, PathRefused) as exc:
            return exc, None
        except OSError:
            return None, None  # a missing parent: the path is simply absent
        try:
            return None, os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None, None

    def blocked(self, path: str) -> str | None:
        """`blocking`'s reason as the text a report shows, else None."""
        why = self.blocking(path)
        return None if why is None else str(why)

    # -- entries -------------------------------------------------------------------------------

    def lstat(self, path: str) -> os.stat_result | None:
        """The entry's own stat; None when it (or a parent) does not exist."""
        try:
            fd, name = self.parent(path)
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):  # never a Conflict: not a subclass
            return None

    def open_read(self, path: str) -> int | None:
        """A read-only descriptor of the regular file at `path` (the caller closes it); None
        when it (or a parent) does not exist. Conflict when it is a symlink or not a file."""
        try:
            fd, name = self.parent(path)
            new = os.open(
                name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd
            )
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Conflict(path, "a symlink") from None
            raise
        if not stat.S_ISREG(os.fstat(new).st_mode):
            os.close(new)
            raise Conflict(path, "not a regular file")
        return new

    def unlink(self, path: str) -> None:
        """Remove a file or symlink (the link, never its target); IsADirectoryError for a
        directory, FileNotFoundError when it is gone."""
        fd, name = self.parent(path)
        try:
            os.unlink(name, dir_fd=fd)  # Linux refuses a directory itself (EISDIR)
        except PermissionError:
            # POSIX lets a system answer EPERM for a directory: say which it was.
            if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", path) from None
            raise

    def rmdir(self, path: str) -> None:
        """Remove an empty directory (OSError otherwise; a symlink is not removed)."""
        fd, name = self.parent(path)
        self.forget(path)
        os.rmdir(name, dir_fd=fd)

    def rename(self, path: str, new_name: str) -> None:
        """Rename an entry within its directory (the entry itself, whatever it is)."""
        fd, name = self.parent(path)
        split(new_name)
        if "/" in new_name:
            raise PathRefused(new_name)
        os.replace(name, new_name, src_dir_fd=fd, dst_dir_fd=fd)

    def new_temp(self, path: str, replacing: os.stat_result | None = None) -> tuple[int, str, int]:
        """A new, empty file beside `path` (its parents made as needed), mode 0600 until the
        caller sets the final bits: (directory fd, temporary name, open fd for writing).
        `replacing`: the `lstat` of what stands at `path`, when the caller just took it."""
        fd, name = self.parent(path, create=True)
        tmp = f".{name}.logician-restore"
        try:
            new = os.open(tmp, _NEW_FILE, 0o600, dir_fd=fd)
        except FileExistsError:
            # A stale one (or a planted symlink): removed, never written through.
            os.unlink(tmp, dir_fd=fd)
            new = os.open(tmp, _NEW_FILE, 0o600, dir_fd=fd)
        owner = self.owners.get(path)
        if owner is not None and os.geteuid() == 0:
            os.fchown(new, *owner)  # on the descriptor: nothing is followed
        else:
            keep_owner(new, fd, name, replacing)
        return fd, tmp, new

    def write_file(
        self, path: str, data: bytes, perms: int, replacing: os.stat_result | None = None
    ) -> os.stat_result | None:
        """Replace `path` by a file holding `data` with bits `perms`, in one rename.
        `replacing`: as for `new_temp`.

        Returns the new file's `lstat` when nothing wrote to it after us: its modification time
        is set one nanosecond before the time its write gave it, so any later write (which
        takes a time at least that of ours) changes it; the caller may then remember these
        bytes by that identity (stat_memory.py, `wrote`). None when that could not be told."""
        dir_fd, tmp, fd = self.new_temp(path, replacing)
        try:
            try:
                # os.write, not a file object: 20,000 restored files pay no buffer each.
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, perms)
                ours = os.fstat(fd)
                mark = ours.st_mtime_ns - 1
                # Only what lets the file be remembered: where the file system refuses to set
                # times (some FUSE mounts), the file is restored all the same, and not noted.
                with contextlib.suppress(OSError):
                    os.utime(fd, ns=(ours.st_atime_ns, mark))
                os.replace(tmp, path.rpartition("/")[2], src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                # The descriptor is still ours: the stat of what now stands at `path`, renamed
                # (which sets its change time), unless someone wrote to it since.
                final = os.fstat(fd)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        return final if final.st_mtime_ns == mark else None

    def symlink(self, path: str, target: str) -> None:
        """Replace `path` by a symlink to `target` (written as data, never resolved)."""
        fd, name = self.parent(path, create=True)
        tmp = f".{name}.logician-restore"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=fd)
        os.symlink(target, tmp, dir_fd=fd)
        owner = self.owners.get(path)
        try:
            if owner is not None and os.geteuid() == 0:  # the link itself (lchownat)
                os.chown(tmp, *owner, dir_fd=fd, follow_symlinks=False)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise


def keep_owner(new_fd: int, dir_fd: int, name: str, old: os.stat_result | None = None) -> None:
    """As root, give a replacement the owner of the entry it replaces (a root kernel in a
    container restores host users' files: they stay theirs, not root's). Not root: a file we
    create is ours, and a file another account owns is never replaced (`frame_rewind.py`).
    `old`: that entry's `lstat`, when the caller just took it."""
    if os.geteuid() != 0:
        return
    try:
        old = os.stat(name, dir_fd=dir_fd, follow_symlinks=False) if old is None else old
    except FileNotFoundError:
        return
    if (old.st_uid, old.st_gid) != (0, 0):
        os.fchown(new_fd, old.st_uid, old.st_gid)


def blocked_parent(workspace: Path, path: str) -> str | None:
    """The conflict text if a parent of `path` is not a plain directory of `workspace` now:
    one look by name for readers that only ask (one lstat per parent, no descriptor), so a
    hash or a capture never reads bytes from behind a symlinked parent. Writers go through
    a `Beneath`, which is not fooled by a swap after the look."""
    try:
        parts = split(path)[:-1]
    except PathRefused as exc:
        return str(exc)
    here = os.fspath(workspace)
    for depth, part in enumerate(parts, start=1):
        here += "/" + part
        try:
            st = os.lstat(here)
        except OSError:
            return None  # a missing parent: the path is simply absent
        if not stat.S_ISDIR(st.st_mode):
            return f"{'/'.join(parts[:depth])}/: {_what(st)}; left alone"
    return None
