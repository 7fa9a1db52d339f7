"""Which workspace paths changed since the last look, from a stat scan: the detector for file
systems where inotify cannot see (NFS, CIFS, FUSE, overlay) or when its watches run out.

Owns a table of every non-directory path under the workspace root (the excluded top-level
names, `.git` and `.logician` by default, are never entered) with its stat signature: size,
mtime_ns, ctime_ns, inode and mode. `drain()` walks the tree again and answers with the
root-relative, '/'-separated paths whose signature changed, appeared or disappeared - the same
answer `WorkspaceWatcher.drain()` gives, so both feed the same frame diff. Only those paths are
hashed afterwards (by the snapshotter); an unchanged file is never read.

Every path is reported by name (a deleted directory's files one by one), except a directory
we may not read, reported as `dir/` on every drain like the inotify watcher's blind spots.
Directories themselves are never reported by name, only their contents; a file replaced by a
directory (or back) is reported under both shapes.

A walk opens each directory once and stats its entries relative to it (`fstatat`): the
kernel resolves one name per file, not the whole path. Each directory's listing is kept in
listing order, so an unchanged directory (most of them) costs one list comparison and no
path string is built for its files. A directory whose own (ctime, mtime, inode) is unchanged
since a listing we may trust is not listed again: its known files are stat-ed by name. A
listing is trusted when the directory's ctime is older than the file system's clock read as
that walk began (the stamp's ctime; only with a stamp, and only for directories on the
stamp's device): an entry added after the listing then gives the directory a newer ctime.
A directory changed within the clock tick its walk began in is listed again next time. One
`lstat` per file remains: it dominates.

One drain per frame: a frame drains before and after its cell, and each drain stats every
path. When the frame opens within `FRESH_S` of the previous drain - cells run back to back,
or the kernel looked while idle (idle_look.py drains every 0.75 s for a while after a frame);
the snapshotter asks only when the last thing done was a frame's close, never after a
rewind, a diff or a save the Lab reported - `defer()` skips the opening drain: it stamps the
file system's clock (`utime` of a stamp file, so an NFS server's clock, not ours) and the
next drain sorts what it finds by ctime - a path whose ctime is older than the stamp changed
*before* the frame opened (between cells, not by the cell; `early`), anything else during
it. A deleted path counts as early when its nearest surviving directory has not changed
since the stamp. The cost of that: a path changed by another program in the last `FRESH_S`
before the cell *and* then by the cell looks like the cell's change alone (that save's
content is not read, so a rewind of the cell goes back past it), and a change within one
clock tick before the stamp counts as the cell's. A pause longer than the idle looks
(`idle_look.IDLE_FOR_S`) always drains, and so does a file system whose times are coarser
than 10 ms.

What a stat scan cannot see: a write that keeps size, mtime and ctime (only possible by
resetting the clock) and, on NFS, a change younger than the client's attribute cache
(`actimeo`, 3-60 s by default) - mount with `actimeo=1` or `noac` where that matters.

Must never: follow symlinks, import Jupyter, or raise out of `start()`/`drain()` for a file
system problem (they answer False/None, and the caller does a full scan).
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable
from stat import S_ISDIR

Signature = tuple[int, int, int, int, int]
"""(size, mtime_ns, ctime_ns, inode, mode) of one path."""


FRESH_S = 1.0
"""How recent the previous drain must be for `defer()` to skip a frame's opening drain."""
# A stamp time that is a multiple of this is taken as coming from a file system with coarse
# times (a nanosecond clock gives one about once in 10^7 stamps: then one frame drains twice).
_COARSE_NS = 10_000_000
_ROOT_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_DIR_OPEN = _ROOT_OPEN | os.O_NOFOLLOW
_DENIED = (errno.EACCES, errno.EPERM)


class _Scan:
    """One walk: each directory's files with their signatures (in listing order), each
    directory's ctime, the unreadable."""

    __slots__ = ("blind", "dirs", "listings", "tree")

    def __init__(self) -> None:
        self.tree: dict[str, tuple[list[str], list[Signature]]] = {}
        # Directories listed before the walk began, by their own (ctime, mtime, inode), with
        # their subdirectories: the next walk may stat their known names without listing.
        self.listings: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
        self.dirs: dict[str, int] = {}
        self.blind: set[str] = set()


