"""Damage stays local, through a real kernel: orphaned processes, output floods, damaged ledgers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply
from mcp_servers.helpers import wait_until
from processes import alive

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def test_kill_9_during_bash_leaves_no_process_and_no_later_file(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    command = "for i in $(seq 100); do touch b$i; sleep 0.1; done"
    server.script(tool_reply("b1", "bash", {"command": command}), text_reply("Noted."))
    k = Kernel(workspace, agent_env)
    try:
        k.send("%%logician\nTouch the files.")
        deadline = time.monotonic() + 30
        while not (workspace / "b3").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (workspace / "b3").exists()
        k.kill9()
        # the guard notices the dead kernel at once and ends the group (at load 20, in seconds)
        wait_until(lambda: alive("touch b$i", workspace) == [], 60, "the bash group to end")
        written = {p.name for p in workspace.glob("b*")}
        time.sleep(1.0)
        assert {p.name for p in workspace.glob("b*")} == written  # nothing runs on behind us
        assert len(written) < 100
        k.start_again()
        r = k.run("print('back')")
        # Named either way: offered for rewind (exact attribution) or quarantined (else).
        assert "the bash call of frame 1" in r.stderr, r.stderr
        # No group record is left (the new kernel's guard keeps its own `guard-<pid>.json`).
        records = (workspace / ".logician" / "processes").glob("*.json")
        assert not [p for p in records if p.stem.isdigit()]
    finally:
        k.shutdown()


def test_a_python_tool_flood_is_bounded_in_the_cell_and_for_the_model(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    code = "for i in range(2000):\n    print(f'{i:06d}' + 'x' * 10_000)"
    server.script(tool_reply("p1", "python", {"code": code}), text_reply("Printed."))
    k = Kernel(workspace, agent_env)
    try:
        r = k.run("%%logician\nPrint a lot.")
        assert r.status == "ok", r.text[:2000]
        # Head and tail kept, the total said: 20 MB printed, a bounded amount shown.
        assert len(r.stdout) < 100_000
        assert "000000xxx" in r.stdout and "001999xxx" in r.stdout
        assert "of 20,014,000 bytes" in r.stdout
        told = json.dumps([m for m in server.requests[-1].body["messages"] if m["role"] == "tool"])
        assert "001999xxx" in told and len(told) < 100_000
    finally:
        k.shutdown()


def test_logician_ledger_reports_a_damaged_record_by_sequence_number(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        for n in range(4):
            k.run(f"x = {n}")
        assert "no damage found" in k.run("%logician ledger").text
    finally:
        k.shutdown()
    ledger = workspace / ".logician" / "threads" / "test-thread.jsonl"
    data = bytearray(ledger.read_bytes())
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    data[starts[3] + 20] ^= 0x21  # record 4
    ledger.write_bytes(bytes(data))
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run("print('up')")
        assert "record(s) 4 lost" in r.stderr and ".damaged-at-" in r.stderr
        assert "record(s) 4 lost" in k.run("%logician ledger").text
        r = k.run("open('after.txt', 'w').write('x')")
        assert r.status == "ok" and "capture" not in r.stderr  # later frames still capture
        assert "after.txt" in k.run("%logician frames").text
    finally:
        k.shutdown()


def test_agent_cell_errors_are_one_line(workspace: Path, kernel_env: dict[str, str]) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run("%%logician --max-turns -3\nHi")
        assert r.status == "error" and "Traceback" not in r.text
        assert "--max-turns: must be a positive number, not '-3'" in r.text
        assert "validation error" not in r.text  # not a raw pydantic error
    finally:
        k.shutdown()


def test_an_unwritable_ledger_gives_the_agent_cell_a_clear_message(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    (workspace / ".logician").mkdir()
    (workspace / ".logician" / "threads").write_text("not a directory")
    k = Kernel(workspace, kernel_env)
    try:
        assert "frames are off" in k.run("x = 1").stderr
        r = k.run("%%logician\nHi")
        assert r.status == "error" and "Traceback" not in r.text and "RewindError" not in r.text
        assert "%%logician" in r.text and "ledger is unavailable" in r.text
    finally:
        k.shutdown()


def tree_of(root: Path) -> dict[str, str]:
    """Every path under root (but .logician and .git) with what it is and holds."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0] in (".logician", ".git"):
            continue
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = "file:" + path.read_text()
    return out


