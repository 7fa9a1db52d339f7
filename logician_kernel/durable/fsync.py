"""The one `fsync_dir`, shared by every layer that persists (config, session, policy).

Also the choke point of durable writes (`durable_write`, `durable_fsync`, `durable_replace`):
the ledger, the side files, the stores and the config file write, sync and rename through
them, so a test can make the Nth of them fail (`test_hooks.inject_fault`).

Below every package of ours: it imports nothing of the project but the test hooks.
"""

from __future__ import annotations

import os
from pathlib import Path

from .test_hooks import inject_fault


def durable_write(fd: int, data: bytes | memoryview) -> int:
    """`os.write`, counted for fault injection; returns the bytes written."""
    inject_fault("write", fd)
    return os.write(fd, data)


def durable_fsync(fd: int) -> None:
    """`os.fsync`, counted for fault injection."""
    inject_fault("fsync", fd)
    os.fsync(fd)


def durable_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """`os.replace`, counted for fault injection."""
    inject_fault("rename", dst)
    os.replace(src, dst)


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
