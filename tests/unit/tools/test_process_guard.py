"""The second net: a restarted kernel kills a recorded tool process group its dead kernel left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from logician_kernel.tools._guard_script import (
    TREE_MARK,
    descendants,
    kill_tree,
    marked,
    process_stat,
    process_table,
)
from logician_kernel.tools._process_guard import (
    PROCESS_DIR,
    _record_mac,
    group_alive,
    reap_orphans,
    state_key,
)


def _record(workspace: Path, pgid: int, owner: int, *, signed: bool = True) -> Path:
    """A record as `watch` writes it (signed with the user's state key), or as planted."""
    path = workspace / PROCESS_DIR / f"{pgid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record: dict[str, object] = {
        "pgid": pgid,
        "kernel_pid": owner,
        "tool": "bash",
        "call": "sleep 30 &",
    }
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
        assert group_alive(group.pid) and record.exists()
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
        copied.write_text(
            copied.read_text().replace(f'"pgid": {victim.pid + 1}', f'"pgid": {victim.pid}')
        )
        notices = reap_orphans(tmp_path)
        assert len(notices) == 1 and "4 record(s)" in notices[0], notices
        assert "no process was killed" in notices[0]
        assert victim.poll() is None and group_alive(victim.pid)
        assert not any(p.exists() for p in (planted, copied, unsigned, odd))
    finally:
        victim.kill()
        victim.wait()


