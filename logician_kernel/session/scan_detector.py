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

What a stat scan cannot see: a write that keeps size, mtime and ctime (only possible by
resetting the clock) and, on NFS, a change younger than the client's attribute cache
(`actimeo`, 3-60 s by default) - mount with `actimeo=1` or `noac` where that matters.

Must never: follow symlinks, import Jupyter, or raise out of `start()`/`drain()` for a file
system problem (they answer False/None, and the caller does a full scan).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

Signature = tuple[int, int, int, int, int]
"""(size, mtime_ns, ctime_ns, inode, mode) of one path."""


def _signature(st: os.stat_result) -> Signature:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)


class ScanDetector:
    """Tracks changed paths under one root between `drain()` calls by comparing stat scans."""

    def __init__(
        self, root: os.PathLike[str] | str, *, exclude: Iterable[str] = (".git", ".logician")
    ) -> None:
        self.root = os.path.abspath(os.fspath(root))
        self.exclude = frozenset(exclude)
        self._seen: dict[str, Signature] | None = None

    kind = "scan"
    """How this detector learns of changes (shown by `%logician config` and frames)."""

    def start(self) -> bool:
        """Take the first scan; False (and not tracking) when the root cannot be listed."""
        self._seen = None
        scanned = self._scan()
        if scanned is None:
            return False
        self._seen = scanned[0]
        return True

    def close(self) -> None:
        self._seen = None

    @property
    def watching(self) -> bool:
        """True while the last scan succeeded (drain() can answer precisely)."""
        return self._seen is not None

    def drain(self) -> set[str] | None:
        """Paths changed since the last drain (or start); None means "do a full scan"."""
        if self._seen is None:
            return None
        scanned = self._scan()
        if scanned is None:
            self._seen = None
            return None
        now, blind = scanned
        before = self._seen
        changed = {p for p, sig in now.items() if before.get(p) != sig}
        changed.update(p for p in before if p not in now)
        changed.update(blind)
        self._seen = now
        return changed

    def _scan(self) -> tuple[dict[str, Signature], set[str]] | None:
        """Every non-directory path with its signature, and the unreadable directories."""
        seen: dict[str, Signature] = {}
        blind: set[str] = set()
        stack = [""]
        while stack:
            rel = stack.pop()
            full = os.path.join(self.root, rel) if rel else self.root
            try:
                entries = os.scandir(full)
            except OSError:
                if not rel:
                    return None  # the root itself went away or is unreadable
                if os.path.isdir(full):
                    blind.add(f"{rel}/")
                continue  # vanished between listing and entering: its parent reports it
            with entries:
                for entry in entries:
                    if not rel and entry.name in self.exclude:
                        continue
                    child = f"{rel}/{entry.name}" if rel else entry.name
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(child)
                            continue
                        seen[child] = _signature(entry.stat(follow_symlinks=False))
                    except OSError:
                        continue  # gone already: absent from this scan, so reported if known
        return seen, blind
