"""Paths whose type changed (file <-> directory, symlink <-> directory) as a snapshot sees them.

Owns one question: is a path still an entry of the workspace tree? A file whose parent became a
file or a symlink is gone, even though `lstat` may fail with ENOTDIR or (through a symlinked
parent) succeed on another path entirely. Git stores no path beyond a symlink, nor do we.

Must never: raise for a path that is merely gone.
"""

from __future__ import annotations

import os
from pathlib import Path


def lstat_entry(
    workspace: Path | str, path: str, parents: dict[str, bool] | None = None
) -> os.stat_result | None:
    """The path's own stat, or None when it is no longer an entry of the workspace tree.
    `parents` remembers which parent directories are symlinks across the calls of one look
    at many paths (thousands of files in one folder check it once); without it every call
    looks afresh."""
    root = os.fspath(workspace)
    try:
        st = os.lstat(os.path.join(root, path))
    except (FileNotFoundError, NotADirectoryError):
        return None
    parent = path.rpartition("/")[0]
    if parent and _beyond_symlink(root, parent, {} if parents is None else parents):
        return None
    return st


def _beyond_symlink(root: str, directory: str, known: dict[str, bool]) -> bool:
    """Whether `directory` or one of its ancestors (below `root`) is a symlink."""
    answer = known.get(directory)
    if answer is None:
        above = directory.rpartition("/")[0]
        answer = (bool(above) and _beyond_symlink(root, above, known)) or os.path.islink(
            os.path.join(root, directory)
        )
        known[directory] = answer
    return answer
