"""The sidebar sees long work go: the first snapshot of a big workspace, a `progress` message with
`operation: first_snapshot`, sent at once to a comm that opens while the snapshot runs, then
rising counts ending at the number of files (the snapshot held, then slowed, by test hooks);
and the copy of a big file after a cell (`large_capture`, its bytes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel, make_kernel_env
from test_kernel_approvals import Sidebar

from logician_kernel.durable.test_hooks import HOLD_FULL_SCAN, SLOW_FIRST_SNAPSHOT

pytestmark = pytest.mark.kernel

N_FILES = 2000


@pytest.mark.timeout(300)
def test_the_comm_follows_the_first_snapshot_up_to_its_total(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    for i in range(N_FILES):
        d = ws / f"d{i // 100:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:04d}.txt").write_text(f"file {i}\n")
    release = tmp_path / "release-the-first-snapshot"
    env = {
        **make_kernel_env(tmp_path),
        HOLD_FULL_SCAN: str(release),
        SLOW_FIRST_SNAPSHOT: "0.001",  # a second or two of packing: several reports
    }
    k = Kernel(ws, env)
    try:
        sidebar = Sidebar(k)
        sidebar.wait_for("hello")
        # Opened while the snapshot is held: the work under way is told at once.
        first = sidebar.wait_for("progress")
        assert (first["operation"], first["done"], first["total"]) == ("first_snapshot", 0, N_FILES)
        assert first["finished"] is False
        release.touch()
        reports = [first]
        while not reports[-1]["finished"]:
            reports.append(sidebar.wait_for("progress", timeout=120))
        assert {r["operation"] for r in reports} == {"first_snapshot"}
        assert {r["total"] for r in reports} == {N_FILES}
        counts = [r["done"] for r in reports]
        assert counts == sorted(counts), counts
        assert len(set(counts)) >= 3, counts  # counts in between, not just 0 and the end
        assert counts[-1] == N_FILES
        # The status never said `rewinding` for it.
        phases = [d["phase"] for d in sidebar.seen if d.get("type") == "status"]
        assert "rewinding" not in phases, phases
        done = k.run("print('after', 6 * 7)")
        assert "after 42" in done.stdout, done.text

        # A later cell cloning a project of 1,000 files (with its own .gitignore, so the
        # close reads the workspace by a full scan, as after 20,000 changes): its progress is
        # the cell's capture, never called the first snapshot again. (Sent, not run: the
        # sidebar reads the messages the cell's close sends.)
        sidebar.seen.clear()
        k.send(
            "import os\nos.makedirs('cloned')\n"
            "open('cloned/.gitignore', 'w').write('*.tmp\\n')\n"
            "for i in range(1000):\n    open(f'cloned/p{i:04d}.txt', 'w').write(str(i))"
        )
        later = [sidebar.wait_for("progress", timeout=120)]
        while not later[-1]["finished"]:
            later.append(sidebar.wait_for("progress", timeout=120))
        assert {r["operation"] for r in later} == {"capture"}, later
        assert later[-1]["done"] == later[-1]["total"] >= 1000
        frames = k.run("%logician frames").text
        assert "1001 created" in frames, frames  # the files and the .gitignore
    finally:
        k.shutdown()


@pytest.mark.timeout(300)
def test_the_comm_follows_a_big_files_capture_after_the_cell(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    size = 96 << 20
    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        sidebar = Sidebar(k)
        sidebar.wait_for("hello")
        wrote = k.run(
            "import os\nwith open('big.bin', 'wb') as f:\n"
            f"    for _ in range({size >> 20}):\n        f.write(os.urandom(1 << 20))"
        )
        assert wrote.status == "ok", wrote.text
        # The copy starts as the frame closes: at load its reports (even the last) can go out
        # before the cell's idle status, among the cell's own messages, which `run` collects.
        reports = [
            m["content"]["data"]
            for m in wrote.messages
            if m["msg_type"] == "comm_msg" and m["content"]["data"].get("type") == "progress"
        ]
        while not reports or not reports[-1]["finished"]:
            reports.append(sidebar.wait_for("progress", timeout=120))
        assert {r["operation"] for r in reports} == {"large_capture"}
        assert {(r["path"], r["total"]) for r in reports} == {("big.bin", size)}
        counts = [r["done"] for r in reports]
        assert counts == sorted(counts) and counts[-1] == size, counts
    finally:
        k.shutdown()
