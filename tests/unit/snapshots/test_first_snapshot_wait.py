"""Frames opened while the first full snapshot runs (first_snapshot_wait.py), on the
Jupyter-free core: the first snapshot is held by the test-only hook, so every case is exact."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from logician_kernel.durable.test_hooks import HOLD_FULL_SCAN
from logician_kernel.frames import frame_rewind
from logician_kernel.snapshots.first_snapshot_wait import CarryingDetector
from logician_kernel.snapshots.watcher import WorkspaceWatcher
from logician_kernel.workspace.open_thread import OpenThread


def test_a_peek_never_takes_a_change_from_the_snapshotter(tmp_path: Path) -> None:
    watcher = WorkspaceWatcher(tmp_path)
    assert watcher.start()
    carrying = CarryingDetector(watcher)
    try:
        (tmp_path / "a.txt").write_text("a")
        assert carrying.peek() == {"a.txt"}
        assert carrying.peek() == set()  # a peek says what changed since the last peek
        (tmp_path / "b.txt").write_text("b")
        assert carrying.drain() == {"a.txt", "b.txt"}  # the snapshotter still sees both
        assert carrying.drain() == set()
    finally:
        carrying.close()


def test_a_lost_interval_makes_the_next_drain_a_full_scan(tmp_path: Path) -> None:
    class Lost:
        kind, watching, calls = "inotify", True, 0

        def drain(self) -> set[str] | None:
            self.calls += 1
            return None if self.calls == 1 else {"x"}

    carrying = CarryingDetector(Lost())  # type: ignore[arg-type]
    assert carrying.peek() is None
    assert carrying.drain() is None  # the peek lost track: the snapshotter must rescan
    assert carrying.drain() == {"x"}


@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A session over a plain workspace whose first snapshot is held until `release` exists."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(300):
        (ws / f"f{i:03d}.txt").write_text(f"{i}\n")
    release = tmp_path / "release"
    monkeypatch.setenv(HOLD_FULL_SCAN, str(release))
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "unit"})
    assert session.checkpoints is not None and session.checkpoints.warming_up
    yield session, release
    release.touch()
    session.checkpoints.wait_for_first_snapshot()
    session.close()


def test_a_frame_that_writes_nothing_closes_while_the_first_snapshot_still_runs(held) -> None:
    session, _release = held
    cp = session.checkpoints
    assert not cp.first_snapshot_blocks
    cp.open_frame(execution_count=1, cell_id=None, code="x = 1")
    (session.workspace / "f001.txt").read_text()  # reading is not a write
    closed = cp.close_frame("ok")
    assert cp.warming_up  # it never waited
    assert closed.changes == [] and closed.capture_error is None


def test_a_write_no_audit_event_announced_is_named_not_guessed(held) -> None:
    session, _release = held
    cp = session.checkpoints
    fd = os.open(session.workspace / "f002.txt", os.O_WRONLY | os.O_APPEND)  # before the frame
    try:
        cp.open_frame(execution_count=1, cell_id=None, code="c")
        os.write(fd, b"by a descriptor\n")  # as a C library would: no audit event
        closed = cp.close_frame("ok")
    finally:
        os.close(fd)
    assert cp.warming_up
    assert closed.changes == []
    assert "f002.txt" in closed.capture_error and "not captured" in closed.capture_error


def test_the_first_write_waits_for_the_first_snapshot_and_rewinds_exactly(held) -> None:
    session, release = held
    cp = session.checkpoints
    cp.open_frame(execution_count=1, cell_id=None, code="c")
    threading.Timer(1.5, release.touch).start()  # the write below is held until then
    (session.workspace / "f003.txt").write_text("changed\n")
    assert not cp.warming_up  # it waited for the first snapshot
    (session.workspace / "new.txt").write_text("new\n")
    closed = cp.close_frame("ok")
    assert closed.capture_error is None
    assert sorted(c.path for c in closed.changes) == ["f003.txt", "new.txt"]
    assert all(c.by == "cell" for c in closed.changes), closed.changes  # not "external"
    frame_rewind.rewind(cp, closed.frame)
    assert (session.workspace / "f003.txt").read_text() == "3\n"
    assert not (session.workspace / "new.txt").exists()