def test_the_guard_kills_a_setsid_double_fork_of_its_subreaper_parent_on_eof(
    tmp_path: Path,
) -> None:
    """The guard script in tree mode, under a stand-in kernel that is a subreaper: closing the
    kernel's pipe (its death) kills the detached grandchild and leaves the count."""
    kernel = subprocess.Popen(
        [sys.executable, "-c", _STAND_IN, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert kernel.stdout is not None and kernel.stdin is not None
    writer = int(kernel.stdout.readline())
    assert process_stat(writer) is not None
    kernel.stdin.close()  # the stand-in exits without an orderly "Q": it died
    kernel.wait(30)
    kernel.stdout.close()
    deadline = time.monotonic() + 60
    while (stat := process_stat(writer)) is not None and stat[0] != "Z":
        assert time.monotonic() < deadline, "the detached writer outlived its kernel"
        time.sleep(0.05)
    notices = reap_orphans(tmp_path)
    assert len(notices) == 1 and "died with 1 process" in notices[0], notices
    assert reap_orphans(tmp_path) == []  # said once


_STAND_IN = r"""
import os, subprocess, sys, time
from pathlib import Path
from logician_kernel.tools import _process_guard as guard
assert guard.guard_kernel_tree()
guard.note_state_dir(Path(sys.argv[1]))
r, w = os.pipe()
subprocess.run(["bash", "-c", f"(setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! >&{w})"],
               pass_fds=(w,), check=True)
os.close(w)
print(os.read(r, 64).decode().strip(), flush=True)
sys.stdin.read()
os._exit(0)  # no atexit: as if killed
"""


def test_adopted_zombies_are_reaped_and_own_children_left_to_their_popen() -> None:
    code = r"""
import os, subprocess, sys, time
from logician_kernel.tools._process_guard import become_subreaper, reap_adopted_zombies
from logician_kernel.tools._guard_script import process_table
assert become_subreaper()
own = subprocess.Popen(["true"])
subprocess.run(["bash", "-c", "(sleep 0.2 &)"], check=True, start_new_session=True)  # orphaned
deadline = time.monotonic() + 30
while True:
    zombies = [p for p, s in process_table().items() if s[1] == os.getpid() and s[0] == "Z"]
    if len(zombies) >= 2 or time.monotonic() > deadline:
        break
    time.sleep(0.05)
print(reap_adopted_zombies(), own.wait(), flush=True)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["1", "0"], out.stderr


def test_a_guard_killed_by_a_tool_is_replaced_and_still_kills_the_tree(tmp_path: Path) -> None:
    """A hostile command kills the guard first (same user), then detaches a writer: the kernel
    starts a new guard within a look or two, and that one kills the writer when the kernel
    dies."""
    kernel = subprocess.Popen(
        [sys.executable, "-c", _STAND_IN_KILLING_THE_GUARD, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert kernel.stdout is not None and kernel.stdin is not None
    writer = int(kernel.stdout.readline())
    kernel.stdin.close()
    kernel.wait(30)
    kernel.stdout.close()
    deadline = time.monotonic() + 60
    while (stat := process_stat(writer)) is not None and stat[0] != "Z":
        assert time.monotonic() < deadline, "the writer outlived its kernel and its guard"
        time.sleep(0.05)


_STAND_IN_KILLING_THE_GUARD = r"""
import os, signal, subprocess, sys, time
from pathlib import Path
from logician_kernel.tools import _process_guard as guard
from logician_kernel.tools._guard_script import (
    TREE_MARK,
    descendants,
    kill_tree,
    marked,
    process_stat,
    process_table,
)
assert guard.guard_kernel_tree()
first = guard._guard.pid
os.kill(first, signal.SIGKILL)
r, w = os.pipe()
subprocess.run(["bash", "-c", f"(setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! >&{w})"],
               pass_fds=(w,), check=True)
os.close(w)
writer = os.read(r, 64).decode().strip()
deadline = time.monotonic() + 30
while guard._guard is None or guard._guard.pid == first or guard._guard.poll() is not None:
    assert time.monotonic() < deadline, "no new guard"
    time.sleep(0.05)
print(writer, flush=True)
sys.stdin.read()
os._exit(0)
"""


def test_kill_tree_kills_what_it_saw_and_their_children_never_a_recycled_pid() -> None:
    """Never a recycled pid (another start time), never a process older than the kernel."""
    deadline = time.monotonic() + 30
    older = subprocess.Popen(["sleep", "300"])
    bystander = subprocess.Popen(["sleep", "300"])
    parent: subprocess.Popen[bytes] | None = None
    try:
        while (older_stat := process_stat(older.pid)) is None:
            assert time.monotonic() < deadline
        while True:  # start times count 10 ms ticks: the parent must be visibly younger
            parent = subprocess.Popen(["bash", "-c", "sleep 300 & wait"], start_new_session=True)
            parent_stat = process_stat(parent.pid)
            if parent_stat is not None and parent_stat[3] > older_stat[3]:
                break
            parent.kill()
            parent.wait()
            assert time.monotonic() < deadline
        while not descendants(parent.pid, process_table()):
            assert time.monotonic() < deadline, "bash never started its child"
            time.sleep(0.02)
        child = next(iter(descendants(parent.pid, process_table())))
        bystander_stat = process_stat(bystander.pid)
        assert bystander_stat is not None
        seen = {
            parent.pid: parent_stat[3],
            older.pid: older_stat[3],
            bystander.pid: bystander_stat[3] + 1,
        }  # a recycled pid: another start time
        assert kill_tree(seen, spare=set(), floor=parent_stat[3]) == 2
        assert parent.wait(10) == -9
        while (stat := process_stat(child)) is not None and stat[0] != "Z":
            assert time.monotonic() < deadline, "the child was not killed"
            time.sleep(0.02)
        assert bystander.poll() is None and older.poll() is None
    finally:
        for p in (parent, bystander, older):
            if p is not None:
                p.kill()
                p.wait()


def test_the_mark_finds_only_processes_started_under_this_kernel() -> None:
    mark = f"{os.getpid()}:test-{time.monotonic_ns()}"
    ours = subprocess.Popen(["sleep", "300"], env={**os.environ, TREE_MARK: mark})
    other = subprocess.Popen(["sleep", "300"], env={**os.environ, TREE_MARK: mark + "0"})
    try:
        found = marked(mark)
        assert ours.pid in found and other.pid not in found
    finally:
        for p in (ours, other):
            p.kill()
            p.wait()
