"""The second net: a restarted kernel kills a recorded tool process group its dead kernel left."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from logician_kernel.tools._bash import _group_alive
from logician_kernel.tools._process_guard import PROCESS_DIR, reap_orphans


def _record(workspace: Path, pgid: int, owner: int) -> Path:
    path = workspace / PROCESS_DIR / f"{pgid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pgid": pgid, "kernel_pid": owner, "tool": "bash",
                                "call": "sleep 30 &"}))  # fmt: skip
    return path


def test_a_group_whose_kernel_died_is_killed_and_the_user_told(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        record = _record(tmp_path, orphan.pid, dead.pid)
        notices = reap_orphans(tmp_path)
        assert len(notices) == 1 and "`sleep 30 &`" in notices[0] and "killed" in notices[0]
        assert orphan.wait(5) == -9
        assert not record.exists()
    finally:
        orphan.kill()


def test_a_group_of_another_live_kernel_is_left_alone(tmp_path: Path) -> None:
    other_kernel = subprocess.Popen(["sleep", "30"])
    group = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        record = _record(tmp_path, group.pid, other_kernel.pid)
        assert reap_orphans(tmp_path) == []
        time.sleep(0.1)
        assert _group_alive(group.pid) and record.exists()
    finally:
        for p in (other_kernel, group):
            p.kill()
            p.wait()


def test_a_record_of_a_finished_group_is_forgotten_quietly(tmp_path: Path) -> None:
    record = _record(tmp_path, 2**22 + 7, os.getpid())  # no such group
    assert reap_orphans(tmp_path) == []
    assert not record.exists()
