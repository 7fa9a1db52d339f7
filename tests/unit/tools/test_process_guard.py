"""The second net: a restarted kernel kills a recorded tool process group its dead kernel left."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from logician_kernel.tools._bash import _group_alive
from logician_kernel.tools._process_guard import PROCESS_DIR, _record_mac, reap_orphans, state_key


def _record(workspace: Path, pgid: int, owner: int, *, signed: bool = True) -> Path:
    """A record as `watch` writes it (signed with the user's state key), or as planted."""
    path = workspace / PROCESS_DIR / f"{pgid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record: dict[str, object] = {"pgid": pgid, "kernel_pid": owner, "tool": "bash",
                                 "call": "sleep 30 &"}  # fmt: skip
    record["mac"] = _record_mac(record, state_key()) if signed else "0" * 64
    path.write_text(json.dumps(record))
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


def test_a_planted_record_kills_nothing_and_is_said_once(tmp_path: Path) -> None:
    """A workspace shipped with `.logician/processes/<pgid>.json` naming the user's other
    process groups (an editor, a server) and a dead "kernel" must not get them killed."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    victim = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        planted = _record(tmp_path, victim.pid, dead.pid, signed=False)
        unsigned = _record(tmp_path, victim.pid + 2, dead.pid)
        unsigned.write_text(json.dumps({"pgid": victim.pid, "kernel_pid": dead.pid}))
        odd = _record(tmp_path, victim.pid + 3, dead.pid)
        odd.write_text(json.dumps({"pgid": victim.pid, "kernel_pid": dead.pid, "mac": "é" * 64}))
        copied = _record(tmp_path, victim.pid + 1, dead.pid)  # a valid MAC, for another pgid
        copied.write_text(copied.read_text().replace(f'"pgid": {victim.pid + 1}',
                                                     f'"pgid": {victim.pid}'))  # fmt: skip
        notices = reap_orphans(tmp_path)
        assert len(notices) == 1 and "4 record(s)" in notices[0], notices
        assert "no process was killed" in notices[0]
        assert victim.poll() is None and _group_alive(victim.pid)
        assert not any(p.exists() for p in (planted, copied, unsigned, odd))
    finally:
        victim.kill()
        victim.wait()
