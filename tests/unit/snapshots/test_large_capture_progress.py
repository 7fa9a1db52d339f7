"""A big file copied into the side store says how far the copy has come: `(path, bytes copied,
bytes in all)` rising to the file's size, from the copying thread (what the status bar shows
as "capturing big.bin 120 / 300 MB")."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from logician_kernel.snapshots.large_files import LargeFiles, LargeLimits
from logician_kernel.snapshots.large_store import LargeFileStore

SIZE = 80 << 20  # several copy chunks


def test_a_large_file_copy_counts_its_bytes_up_to_the_size(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    big = ws / "data" / "big.bin"
    with open(big, "wb") as fh:
        for _ in range(SIZE >> 20):
            fh.write(os.urandom(1 << 20))
    store = LargeFileStore(tmp_path / "large")
    store.reflinks = False  # a file system that can share extents copies nothing to count
    large = LargeFiles(ws, store, LargeLimits(threshold=4096))
    told: list[tuple[str, int, int]] = []
    threads: set[int] = set()

    def progress(path: str, done: int, total: int) -> None:
        told.append((path, done, total))
        threads.add(threading.get_ident())

    large.copy_progress = progress
    state = large.capture("data/big.bin", os.lstat(big))

    assert state.kind == "large", state
    assert {(path, total) for path, _, total in told} == {("data/big.bin", SIZE)}
    counts = [done for _, done, _ in told]
    assert counts == sorted(counts) and counts[-1] == SIZE, counts
    assert len(counts) >= 2, counts  # counted as it went, not once at the end
    assert threads == {threading.get_ident()}
    assert state.sha is not None and store.has(state.sha)  # the copy was stored
