"""Choosing how the snapshotter learns which workspace paths changed: inotify or a stat scan.

Owns the `checkpoints.change_detection` decision. `inotify` is O(changes) per frame but blind
to writes made by another machine on a shared volume; `scan` stats every path per frame but
sees everything the kernel's host can stat. `auto` picks inotify on local file systems and
the scan on network, FUSE and overlay file systems (read from the mount table), and switches
to the scan when inotify gives up (its watches ran out), saying so once.

Both detectors answer `drain()` the same way (see `watcher.py`), so the frame diff after them
is one code path. Must never: import Jupyter, or raise for a missing mount table (a file
system it cannot classify counts as local).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, Protocol

from ..durable.state_dir import state_path
from .scan_detector import ScanDetector
from .watcher import WorkspaceWatcher

ChangeDetection = Literal["auto", "inotify", "scan"]

# Where inotify does not report another host's writes, or (overlay) misses lower-layer changes.
_REMOTE_TYPES = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "overlay",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "afs",
        "beegfs",
        "virtiofs",
        "vboxsf",
        "davfs",
    }
)
_MOUNTINFO = Path("/proc/self/mountinfo")


class Detector(Protocol):
    """What the snapshotter needs of a change detector."""

    def start(self) -> bool: ...
    def drain(self) -> set[str] | None: ...
    def close(self) -> None: ...
    @property
    def watching(self) -> bool: ...


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo octal.
    return field.encode().decode("unicode_escape").encode("latin-1").decode(errors="replace")


def filesystem_type(path: Path, mountinfo: Path = _MOUNTINFO) -> str | None:
    """The type of the file system `path` lives on (`ext4`, `nfs4`, `fuse.sshfs`...), or None."""
    try:
        lines = mountinfo.read_text(errors="replace").splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, best_len = None, -1
    for line in lines:
        fields = line.split(" ")
        if "-" not in fields:
            continue
        sep = fields.index("-")
        if len(fields) < 5 or sep + 1 >= len(fields):
            continue
        point = _unescape(fields[4])
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        # A later line with the same mount point is mounted over the earlier one.
        if inside and len(point) >= best_len:
            best, best_len = fields[sep + 1], len(point)
    return best


def is_remote(fs_type: str | None) -> bool:
    """Whether inotify on this file system type can miss changes."""
    if fs_type is None:
        return False
    return fs_type in _REMOTE_TYPES or fs_type == "fuse" or fs_type.startswith("fuse.")


class AutoDetector:
    """inotify while it keeps up; a stat scan from the moment it cannot (watches ran out)."""

    def __init__(self, root: Path, exclude: Iterable[str]) -> None:
        self._root, self._exclude = root, tuple(exclude)
        self._inner: Detector = WorkspaceWatcher(root, exclude=self._exclude)
        self.kind = "inotify"
        self.notice: str | None = None
        """Set once when we fell back to the scan; the session shows it in the next cell."""

    def start(self) -> bool:
        if self._inner.start():
            return True
        self._fall_back()
        return self._inner.start()

    def drain(self) -> set[str] | None:
        changed = self._inner.drain()
        if changed is None and self.kind == "inotify" and not self._inner.watching:
            self._fall_back()
            self._inner.start()  # this interval is a full scan; the next is a stat scan
        return changed

    def directories(self) -> list[str]:
        """The directories the detector in use knows (see its own `directories`)."""
        return getattr(self._inner, "directories", list)()

    def close(self) -> None:
        self._inner.close()

    @property
    def watching(self) -> bool:
        return self._inner.watching

    def defer(self) -> bool:
        return bool(getattr(self._inner, "defer", lambda: False)())

    @property
    def early(self) -> set[str] | None:
        return getattr(self._inner, "early", None)

    def _fall_back(self) -> None:
        self._inner.close()
        self._inner = ScanDetector(self._root, exclude=self._exclude, stamp=_stamp(self._root))
        self.kind = "scan"
        self.notice = (
            f"Logician: inotify cannot watch {self._root} (watches exhausted or unavailable; "
            "see fs.inotify.max_user_watches); file changes are now found by a stat scan of "
            "the workspace at each cell."
        )


def _stamp(root: Path) -> Path:
    # Beside our store, on the workspace's file system, where its clock stamps the file.
    return state_path(Path(root)) / "scan-stamp"


def make_detector(mode: ChangeDetection, root: Path, exclude: Iterable[str]) -> Detector:
    """The detector `mode` asks for on this root (not started)."""
    if mode == "scan" or (mode == "auto" and is_remote(filesystem_type(root))):
        exclude = tuple(exclude)
        stamp = _stamp(root) if ".logician" in exclude else None
        return ScanDetector(root, exclude=exclude, stamp=stamp)
    if mode == "inotify":
        return WorkspaceWatcher(root, exclude=exclude)
    return AutoDetector(root, exclude)
