"""Several kernels on one workspace (shared storage): the private index takes turns."""

from __future__ import annotations

import threading
from pathlib import Path

from logician_kernel.snapshots.git_snapshot import GitSnapshotter


def test_two_kernels_snapshot_one_workspace_at_once_without_index_lock_errors(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = ws / ".logician" / "git"
    snappers = [GitSnapshotter(ws, store) for _ in range(2)]
    snappers[0].ensure_store()
    errors: list[BaseException] = []

    def kernel(n: int) -> None:
        try:
            for i in range(8):
                (ws / f"k{n}-{i}.txt").write_text(f"{n} {i}")
                snappers[n].invalidate()  # no watcher: every snapshot writes the shared index
                snappers[n].snapshot()
        except BaseException as exc:  # noqa: BLE001 - the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=kernel, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert not (store / "logician-index.lock").exists()
