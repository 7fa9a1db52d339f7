"""The first snapshot of a workspace of a few thousand real files says how far it has come:
`(files read, files in all)`, rising from 0 to the total, told from the thread that scans."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from logician_kernel.durable.test_hooks import SLOW_FIRST_SNAPSHOT
from logician_kernel.snapshots.git_snapshot import GitSnapshotter

N_FILES = 3000


def _workspace(root: Path) -> Path:
    for i in range(N_FILES):
        d = root / f"d{i // 100:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:04d}.txt").write_text(f"file {i}\n")
    return root


def test_the_first_snapshot_counts_files_up_to_the_total_from_the_scanning_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path / "ws")
    monkeypatch.setenv(SLOW_FIRST_SNAPSHOT, "0.0005")  # the packers read for about a second
    snap = GitSnapshotter(ws, tmp_path / "store", max_file_bytes=1_000_000)
    snap.ensure_store()
    reports: list[tuple[int, int]] = []
    threads: set[int] = set()

    def progress(done: int, total: int) -> None:
        reports.append((done, total))
        threads.add(threading.get_ident())

    snap.scan_progress = progress
    try:
        snap.snapshot()
        first = list(reports)
        # The next scan has nothing new to read: it says nothing.
        reports.clear()
        (ws / "d00" / "f0000.txt").write_text("changed\n")
        snap.invalidate()
        snap.snapshot()
        assert reports == []
    finally:
        snap.close()
    reports = first

    assert reports[0] == (0, N_FILES)
    assert reports[-1] == (N_FILES, N_FILES)
    assert {total for _, total in reports} == {N_FILES}
    counts = [done for done, _ in reports]
    assert counts == sorted(counts), counts  # never goes back
    assert len(set(counts)) > 3, counts  # counts in between, not just the start and the end
    assert threads == {threading.get_ident()}  # told from the scanning thread, never a packer's
