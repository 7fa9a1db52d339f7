"""Which workspace paths changed since the last look, from Linux inotify, so a snapshot can skip
the full stat scan.

Owns one inotify file descriptor and one watch per directory under the workspace root (the
excluded top-level names, `.git` and `.logician` by default, are never watched). `drain()`
turns the queued events into root-relative, '/'-separated paths:

- `a/b.txt`: this path was created, written, closed after writing, chmod-ed, deleted, or moved
  from or to. The caller stats it to learn what it is now (it may be gone).
- `a/b/` (trailing '/'): everything under this directory may have changed - it was deleted or
  moved away (we do not keep a per-directory list of entries: too costly at 100k files), or
  it cannot be watched (no permission to read it) and so is reported on every drain.
- A directory that appears (created or moved in) is watched, then walked, and every file in
  it is reported by name: files can land in it before its watch exists. Directories
  themselves are never reported by name, only their contents.

`drain()` returns None when the answer for this interval is not precise - not started, the
kernel queue overflowed, a new directory could not be watched, the root or a mount went away
- and the caller does a full scan instead. Before returning None it rebuilds every watch on a
fresh descriptor, so the next interval is precise again; if the rebuild fails too (e.g.
`fs.inotify.max_user_watches` exhausted) it stops watching and keeps returning None until
`start()` is called again.

Blind spots of inotify itself (the caller should still do an occasional full scan if these
matter): writes through a shared `mmap` (e.g. `numpy.memmap`) raise no event, nor do changes
made by another machine on a network file system (NFS, 9p, some FUSE), nor writes through a
hard link that lives outside the workspace.

Must never: import Jupyter or IPython, follow symlinks out of the workspace, block in
`drain()`, raise out of `start()`/`drain()` for an inotify or file system problem (they answer
False/None instead), or leak the descriptor (`close()`, the context manager, or garbage
collection releases it). Not thread-safe: one owner calls start/drain/close.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import struct
import sys
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000

_EVENTS = (
    IN_CREATE
    | IN_DELETE
    | IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
# IN_ONLYDIR: an entry listed as a directory can be swapped for a file or symlink before we
# watch it; then the watch must fail (ENOTDIR) rather than watch the wrong thing.
# IN_EXCL_UNLINK: no events for files already unlinked but still open (temp files).
_WATCH_MASK = _EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK
# The root itself may legitimately be a symlink (/home -> /data/home): follow that one only.
_ROOT_MASK = _EVENTS | IN_ONLYDIR | IN_EXCL_UNLINK

# struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[]; }
_HEADER = struct.Struct("iIII")
_READ_SIZE = 256 * 1024  # holds >= 900 events of the longest name; one read usually drains all
# A writer in a tight loop can refill the queue as fast as we empty it; stop after this many
# reads - what is still queued belongs to the next interval, like events after we return.
_MAX_READS = 256

# add_watch errors that mean "this directory is no longer there as a directory": it vanished
# or was replaced after we listed it, and its parent's events already cover that.
_GONE = (errno.ENOENT, errno.ENOTDIR)
# add_watch/scandir errors that mean "we may not look inside": reported as blind, not fatal.
_DENIED = (errno.EACCES, errno.EPERM)


class _Lost(Exception):
    """Precise tracking broke for this interval; the caller must fall back to a full scan."""


class _Inotify:
    """The three libc calls, typed once. `read` is os.read (read(2), EAGAIN as an exception)."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        self.init1 = libc.inotify_init1
        self.init1.argtypes = [ctypes.c_int]
        self.init1.restype = ctypes.c_int
        self.add_watch = libc.inotify_add_watch
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.add_watch.restype = ctypes.c_int
        self.rm_watch = libc.inotify_rm_watch
        self.rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        self.rm_watch.restype = ctypes.c_int


@functools.cache
def _inotify() -> _Inotify | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # dlopen(NULL): libc is already in the process (glibc or musl); find_library("c")
        # would shell out to ldconfig or gcc.
        return _Inotify(ctypes.CDLL(None, use_errno=True))
    except (OSError, AttributeError):
        return None


def _oserror(what: str, path: str = "") -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}", path or None)


def _close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


