"""Shared by the snapshot tests: a workspace with one file, watched by inotify."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from logician_kernel.snapshots.git_snapshot import GitSnapshotter


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, Path, GitSnapshotter]]:
    """(workspace holding `a.txt` = "a\\n", store, its snapshotter watching by inotify);
    skipped where inotify is not available (every snapshot would be a full git scan)."""
    ws, store = tmp_path / "ws", tmp_path / "store"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    snap = GitSnapshotter(ws, store)
    snap.ensure_store()
    if not snap.watch("inotify"):
        snap.close()
        pytest.skip("no inotify here: every snapshot is a full git scan")
    try:
        yield ws, store, snap
    finally:
        snap.close()
