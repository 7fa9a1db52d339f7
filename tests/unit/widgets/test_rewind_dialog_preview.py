"""The rewind dialog's preview of a cell that wrote 20,000 files, on a real workspace: after a
capture by full scan (20,000 creates overflow inotify's queue) the preview reads none of the
files again once they are older than the racy window, yet a file someone else rewrote since
the frame (same size, its modification time set back, or within the same second) is still a
conflict the dialog shows."""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import logician_kernel.snapshots.snapshot_objects as snapshot_objects
from logician_kernel.agent.approvals import ApprovalBroker
from logician_kernel.jupyter.comm import LogicianComms
from logician_kernel.jupyter.rewind_source import LedgerRewindSource
from logician_kernel.snapshots import watcher
from logician_kernel.snapshots.stat_memory import RACY_NS
from logician_kernel.workspace import Workspace

pytestmark = pytest.mark.timeout(600)

FILES = 20_000


def _overflowed(self: watcher.WorkspaceWatcher) -> Iterator[bytes]:
    """What inotify reads after 20,000 creates outran its queue."""
    yield struct.pack("iIII", -1, watcher.IN_Q_OVERFLOW, 0, 0)


def _wait_clock_past(ns: int) -> None:
    """Wait until the wall clock is past `ns` (a condition on the clock, not a fixed sleep)."""
    deadline = time.monotonic() + 10
    while time.time_ns() <= ns:
        assert time.monotonic() < deadline, "the clock did not move"
        time.sleep(0.01)


def test_a_dialog_after_a_full_scan_reads_no_file_again_and_still_shows_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "dialog", "LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    workspace = Workspace.open(ws, env)
    source = LedgerRewindSource(workspace, LogicianComms(ApprovalBroker(), dict))
    reads: list[str] = []
    real_read = snapshot_objects.path_state

    def counted(full: Path, *args: Any) -> Any:
        reads.append(os.fspath(full))
        return real_read(full, *args)

    try:
        parts = ws / "data" / "parts"
        with monkeypatch.context() as overflow:
            overflow.setattr(watcher.WorkspaceWatcher, "_read_events", _overflowed)
            with workspace.frame(1, "cell-a", "write") as frame:
                parts.mkdir(parents=True)
                for i in range(FILES):
                    (parts / f"p{i:05d}.csv").write_text(f"{i}\n")
        assert frame.closed is not None and len(frame.closed.changes) == FILES
        looks = {os.fspath(p): os.lstat(p) for p in parts.iterdir()}
        newest = max(max(st.st_mtime_ns, st.st_ctime_ns) for st in looks.values())
        # A file whose two times both fall on a whole millisecond looks like a coarse-clock
        # file system's and is always read (stat_memory.py): with nanosecond times, about
        # 1 in 50 runs has one such file among 20,000.
        coarse = {
            path
            for path, st in looks.items()
            if st.st_mtime_ns % 1_000_000 == 0 == st.st_ctime_ns % 1_000_000
        }
        _wait_clock_past(newest + RACY_NS)
        monkeypatch.setattr(snapshot_objects, "path_state", counted)

        preview = source.preview_target(None, "cell-a")
        assert preview["groups"] == [
            {
                "directory": "data/parts/",
                "below": False,
                "delete": FILES,
                "restore": 0,
                "recreate": 0,
            }
        ]
        assert preview["conflicts_total"] == 0
        # Only the files written in the scan's racy window are read (before: all 20,000).
        assert len(reads) < FILES // 4, len(reads)
        reads.clear()
        again = source.preview_target(None, "cell-a")
        assert again["files_total"] == FILES and set(reads) <= coarse, reads
        reads.clear()

        # Someone else rewrites two of them after the frame, same size: one with its
        # modification time set back to the cell's, one within the same second.
        moved_back = parts / "p12345.csv"
        st = os.lstat(moved_back)
        with open(moved_back, "r+b") as fh:
            fh.write(b"X")
        os.utime(moved_back, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.lstat(moved_back).st_mtime_ns == st.st_mtime_ns
        same_second = parts / "p00042.csv"
        same_second.write_text("43\n")
        after = source.preview_target(None, "cell-a")
        assert after["conflicts_total"] == 2
        assert sorted(c["path"] for c in after["conflicts"]) == [
            "data/parts/p00042.csv",
            "data/parts/p12345.csv",
        ]
        assert all("changed since frame" in c["detail"] for c in after["conflicts"])
        assert after["groups"] == [
            {
                "directory": "data/parts/",
                "below": False,
                "delete": FILES - 2,
                "restore": 0,
                "recreate": 0,
            }
        ]
        assert sorted(set(reads) - coarse) == [os.fspath(same_second), os.fspath(moved_back)]
    finally:
        workspace.close()