class WorkspaceWatcher:
    """Tracks changed paths under one root between `drain()` calls; see the module docstring."""

    def __init__(self, root: Path, *, exclude: Iterable[str] = (".git", ".logician")) -> None:
        # Absolute once: a relative root would silently change meaning with the cwd.
        self.root = os.path.abspath(os.fspath(root))
        self.exclude = frozenset(exclude)
        self._fd: int | None = None
        self._finalizer: weakref.finalize[[int], WorkspaceWatcher] | None = None
        self._root_wd = -1
        self._paths: dict[int, str] = {}  # wd -> root-relative directory ('' is the root)
        self._wds: dict[str, int] = {}  # directory -> wd
        # Watched subdirectories of each watched directory: forgetting a moved-away subtree
        # walks this instead of scanning every watched path.
        self._children: dict[str, set[str]] = {}
        self._blind: set[str] = set()  # directories we may not read: reported on every drain
        # What `directories()` read ahead of a drain, handed to the next drain (None: lost).
        self._ahead: set[str] | None = set()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> bool:
        """Watch root and every directory below it; False (and nothing held) if that fails.

        Calling it again starts over from scratch, e.g. after `drain()` gave up.
        """
        self.close()
        self._ahead = set()
        try:
            self._establish()
        except (_Lost, OSError):
            self.close()  # closing the descriptor releases every watch made so far
            return False
        return True

    def close(self) -> None:
        """Release the descriptor and every watch; safe to call twice."""
        if self._finalizer is not None:
            self._finalizer()  # closes the fd exactly once, even if GC already ran it
        self._finalizer = None
        self._fd = None
        self._root_wd = -1
        self._paths.clear()
        self._wds.clear()
        self._children.clear()
        self._blind.clear()

    def __enter__(self) -> WorkspaceWatcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def watching(self) -> bool:
        """True while changes are being tracked (drain() can answer precisely)."""
        return self._fd is not None

    def directories(self) -> list[str]:
        """Every directory there is now (relative; "" is the root): the ones a rewind looks at
        for empty directories its frames made, with no walk. Events still queued are read
        first (a directory made since the last drain is watched from then on); the paths they
        name are kept for the next drain, which still reports them."""
        if self._fd is not None and self._ahead is not None:
            try:
                for chunk in self._read_events():
                    self._handle_chunk(chunk, self._ahead)
            except (_Lost, OSError):
                self._ahead = None  # the next drain restarts the watch and says "full scan"
        return list(self._wds)

    # -- the interval ----------------------------------------------------------------------

    def drain(self) -> set[str] | None:
        """Paths changed since the last drain (or start); None means "do a full scan"."""
        if self._fd is None:
            return None
        ahead, self._ahead = self._ahead, set()
        changed: set[str] = set(ahead or ())
        try:
            if ahead is None:
                raise _Lost("events read ahead of this drain were lost")
            for chunk in self._read_events():
                self._handle_chunk(chunk, changed)
        except (_Lost, OSError):
            # Watches may be missing or mislabelled now (lost events could have been
            # directory moves): a fresh descriptor and a fresh walk is the only sound state.
            # It happens before we return so the next interval starts watched.
            self.start()
            return None
        changed.update(f"{path}/" for path in self._blind)
        return changed

    def _read_events(self) -> Iterator[bytes]:
        """Raw event buffers until the queue is empty (test seam: replace to inject events)."""
        assert self._fd is not None
        for _ in range(_MAX_READS):
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            if not data:
                return
            yield data

    def _handle_chunk(self, buf: bytes, changed: set[str]) -> None:
        offset, end = 0, len(buf)
        while offset + _HEADER.size <= end:
            wd, mask, _cookie, length = _HEADER.unpack_from(buf, offset)
            offset += _HEADER.size
            name = buf[offset : offset + length].partition(b"\0")[0]
            offset += length
            self._handle(wd, mask, os.fsdecode(name), changed)

    def _handle(self, wd: int, mask: int, name: str, changed: set[str]) -> None:
        if mask & IN_Q_OVERFLOW:
            raise _Lost("inotify queue overflowed")
        if mask & IN_IGNORED:
            self._drop_wd(wd)
            return
        parent = self._paths.get(wd)
        if parent is None:
            # A watch we already forgot (its directory was moved away or deleted). Whatever
            # happened in it is covered by the trailing-'/' report and, for a move inside the
            # workspace, by the walk of the new location.
            return
        if mask & IN_UNMOUNT:
            raise _Lost(f"file system under {parent or '.'!r} was unmounted")
        if not name:  # an event on the watched directory itself
            if wd == self._root_wd and mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                raise _Lost("workspace root was moved or deleted")
            return  # for a subdirectory, its parent's event names it
        if wd == self._root_wd and name in self.exclude:
            return
        path = _join(parent, name)
        if not mask & IN_ISDIR:
            changed.add(path)
            return
        if mask & (IN_DELETE | IN_MOVED_FROM):
            self._forget(path)
            changed.add(f"{path}/")
        elif mask & (IN_CREATE | IN_MOVED_TO):
            self._watch_tree(path, changed)
        elif mask & IN_ATTRIB and (path in self._blind or path not in self._wds):
            # chmod may have made an unreadable directory readable: try again.
            self._blind.discard(path)
            self._watch_tree(path, changed)

    # -- watches ---------------------------------------------------------------------------

    def _establish(self) -> None:
        api = _inotify()
        if api is None:
            raise _Lost("inotify is not available")
        fd = api.init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise _oserror("inotify_init1")
        self._fd = fd
        # Drop the watcher without close() and the fd still goes (not at interpreter exit
        # before GC, where the OS reclaims it anyway).
        self._finalizer = weakref.finalize(self, _close_fd, fd)
        self._watch_tree("", None)
        if "" not in self._wds:
            raise _Lost("workspace root cannot be watched")

    def _add_watch(self, path: bytes, mask: int) -> int:
        """inotify_add_watch; raises OSError (test seam: replace to simulate ENOSPC etc.)."""
        api = _inotify()
        assert api is not None and self._fd is not None
        wd = int(api.add_watch(self._fd, path, mask))
        if wd < 0:
            raise _oserror("inotify_add_watch", os.fsdecode(path))
        return wd

    def _watch_tree(self, top: str, changed: set[str] | None) -> None:
        """Watch `top` and every directory below it; add every non-directory to `changed`.

        Each directory is watched before it is listed, so an entry created meanwhile is
        either in the listing or raises an event - never neither.
        """
        stack = [top]
        while stack:
            rel = stack.pop()
            full = os.path.join(self.root, rel) if rel else self.root
            try:
                wd = self._add_watch(os.fsencode(full), _WATCH_MASK if rel else _ROOT_MASK)
            except OSError as exc:
                if rel and exc.errno in _GONE:
                    continue
                if rel and exc.errno in _DENIED:
                    self._blind.add(rel)
                    continue
                # ENOSPC (max_user_watches), ENOMEM, ...: not precise any more.
                raise _Lost(f"cannot watch {rel or '.'!r}: {exc.strerror}") from exc
            self._register(rel, wd)
            try:
                entries = os.scandir(full)
            except OSError as exc:
                if rel and exc.errno in _DENIED:
                    self._blind.add(rel)
                    continue
                if rel and exc.errno in _GONE:
                    continue
                raise _Lost(f"cannot list {rel or '.'!r}: {exc.strerror}") from exc
            with entries:
                for entry in entries:
                    if not rel and entry.name in self.exclude:
                        continue
                    child = _join(rel, entry.name)
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False  # gone already; reporting it is harmless
                    if is_dir:
                        stack.append(child)
                    elif changed is not None:
                        changed.add(child)

    def _register(self, path: str, wd: int) -> None:
        old_wd = self._wds.get(path)
        if old_wd is not None and old_wd != wd:
            # Something else was renamed over this (empty) directory: the old inode is gone.
            self._paths.pop(old_wd, None)
        old_path = self._paths.get(wd)
        if old_path is not None and old_path != path and self._wds.get(old_path) == wd:
            # Same inode under two names (a bind mount inside the workspace): the kernel has
            # one watch for both, so events carry only the newer name.
            del self._wds[old_path]
        self._paths[wd] = path
        self._wds[path] = wd
        self._blind.discard(path)
        if not path:
            self._root_wd = wd
        else:
            self._children.setdefault(_parent(path), set()).add(path)

    def _forget(self, top: str) -> None:
        """Stop watching a directory that was moved away or deleted, and all below it.

        A moved directory keeps its watches (they follow the inode) but our names for them
        are stale; if it moved inside the workspace the IN_MOVED_TO walk re-watches it
        under the new name.
        """
        api = _inotify()
        stack = [top]
        while stack:
            path = stack.pop()
            stack.extend(self._children.pop(path, ()))
            wd = self._wds.pop(path, None)
            if wd is None:
                continue
            self._paths.pop(wd, None)
            if api is not None and self._fd is not None:
                api.rm_watch(self._fd, wd)  # EINVAL if the kernel dropped it already: fine
        self._children.get(_parent(top), set()).discard(top)
        prefix = f"{top}/"
        self._blind = {b for b in self._blind if b != top and not b.startswith(prefix)}

    def _drop_wd(self, wd: int) -> None:
        """IN_IGNORED: the kernel removed this watch (directory deleted, or we removed it)."""
        path = self._paths.pop(wd, None)
        if wd == self._root_wd:
            raise _Lost("workspace root watch was removed")
        if path is not None and self._wds.get(path) == wd:
            del self._wds[path]
            self._children.get(_parent(path), set()).discard(path)