def test_type_changes_are_captured_every_time_and_rewound_exactly(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        setup = (
            "import os, shutil\n"
            "open('fd', 'w').write('file')\n"
            "os.makedirs('df'); open('df/a.txt', 'w').write('a')\n"
            "os.makedirs('real'); open('real/x', 'w').write('x'); os.symlink('real', 'ld')\n"
        )
        assert k.run(setup).status == "ok"
        before = tree_of(workspace)
        changes = (
            "os.remove('fd'); os.makedirs('fd'); open('fd/inner.txt', 'w').write('x')\n"
            "shutil.rmtree('df'); open('df', 'w').write('now a file')\n"
            "os.remove('ld'); os.makedirs('ld'); open('ld/y', 'w').write('y')\n"
        )
        r = k.run(changes)
        assert r.status == "ok" and "not captured" not in r.stderr, r.text
        after = tree_of(workspace)
        # The next cells touching the same paths still capture (nothing inherited a failure).
        r = k.run("open('fd/inner.txt', 'a').write('y'); open('df', 'a').write('!')")
        assert "not captured" not in r.stderr, r.text
        r = k.run("%logician rewind 3")
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert tree_of(workspace) == after
        r = k.run("%logician rewind 2")
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert tree_of(workspace) == before
    finally:
        k.shutdown()


def test_a_vanished_state_dir_is_recreated_with_a_notice_every_time(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    from logician_kernel.ledger.thread_ledger import read_entries

    ledger = workspace / ".logician" / "threads" / "test-thread.jsonl"
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("open('a.txt', 'w').write('a')").status == "ok"
        known = len(read_entries(ledger))
        for round_ in (1, 2):
            r = k.run(f"import shutil; shutil.rmtree('.logician'); open('b{round_}.txt', 'w')")
            assert "not captured" in r.stderr, r.text  # said in every cell it affects
            r = k.run(f"open('c{round_}.txt', 'w').write('c')")
            assert "had vanished and was recreated" in r.stderr, r.text
            assert "rewritten from memory" in r.stderr and "recreated empty" in r.stderr
            seqs = [e.seq for e in read_entries(ledger)]
            # Nothing the kernel had recorded was lost with the directory.
            assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > known
            known = len(seqs)
            r = k.run("%logician rewind --last")
            assert r.status == "ok", r.text
            assert not (workspace / f"c{round_}.txt").exists()  # the next frame captured again
    finally:
        k.shutdown()


def test_after_a_capture_failure_the_next_frame_recovers_by_itself(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    # The object store replaced by a file: no file version can be stored. (A planted git
    # `index.lock` no longer works for this: it is cleared as stale under our own lock; nor
    # does a broken private index: a changed cell's tree is written without it.)
    objects = ".logician/git/objects"
    k = Kernel(workspace, kernel_env)
    try:
        k.run("open('x.txt', 'w').write('keep me')")
        r = k.run(
            f"import os; os.replace('{objects}', '{objects}.saved'); "
            f"open('{objects}', 'w').close(); open('x.txt', 'w').write('changed')"
        )
        assert "not captured" in r.stderr, r.text
        r = k.run(f"os.remove('{objects}'); os.replace('{objects}.saved', '{objects}')")
        assert "not captured" in r.stderr, r.text  # said again: this cell was affected too
        r = k.run("os.remove('x.txt')")
        assert r.status == "ok" and "not captured" not in r.stderr, r.text
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (workspace / "x.txt").read_text() == "changed"  # re-read, not inherited
    finally:
        k.shutdown()


def test_two_kernels_on_one_workspace_capture_and_rewind_only_their_own_cells(
    workspace: Path, tmp_path: Path
) -> None:
    from kernel_harness import make_kernel_env

    a = Kernel(workspace, make_kernel_env(tmp_path / "a", thread="nb-a"))
    b = Kernel(workspace, make_kernel_env(tmp_path / "b", thread="nb-b"))
    try:
        for i in range(20):  # interleaved, as two notebooks in one folder are used
            for name, k in (("a", a), ("b", b)):
                r = k.run(f"open('{name}{i}.txt', 'w').write('{i}')")
                assert r.status == "ok" and "not captured" not in r.stderr, (name, i, r.text)
        # Cells running at the same time: each kernel has its own index, so neither fails on
        # the other's index lock.
        for i in range(10):
            sent = [
                (k, k.send(f"for j in range(40): open(f'{n}c{i}_{{j}}.tmp', 'w').write('x')"))
                for n, k in (("a", a), ("b", b))
            ]
            for k, msg in sent:
                r = k.collect(msg)
                assert r.status == "ok" and "not captured" not in r.stderr, (i, r.text)
        r = a.run("%logician rewind 11")
        assert r.status == "ok", r.text
        assert sorted(p.name for p in workspace.glob("a*.txt")) == sorted(
            f"a{i}.txt" for i in range(10)
        )
        assert not list(workspace.glob("ac*.tmp"))
        assert len(list(workspace.glob("b*.txt"))) == 20  # the other notebook's files stay
        r = b.run("%logician rewind 1")
        assert r.status == "ok", r.text
        assert not list(workspace.glob("b*.txt")) and len(list(workspace.glob("a*.txt"))) == 10
        assert not list(workspace.glob("bc*.tmp"))
    finally:
        a.shutdown()
        b.shutdown()
