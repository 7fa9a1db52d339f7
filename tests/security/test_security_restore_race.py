"""The race: another process swaps `d` between the workspace's real directory and a symlink to a
folder outside (an atomic `renameat2(RENAME_EXCHANGE)` loop, as fast as it can) while a
3,000-file rewind - and then its undo - writes `d/`: in 20 runs nothing outside is written or
deleted. Before `snapshots/beneath.py` the restore opened `workspace/d/<name>` by name, so each
file landed wherever `d` pointed at that instant (2,998 of 3,000 outside in one run).

Driven in-process on the Jupyter-free core (real git, real files, a real second process for
the swaps) rather than through a kernel: a real-kernel rewind of 3,000 files twenty times is
minutes under load, and the kernel adds nothing to a race between two file-system writers.
The static cases through a real kernel are test_security_restore_beneath.py's.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.frames.undo import undo_rewind
from logician_kernel.workspace.open_thread import OpenThread

FILES = 3000
RUNS = 20
RENAME_EXCHANGE = 2
AT_FDCWD = -100

SWAPPER = r"""
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
print("ready", flush=True)
n = 0
while not stop:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
    n += 1
print(n, flush=True)
"""

_renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)


def exchange(a: Path, b: Path) -> None:
    assert _renameat2 is not None
    if _renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")


def state(root: Path) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for entry in os.scandir(root):
        st = entry.stat(follow_symlinks=False)
        out[entry.name] = (Path(entry.path).read_bytes(), st.st_ino, st.st_mtime_ns)
    return out


class Swapper:
    """The other process: swaps `d` and `link` until stopped; says how many swaps it made."""

    def __init__(self, d: Path, link: Path) -> None:
        self.d, self.link = d, link
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SWAPPER, str(d), str(link)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"  # blocks until it swaps

    def stop(self) -> int:
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, out
        if self.d.is_symlink():  # stopped mid-pair: the real directory back under its name
            exchange(self.d, self.link)
        assert self.d.is_dir() and not self.d.is_symlink()
        return int(out.strip())


@pytest.mark.skipif(_renameat2 is None, reason="libc has no renameat2 (glibc < 2.28)")
@pytest.mark.timeout(1800)
def test_a_swap_racing_a_3000_file_rewind_and_undo_writes_nothing_outside(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    d = ws / "d"
    d.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    for i in range(FILES):
        (d / f"f{i:04d}.txt").write_text(f"original {i}\n")
        # The outside folder holds the same names with the bytes the frame left (a check by
        # content alone would take them for the workspace's own).
        (outside / f"f{i:04d}.txt").write_text(f"changed {i}\n")
    link = ws / "d-swap"
    os.symlink(outside, link)
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "race"}, max_file_bytes=100_000)
    try:
        cp = session.checkpoints
        assert cp is not None
        cp.wait_for_first_snapshot()
        cp.open_frame(execution_count=None, cell_id=None, code="cell")
        for i in range(FILES):
            (d / f"f{i:04d}.txt").write_text(f"changed {i}\n")
        frame = cp.close_frame("ok").frame
        before = state(outside)
        swaps = conflicts = 0
        for run in range(RUNS):
            for op in ("rewind", "undo"):
                swapper = Swapper(d, link)
                try:
                    if op == "rewind":
                        item = frame_rewind.rewind(cp, frame, force=True)
                    else:
                        item = undo_rewind(cp, None, force=True)
                finally:
                    swaps += swapper.stop()
                assert state(outside) == before, f"run {run + 1}: the {op} wrote outside"
                conflicts += sum(p.action == "conflict" for p in item.paths)
        assert swaps > RUNS * 2, "the swapper never ran during the rewinds"
        print(f"{swaps} swaps; {conflicts} path(s) left alone as conflicts over {RUNS} runs")
    finally:
        session.close()