class ScanDetector:
    """Tracks changed paths under one root between `drain()` calls by comparing stat scans."""

    def __init__(
        self,
        root: os.PathLike[str] | str,
        *,
        exclude: Iterable[str] = (".git", ".logician"),
        stamp: os.PathLike[str] | str | None = None,
    ) -> None:
        self.root = os.path.abspath(os.fspath(root))
        self.exclude = frozenset(exclude)
        self.stamp = os.fspath(stamp) if stamp is not None else None
        """A file on the workspace's file system whose ctime marks a skipped drain; None
        never skips one."""
        self._seen: dict[str, tuple[list[str], list[Signature]]] | None = None
        self._dirs: dict[str, int] = {}
        self._listings: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
        self._drained_at = float("-inf")
        self._deferred_at: int | None = None  # the stamp's ctime_ns while a drain is skipped
        self.early: set[str] | None = None
        """After the drain that follows a `defer()`: the paths it reported that changed
        before the skipped drain (between cells). None when no drain was skipped."""

    kind = "scan"
    """How this detector learns of changes (shown by `%logician config` and frames)."""

    def start(self) -> bool:
        """Take the first scan; False (and not tracking) when the root cannot be listed."""
        self._seen = None
        scanned = self._scan()
        if scanned is None:
            return False
        self._seen, self._dirs, self._listings = scanned.tree, scanned.dirs, scanned.listings
        self._drained_at = time.monotonic()
        return True

    def close(self) -> None:
        self._seen = None
        self._listings = {}
        self._deferred_at = None

    @property
    def watching(self) -> bool:
        """True while the last scan succeeded (drain() can answer precisely)."""
        return self._seen is not None

    def defer(self) -> bool:
        """Skip this drain (answer: nothing changed) when the previous one is fresh; the
        next drain then tells what changed before this moment apart (`early`). False, and
        nothing skipped, when the previous drain is not fresh or the stamp cannot be set."""
        if self._seen is None or self.stamp is None or self._deferred_at is not None:
            return False
        if time.monotonic() - self._drained_at > FRESH_S:
            return False
        clock = self._clock()
        if clock is None:
            return False
        stamped = clock[0]
        if stamped % _COARSE_NS == 0:
            return False  # second- or 10 ms-granular times (FAT, some FUSE): ties everywhere
        self._deferred_at = stamped
        return True

    def directories(self) -> list[str]:
        """Every directory the last scan saw (relative; "" is the root)."""
        return list(self._dirs)

    def drain(self) -> set[str] | None:
        """Paths changed since the last drain (or start); None means "do a full scan"."""
        deferred_at, self._deferred_at = self._deferred_at, None
        self.early = None
        if self._seen is None:
            return None
        scanned = self._scan()
        if scanned is None:
            self._seen = None
            return None
        changed, ctimes, gone = _compare(self._seen, scanned.tree)
        if deferred_at is not None:
            self.early = self._before(deferred_at, ctimes, gone, scanned.dirs)
        changed.update(scanned.blind)
        self._seen, self._dirs, self._listings = scanned.tree, scanned.dirs, scanned.listings
        self._drained_at = time.monotonic()
        return changed

    @staticmethod
    def _before(
        stamp: int, ctimes: dict[str, int], gone: list[str], dirs: dict[str, int]
    ) -> set[str]:
        """Which changed paths last changed before the stamp (strictly: a tie is the cell's)."""
        early = {p for p, ctime in ctimes.items() if ctime < stamp}
        for path in gone:
            parent = path
            while True:  # the nearest directory still there saw the removal
                parent = parent.rpartition("/")[0]
                ctime = dirs.get(parent)
                if ctime is not None or not parent:
                    break
            if ctime is not None and ctime < stamp:
                early.add(path)
        return early

    def _scan(self) -> _Scan | None:
        """Every directory's non-directories with their signatures, and the unreadable ones.

        Each directory is opened once and its entries are stat-ed relative to it (`fstatat`
        on the directory's descriptor): the kernel resolves one name per file, not the whole
        path, and no path string is built for a file unless it changed (see `_compare`). A
        directory whose own signature is unchanged since a listing we may trust is not
        listed again: its known names are stat-ed (see `_reuse`)."""
        scan = _Scan()
        tree, dirs, blind, listings = scan.tree, scan.dirs, scan.blind, scan.listings
        exclude, root = self.exclude, self.root
        known, reusable = self._seen or {}, self._listings
        clock = self._clock()
        stack = [""]
        while stack:
            rel = stack.pop()
            try:
                # The root may itself be a symlink (/home -> /data/home); nothing below it is
                # followed (O_NOFOLLOW here, AT_SYMLINK_NOFOLLOW for the entries).
                fd = os.open(f"{root}/{rel}" if rel else root, _ROOT_OPEN if not rel else _DIR_OPEN)
            except OSError as exc:
                if not rel:
                    return None  # the root itself went away or is unreadable
                if exc.errno in _DENIED:
                    blind.add(f"{rel}/")
                continue  # vanished (or replaced) since its parent was listed: reported so
            try:
                dst = os.fstat(fd)
                dirs[rel] = dst.st_ctime_ns
                own = (dst.st_ctime_ns, dst.st_mtime_ns, dst.st_ino)
                prefix = f"{rel}/" if rel else ""
                listed = reusable.get(rel)
                if listed is not None and listed[0] == own and rel in known:
                    sigs = _reuse(fd, known[rel][0])
                    if sigs is not None:
                        tree[rel] = (known[rel][0], sigs)
                        listings[rel] = listed
                        stack.extend(prefix + sub for sub in listed[1])
                        continue
                names: list[str] = []
                sigs = []
                subdirs: list[str] = []
                with os.scandir(fd) as entries:
                    for entry in entries:
                        name = entry.name
                        if not rel and name in exclude:
                            continue
                        try:
                            st = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue  # gone already: absent from this scan, so reported if known
                        if S_ISDIR(st.st_mode):
                            subdirs.append(name)
                            stack.append(prefix + name)
                            continue
                        names.append(name)
                        sigs.append(
                            (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)
                        )
                tree[rel] = (names, sigs)
                # Trusted only if the directory last changed before this walk began: an entry
                # added after the listing then changes its ctime (the clock moved on). Only on
                # the stamp's file system: another mount's clock may lag behind ours.
                if clock is not None and own[0] < clock[0] and dst.st_dev == clock[1]:
                    listings[rel] = (own, subdirs)
            except OSError:
                if not rel:
                    return None
                blind.add(f"{rel}/")  # opened but not listable (a FUSE or NFS error)
            finally:
                os.close(fd)
        return scan

    def _clock(self) -> tuple[int, int] | None:
        """The file system's time now (the stamp's ctime after touching it) and its device,
        or None."""
        if self.stamp is None:
            return None
        try:
            try:
                os.utime(self.stamp)
            except FileNotFoundError:
                os.close(os.open(self.stamp, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
            st = os.stat(self.stamp)
        except OSError:
            return None
        return st.st_ctime_ns, st.st_dev


def _reuse(fd: int, names: list[str]) -> list[Signature] | None:
    """The signatures of a directory's known files, or None if one is gone or is now a
    directory (the directory changed while we looked: list it)."""
    lstat = os.lstat
    sigs: list[Signature] = []
    try:
        for name in names:
            st = lstat(name, dir_fd=fd)
            if S_ISDIR(st.st_mode):
                return None
            sigs.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode))
    except OSError:
        return None
    return sigs


def _compare(
    before: dict[str, tuple[list[str], list[Signature]]],
    after: dict[str, tuple[list[str], list[Signature]]],
) -> tuple[set[str], dict[str, int], list[str]]:
    """Paths whose signature changed or that appeared (with their ctime) or disappeared.

    A directory whose listing and signatures are equal to the last walk's (in the same order,
    as an unchanged directory lists) costs one list comparison, in C: most of them."""
    changed: set[str] = set()
    ctimes: dict[str, int] = {}
    gone: list[str] = []
    for rel, (names, sigs) in after.items():
        old = before.get(rel)
        if old is not None and old[1] == sigs and old[0] == names:
            continue
        prefix = f"{rel}/" if rel else ""
        was = dict(zip(*old, strict=True)) if old is not None else {}
        for name, sig in zip(names, sigs, strict=True):
            if was.pop(name, None) != sig:
                path = prefix + name
                changed.add(path)
                ctimes[path] = sig[2]
        gone.extend(prefix + name for name in was)
    for rel in before.keys() - after.keys():  # a directory gone (or now unreadable)
        prefix = f"{rel}/" if rel else ""
        gone.extend(prefix + name for name in before[rel][0])
    changed.update(gone)
    return changed, ctimes, gone
