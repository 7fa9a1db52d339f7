"""An agent `bash` call cut off by a kill -9, through real kernels: watched exactly (fanotify),
it is offered for `rewind --call` after the restart, which puts back exactly the files its
processes changed (a created one deleted, a modified one restored) and leaves another
program's writes made meanwhile alone, and `%logician undo` takes that back; watched by
sampling, it stays quarantined and the notice says why.

The other program is started by the test, not the kernel, and everything waits on
conditions: the bash call writes its files, says it started, and waits for the other
program's files before it returns (then the test hook kills the kernel).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply
from test_kernel_process_tree import kernel_for, start_other
from test_kernel_recovery import _died_by_itself

from logician_kernel.durable.test_hooks import KILL_IN_CALL

pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def _bash_command(flags: Path) -> str:
    return (
        "echo made > new.txt; echo v2 >> notes.txt; echo noise > build.log; "
        f"touch {flags}/started; "
        f"while [ ! -e {flags}/done ]; do sleep 0.02; done"
    )


def _cut_off_bash_call(
    workspace: Path, env: dict[str, str], server: LoopbackServer, flags: Path, mechanism: str
) -> Kernel:
    """A kernel whose agent's bash call b1 wrote new.txt and notes.txt while another program
    wrote data.csv and other_new.txt, killed by the test hook as the call returned."""
    flags.mkdir()
    (workspace / "notes.txt").write_text("v1\n")
    server.script(tool_reply("b1", "bash", {"command": _bash_command(flags)}), text_reply("ok"))
    k = kernel_for(workspace, {**env, KILL_IN_CALL: "bash"}, mechanism)
    # another program appends to data.csv and creates other_new.txt while the call runs
    other = start_other(flags, workspace, ("data.csv", "a", "3,4\n"))
    try:
        k.send("%%logician\nBuild it.")
        _died_by_itself(k)
        assert other.wait(60) == 0
    except BaseException:
        other.kill()
        k.shutdown()
        raise
    assert (workspace / "new.txt").read_text() == "made\n"
    assert (workspace / "notes.txt").read_text() == "v1\nv2\n"
    del k.env[KILL_IN_CALL]
    k.start_again()
    return k


def test_a_bash_call_cut_off_by_kill_9_is_offered_and_rewinds_exactly_its_files(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, tmp_path: Path
) -> None:
    k = _cut_off_bash_call(workspace, agent_env, server, tmp_path / "flags", "fanotify")
    try:
        r = k.run("print('back')")
        assert "the bash call of frame" in r.stderr and "cut off" in r.stderr, r.stderr
        assert "'new.txt'" in r.stderr and "'notes.txt'" in r.stderr, r.stderr
        assert "data.csv" not in r.stderr and "other_new.txt" not in r.stderr, r.stderr
        assert "`%logician rewind --call b1`" in r.stderr and "quarantined" not in r.stderr
        buttons = [
            m
            for m in r.messages
            if m["msg_type"] == "display_data"
            and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        ]
        assert buttons, "where widgets render, the notice comes with a 'Rewind this call' button"

        # What the call recorded as it ran: its own paths, and the other program's apart.
        (seen,) = [r for r in _watch_records(workspace) if r["phase"] == "end"] or [None]
        assert seen is not None and seen["not_exact"] == ""
        others = {p for r in _watch_records(workspace) for p in r["others"]}
        assert {"data.csv", "other_new.txt"} <= others

        r = k.run("%logician rewind --call b1")
        assert r.status == "ok", r.text
        assert not (workspace / "new.txt").exists()
        assert (workspace / "notes.txt").read_text() == "v1\n"
        # An ignored file the call wrote has no pre-image: named, left as it is.
        assert "build.log" in r.text and "not captured" in r.text, r.text
        assert (workspace / "build.log").exists()
        # Another program's writes while the call ran are not the call's: left alone.
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n3,4\n"
        assert (workspace / "other_new.txt").read_text() == "another program's file"
        again = k.run("%logician rewind --call b1")
        assert again.status == "error" and "already rewound" in again.text

        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert (workspace / "new.txt").read_text() == "made\n"
        assert (workspace / "notes.txt").read_text() == "v1\nv2\n"
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n3,4\n"
    finally:
        k.shutdown()


def _watch_records(workspace: Path) -> list[dict[str, object]]:
    path = workspace / ".logician/threads/test-thread.jsonl"
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("kind") == "call_watch"]


def test_a_bash_call_killed_while_it_runs_is_offered_from_what_was_recorded_so_far(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, tmp_path: Path
) -> None:
    flags = tmp_path / "flags"
    flags.mkdir()
    (workspace / "notes.txt").write_text("v1\n")
    command = (
        "echo made > new.txt; echo v2 >> notes.txt; "
        f"while [ ! -e {flags}/never ]; do sleep 0.05; done"  # runs until the kernel dies
    )
    server.script(tool_reply("b2", "bash", {"command": command}), text_reply("ok"))
    k = kernel_for(workspace, agent_env, "fanotify")
    try:
        k.send("%%logician\nBuild it.")
        deadline = time.monotonic() + 60
        while {"new.txt", "notes.txt"} - {p for r in _watch_records(workspace) for p in r["paths"]}:
            assert time.monotonic() < deadline, _watch_records(workspace)
            time.sleep(0.05)
        k.kill9()  # mid-call: no `end` record
        assert not any(r["phase"] == "end" for r in _watch_records(workspace))
        k.start_again()
        r = k.run("print('back')")
        assert "`%logician rewind --call b2`" in r.stderr, r.stderr
        assert "may be missing from that list" in r.stderr, r.stderr
        r = k.run("%logician rewind --call b2")
        assert r.status == "ok", r.text
        assert not (workspace / "new.txt").exists()
        assert (workspace / "notes.txt").read_text() == "v1\n"
    finally:
        k.shutdown()


def test_a_bash_call_watched_by_sampling_stays_quarantined_and_the_notice_says_why(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, tmp_path: Path
) -> None:
    k = _cut_off_bash_call(workspace, agent_env, server, tmp_path / "flags", "sampling")
    try:
        r = k.run("print('back')")
        assert "quarantined the bash call" in r.stderr, r.stderr
        assert "not offered for rewind" in r.stderr and "by process tree sampling" in r.stderr
        assert "rewind --call b1" not in r.stderr
        r = k.run("%logician rewind --call b1")
        assert r.status == "error"
        assert (workspace / "new.txt").exists()  # nothing was put back behind the user's back
    finally:
        k.shutdown()
