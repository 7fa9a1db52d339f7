"""The one `fsync_dir`, shared by every layer that persists (config, session, policy).

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
