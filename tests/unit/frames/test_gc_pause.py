"""A frame close holds Python's cyclic collector off and gives it back as the user left it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from logician_kernel.frames.gc_pause import gc_paused
from logician_kernel.workspace.open_thread import OpenThread


def _close_a_frame(ws: Path, seen: list[bool]) -> None:
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "gc"}, max_file_bytes=100_000)
    cp = session.checkpoints
    assert cp is not None
    cp.open_frame(execution_count=None, cell_id=None, code="cell")
    for k in range(100):
        (ws / f"f{k}.txt").write_text(str(k))
    gc.callbacks.append(cb := lambda phase, info: seen.append(phase == "start"))
    try:
        closed = cp.close_frame("ok")
    finally:
        gc.callbacks.remove(cb)
    assert closed is not None and len(closed.changes) == 100


def test_the_collector_is_off_during_a_close_and_back_on_after(tmp_path: Path) -> None:
    seen: list[bool] = []
    assert gc.isenabled()
    _close_a_frame(tmp_path, seen)
    assert gc.isenabled()
    # Left on, it runs three times for these 100 paths (261 for 5,000); once is the run it owes after the close.
    assert sum(seen) <= 1, f"the collector ran {sum(seen)} times during the close"


def test_a_collector_the_user_turned_off_stays_off(tmp_path: Path) -> None:
    gc.disable()
    try:
        _close_a_frame(tmp_path, [])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_exception_inside_gives_the_collector_back() -> None:
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()
