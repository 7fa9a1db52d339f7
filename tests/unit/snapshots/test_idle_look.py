"""Looks between cells (idle_look.py): a stat scan's cell after a pause walks the workspace
once, and what another program saved during the pause is still the cell's pre-image."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.frames.file_checkpoints import FileCheckpoints
from logician_kernel.snapshots import idle_look
from logician_kernel.snapshots.idle_look import IdleLook
from logician_kernel.workspace.open_thread import OpenThread


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(idle_look, "INTERVAL_S", 0.1)


def _session(tmp_path: Path, detector: str = "scan") -> OpenThread:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "notes.txt").write_text("v1")
    (ws / "data.txt").write_text("d1")
    return OpenThread.open(ws, env={"LOGICIAN_THREAD": "unit"}, change_detection=detector)


def _cells(s: OpenThread) -> FileCheckpoints:
    cp = s.checkpoints
    assert cp is not None and cp.snapshotter is not None
    cp.wait_for_first_snapshot()  # steady state: frames opened during it defer their snapshot
    cp.open_frame(execution_count=1, cell_id=None, code="first")
    assert cp.close_frame("ok") is not None
    return cp


def _count_walks(cp: FileCheckpoints) -> list[int]:
    """Counts the detector's walks from now on (into the returned one-item list)."""
    detector = cp.snapshotter._watcher  # type: ignore[union-attr]
    assert detector is not None
    count, drain = [0], detector.drain

    def counted() -> set[str] | None:
        count[0] += 1
        return drain()

    detector.drain = counted  # type: ignore[method-assign]
    return count


def _wait_for_looks(cp: FileCheckpoints, n: int) -> None:
    deadline = time.monotonic() + 10
    while cp.idle.looks < n:
        assert time.monotonic() < deadline, f"only {cp.idle.looks} looks"
        time.sleep(0.02)


def test_a_save_during_a_pause_is_the_pre_image_of_a_cell_that_overwrites_it(
    tmp_path: Path, fast: None
) -> None:
    s = _session(tmp_path)
    try:
        cp = _cells(s)
        (s.workspace / "notes.txt").write_text("saved by an editor during the pause")
        (s.workspace / "other.txt").write_text("created by another program")
        _wait_for_looks(cp, 2)  # the pause: a look after the saves
        walks = _count_walks(cp)
        frame = cp.open_frame(execution_count=2, cell_id=None, code="second")
        time.sleep(0.03)  # a file system clock tick: the cell's writes are dated after its start
        (s.workspace / "notes.txt").write_text("by the cell")
        closed = cp.close_frame("ok")
        assert closed is not None and not closed.capture_error
        assert walks == [1]  # one walk for this cell, after it: the look was fresh
        assert [(c.path, c.action) for c in closed.changes] == [("notes.txt", "modified")]
        frame_rewind.rewind(cp, frame)
        assert (s.workspace / "notes.txt").read_text() == "saved by an editor during the pause"
        assert (s.workspace / "other.txt").read_text() == "created by another program"
    finally:
        s.close()


def test_no_look_after_a_rewind_a_diff_or_a_reported_save(tmp_path: Path, fast: None) -> None:
    s = _session(tmp_path)
    try:
        cp = _cells(s)
        _wait_for_looks(cp, 1)
        assert cp.snapshotter is not None
        cp.note_save("notes.txt", "2026-12-01T00:00:00Z")  # the Lab saved between cells
        looks = cp.idle.looks
        time.sleep(0.4)
        assert cp.idle.looks <= looks + 1  # one may have started before the save: no more
        # The next frame reads the workspace before its cell, as without the looks.
        cp.open_frame(execution_count=2, cell_id=None, code="second")
        closed = cp.close_frame("ok")
        assert closed is not None and closed.start_tree is None
        _wait_for_looks(cp, looks + 2)  # armed again by that frame ...
        cp.settle()  # ... until a rewind, undo or storage report is about to run
        looks = cp.idle.looks
        time.sleep(0.4)
        assert cp.idle.looks == looks
    finally:
        s.close()


def test_looks_stop_after_the_idle_period_and_never_run_for_inotify(
    tmp_path: Path, fast: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idle_look, "IDLE_FOR_S", 0.35)
    s = _session(tmp_path)
    try:
        cp = _cells(s)
        _wait_for_looks(cp, 1)
        time.sleep(0.8)
        looks = cp.idle.looks
        assert 1 <= looks <= 4
        time.sleep(0.4)
        assert cp.idle.looks == looks  # idle long enough: the kernel stops looking
    finally:
        s.close()
    s = _session(tmp_path / "inotify", "inotify")
    try:
        cp = _cells(s)
        _wait_for_looks(cp, 1)
        time.sleep(0.3)
        assert cp.idle.looks == 1  # the snapshotter declined the first look: no more
    finally:
        s.close()


def test_a_look_never_waits_for_the_lock_nor_starts_once_a_frame_is_opening(fast: None) -> None:
    lock = threading.Lock()
    ran: list[float] = []
    idle = IdleLook(lock, lambda: bool(ran.append(time.monotonic())) or True, lambda exc: None)
    try:
        with lock:  # a large file being copied: the look waits its turn, without blocking
            idle.arm()
            time.sleep(0.3)
            assert ran == []
        time.sleep(0.2)
        assert ran, "a look ran once the lock was free"
        idle.disarm()  # a frame opens: no further look
        time.sleep(0.05)
        n = len(ran)
        time.sleep(0.3)
        assert len(ran) == n
    finally:
        idle.close()


def test_a_failing_look_resets_the_snapshotter_and_stops(fast: None) -> None:
    errors: list[Exception] = []

    def boom() -> bool:
        raise OSError("the volume went away")

    idle = IdleLook(threading.Lock(), boom, errors.append)
    try:
        idle.arm()
        time.sleep(0.4)
        assert [str(e) for e in errors] == ["the volume went away"] and idle.looks == 1
    finally:
        idle.close()
