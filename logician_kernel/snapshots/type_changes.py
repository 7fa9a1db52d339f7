"""Paths whose type changed (file <-> directory, symlink <-> directory) as a snapshot sees them.

Owns one question: is a path still an entry of the workspace tree? A file whose parent became a
file or a symlink is gone, even though `lstat` may fail with ENOTDIR or (through a symlinked
parent) succeed on another path entirely. Git stores no path beyond a symlink, nor do we.

Must never: raise for a path that is merely gone.
"""

from __future__ import annotations

import os
from pathlib import Path


def lstat_entry(workspace: Path, path: str) -> os.stat_result | None:
    """The path's own stat, or None when it is no longer an entry of the workspace tree."""
    try:
        st = os.lstat(workspace / path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    parent = path.rpartition("/")[0]
    here = workspace
    for part in parent.split("/") if parent else ():
        here = here / part
        if here.is_symlink():
            return None
    return st
