"""File modes of the kernel's state: what lives under `.logician/` is the user's alone.

Files we create there are 0600 and directories 0700, whatever the umask, because the ledger
and audit log hold conversations and commands, and a recording holds whole model exchanges.
The state directory itself is tightened to 0700 on every open, so anything inside - even a
file some other program created with wider bits - is out of other users' reach. A state
directory that other accounts own or can write is refused before that (state_trust.py), never
silently tightened: whatever they wrote while they could is not ours to trust.
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) 0700; an existing `path` is tightened to 0700."""
    path = Path(path)
    if not path.is_dir():
        # `mkdir(parents=True)` gives missing parents the umask's mode, not ours: make each
        # missing level ourselves, outermost first.
        missing = [path]
        while not missing[-1].parent.exists() and missing[-1].parent != missing[-1]:
            missing.append(missing[-1].parent)
        for level in reversed(missing):
            level.mkdir(mode=PRIVATE_DIR, exist_ok=True)
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(PRIVATE_DIR)
    except OSError:
        pass  # not ours to change (a shared mount): the files inside are still 0600
    return path


def open_private(path: Path | str, flags: int) -> int:
    """`os.open` creating the file 0600 (never following a last symlink)."""
    return os.open(path, flags | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), PRIVATE_FILE)


def write_private(path: Path | str, data: bytes) -> None:
    """Create or replace the content of a small private file."""
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
