"""Durable-write helpers shared by every layer that persists (config, session, policy).

Below every package of ours: it imports nothing of the project.
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make a file's creation or rename in `directory` durable. Best effort: where a directory
    cannot be opened (Windows) or synced (some network file systems), the write itself has
    already been synced and the rename is still atomic."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_line(path: Path, line: bytes, *, mode: int = 0o600) -> None:
    """Append one newline-terminated `line` to a JSONL file durably (written and fsynced).

    The torn-line policy: a previous writer that died mid-line left a tail without a newline;
    it is ended first, so this line stays whole and readers skip only the torn one. The file
    is created with `mode`, and its creation is made durable too."""
    created = not path.exists()
    if created:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, mode)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)
