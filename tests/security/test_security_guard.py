"""Processes cannot escape the guard: a `setsid` double-fork started by a tool call or by a cell
subprocess dies with its kernel when the kernel is killed with SIGKILL, and the restarted
kernel says how many processes were left and killed.

The attacker is a command the model runs (or code in a cell) that detaches a writer loop
from every process group the kernel knows: before the guard was a subreaper it kept writing
into the workspace after the kernel died, and the restart said nothing.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply

from logician_kernel.tools._guard_script import process_stat

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

# A double fork: the subshell starts `setsid` in the background and exits at once, so the
# writer is an orphan in a session of its own, in no group the kernel started.
WRITER = (
    "mkdir -p out && (setsid bash -c 'echo $$ > writer.pid; i=0; "
    "while :; do i=$((i+1)); : > out/f$i; sleep 0.05; done' "
    "> /dev/null 2>&1 < /dev/null &)"
)


def _wait(condition, what: str, timeout: float = 90) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _running(pid: int) -> bool:
    stat = process_stat(pid)
    return stat is not None and stat[0] != "Z"


def _writer_started(workspace: Path) -> int:
    pid_file = workspace / "writer.pid"
    _wait(
        lambda: (
            pid_file.exists()
            and pid_file.read_text().strip().isdigit()
            and len(list((workspace / "out").iterdir())) >= 3
        ),
        "the writer never started",
    )
    return int(pid_file.read_text())


def _kill_survivor(pid: int | None) -> None:
    if pid is not None and _running(pid):
        os.kill(pid, signal.SIGKILL)


def _assert_dies_with_the_kernel(k: Kernel, workspace: Path, writer: int) -> None:
    assert _running(writer)
    k.kill9()
    _wait(lambda: not _running(writer), "the setsid writer outlived its kernel (kill -9)")
    written = len(list((workspace / "out").iterdir()))
    k.start_again()
    r = k.run("print('back')")
    match = re.search(r"the previous kernel \(pid \d+\) died with (\d+) process", r.stderr)
    assert match and int(match.group(1)) >= 1, r.stderr
    assert len(list((workspace / "out").iterdir())) == written  # nothing written since
    assert "died with" not in k.run("print('again')").stderr  # said once


def test_a_setsid_double_fork_from_a_bash_call_dies_with_the_kernel(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(tool_reply("b1", "bash", {"command": WRITER}), text_reply("Started."))
    k = Kernel(workspace, agent_env)
    writer = None
    try:
        r = k.run("%%logician\nStart the writer.")
        assert "Started." in r.text, r.text
        writer = _writer_started(workspace)
        _assert_dies_with_the_kernel(k, workspace, writer)
    finally:
        _kill_survivor(writer)
        k.shutdown()


def test_a_setsid_double_fork_from_a_cell_subprocess_dies_with_the_kernel(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    writer = None
    try:
        r = k.run(f"import subprocess\nsubprocess.run(['bash', '-c', {WRITER!r}], check=True)")
        assert r.status == "ok", r.text
        writer = _writer_started(workspace)
        _assert_dies_with_the_kernel(k, workspace, writer)
    finally:
        _kill_survivor(writer)
        k.shutdown()


def test_a_writer_that_also_scrubs_its_environment_is_held_by_the_subreaper_kernel(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    """`env -i` drops the mark the guard also looks for: what catches this writer is that the
    kernel is a subreaper (the orphan's parent is the kernel, not init) and the guard's look
    at the kernel's tree."""
    scrubbed = WRITER.replace("(setsid bash", "(env -i PATH=/usr/bin:/bin setsid bash")
    k = Kernel(workspace, kernel_env)
    writer = None
    try:
        r = k.run(f"import subprocess\nsubprocess.run(['bash', '-c', {scrubbed!r}], check=True)")
        assert r.status == "ok", r.text
        writer = _writer_started(workspace)
        kernel = k.km.provisioner.process.pid  # type: ignore[union-attr]
        _wait(
            lambda: (process_stat(writer) or ("", 0))[1] == kernel,
            "the orphaned writer was not reparented to the kernel (no subreaper)",
        )
        # The guard looks every 0.25 s; 40 files is 2 s of writing, many looks even under load.
        _wait(lambda: len(list((workspace / "out").iterdir())) >= 40, "the writer stalled")
        _assert_dies_with_the_kernel(k, workspace, writer)
    finally:
        _kill_survivor(writer)
        k.shutdown()


def test_an_orderly_shutdown_kills_the_writer_and_the_next_start_says_nothing(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    writer = None
    try:
        k.run(f"import subprocess\nsubprocess.run(['bash', '-c', {WRITER!r}], check=True)")
        writer = _writer_started(workspace)
        k.km.shutdown_kernel(now=False)  # a shutdown request: the kernel exits by itself
        _wait(lambda: not _running(writer), "the writer outlived an orderly shutdown")
        k.kc.stop_channels()
        k.start_again()
        assert "died with" not in k.run("print('back')").stderr
    finally:
        _kill_survivor(writer)
        k.shutdown()
