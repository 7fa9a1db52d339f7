"""The large-file side store on the Jupyter-free core, driven directly (the fast tier)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from logician_kernel.session import large_files
from logician_kernel.session.large_files import LargeLimits
from logician_kernel.session.large_store import LargeFileStore, hash_file
from logician_kernel.session.workspace_session import WorkspaceSession


@pytest.fixture
def session(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    s = WorkspaceSession.open(
        ws, env={"LOGICIAN_THREAD": "unit"}, max_file_bytes=100_000,
        large=LargeLimits(threshold=1000, max_store_bytes=10_000, keep_recent_frames=1),
    )  # fmt: skip
    yield s
    s.close()


def frame(session: WorkspaceSession, action):
    cp = session.checkpoints
    assert cp is not None
    cp.open_frame(execution_count=None, cell_id=None, code="cell")
    action(session.workspace)
    return cp.close_frame("ok")


def test_the_store_keeps_one_copy_per_content_and_restores_bytes_and_modes(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(os.urandom(50_000))
    b.write_bytes(a.read_bytes())
    key = store.put(a)
    assert store.put(b) == key == hash_file(a)
    assert key.endswith("-50000")
    assert [o.key for o in store.list()] == [key]
    out = tmp_path / "out.bin"
    store.restore(key, out, 0o750)
    assert out.read_bytes() == a.read_bytes()
    assert out.stat().st_mode & 0o777 == 0o750
    assert not list(store.tmp.iterdir())
    store.remove(key, why="test", frames=[3])
    with pytest.raises(OSError, match="was evicted"):
        store.restore(key, out, 0o644)
    assert store.evictions()[0]["frames"] == [3]


def test_large_files_skip_git_and_a_rewind_brings_them_back(session) -> None:
    data = os.urandom(5000)
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(data))
    assert [(c.path, c.after.kind) for c in closed.changes] == [("big.bin", "large")]
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(b"small now"))
    assert (closed.changes[0].before.kind, closed.changes[0].after.kind) == ("large", "blob")
    session.checkpoints.rewind(closed.frame)
    assert (session.workspace / "big.bin").read_bytes() == data
    git_objects = session.workspace / ".logician" / "git" / "objects"
    assert all(p.stat().st_size < 1000 for p in git_objects.rglob("*") if p.is_file())


def test_eviction_keeps_recent_frames_and_current_files(session) -> None:
    for v in range(1, 5):  # 4 versions x 3000 bytes against a 10,000 byte budget
        frame(session, lambda ws, v=v: (ws / "f.bin").write_bytes(bytes([v]) * 3000))
    session.checkpoints.settle()  # the last frame's copy runs after it closed
    budget = session.checkpoints.budget
    assert budget is not None
    assert budget.evicted() == {2: ["f.bin"]}  # frame 2's pre-image (version 1) went first
    assert (
        "evicted 0.0 MB of large pre-images of frame(s) 2" in session.checkpoints.drain_notices()[0]
    )
    plan = session.checkpoints.plan_rewind(2)
    assert [s.path for s in plan.skipped] == ["f.bin"] and "evicted" in plan.skipped[0].detail
    freed, lost = budget.gc(0)
    assert freed == 6000 and lost == [3, 4]
    assert (session.workspace / "f.bin").read_bytes() == bytes([4]) * 3000


def test_a_file_another_process_keeps_writing_is_reported_unstable(
    session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(large_files, "SETTLE_SECONDS", 0.3)
    path = session.workspace / "log.bin"
    cp = session.checkpoints
    cp.open_frame(execution_count=None, cell_id=None, code="cell")
    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nf = open(sys.argv[1], 'wb')\nf.write(b'x' * 5000); f.flush()\n"
         "print('ready', flush=True)\ntime.sleep(30)", str(path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert writer.stdout.readline().strip() == "ready"  # type: ignore[union-attr]
        closed = cp.close_frame("ok")
        cp.settle()  # the frame closed at once; its copy waited for the writer, in vain
        seen = cp.snapshotter.snapshot()
    finally:
        writer.kill()
        writer.communicate()
    assert seen.uncaptured["log.bin"][0] == "unstable" and "log.bin" not in seen.large
    # Once the writer let go, the next frame captures it as it settled: rewindable again.
    closed = frame(session, lambda ws: (ws / "log.bin").write_bytes(b"y" * 5000))
    assert [(c.before.kind, c.after.kind) for c in closed.changes] == [("large", "large")]
    session.checkpoints.rewind(closed.frame)
    assert path.read_bytes() == b"x" * 5000


def test_half_made_objects_of_a_dead_kernel_are_swept(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    store.ensure()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (store.tmp / f"in-{dead.pid}-1").write_bytes(b"torn")
    (store.tmp / f"in-{os.getpid()}-2").write_bytes(b"ours, in progress")
    store.sweep()
    assert [p.name for p in store.tmp.iterdir()] == [f"in-{os.getpid()}-2"]


def test_with_reflinks_the_frame_keeps_the_content_it_closed_with(session, monkeypatch) -> None:
    # This file system has no reflinks: a byte copy stands in for FICLONE, so the path a
    # reflink takes (clone as the frame closes, key and store the clone afterwards) runs.
    from logician_kernel.session import large_store

    def clone(src_fd: int, dst_fd: int, store: LargeFileStore) -> bool:
        os.write(dst_fd, os.pread(src_fd, 1 << 20, 0))
        store.reflinks = True
        return True

    monkeypatch.setattr(large_store, "_clone", clone)
    cp = session.checkpoints
    store = cp.budget.large.store
    v1, v2 = os.urandom(3000), os.urandom(3000)
    frame(session, lambda ws: (ws / "big.bin").write_bytes(v1))
    # Rewritten outside any frame before the background capture ran: the frame still keeps v1.
    (session.workspace / "big.bin").write_bytes(v2)
    cp.settle()
    keys = {o.key for o in store.list()}
    (session.workspace / "v1").write_bytes(v1)
    assert hash_file(session.workspace / "v1") in keys
    (session.workspace / "v1").unlink()
    # The same content again is stored once: the clone is dropped after hashing.
    frame(session, lambda ws: (ws / "big.bin").write_bytes(v1))
    cp.settle()
    assert {o.key for o in store.list()} >= keys and len(list(store.list())) == len(keys) + 1
    assert not list(store.tmp.iterdir())
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(b"small"))
    cp.rewind(closed.frame)
    assert (session.workspace / "big.bin").read_bytes() == v1
