"""`bash`: the subprocess gates (timeout, cancellation, output bound) plus exit codes.

Each scenario starts a background grandchild and checks through its pid that the whole
process group is gone, not just the shell. Orphans may stay zombies where nothing reaps
them (PID 1 in a container), so a zombie counts as gone.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from logician_kernel.tools import ToolContext, default_tools
from logician_kernel.tools._output import HeadTail

BASH = default_tools()["bash"]

NOTE = 'note() { echo "$1 $(cut -d" " -f22 "/proc/$1/stat")" > "$2"; }; '
"""A shell function the commands begin with: `note PID FILE` writes the pid and its start time
(/proc/PID/stat field 22) while the process surely runs, so a later process that reuses the
pid (three suites side by side wrap pid_max in minutes) is never taken for it."""


def _alive(pid: int, program: str, born: str | None = None) -> bool:
    """Whether `program` still runs as `pid`: a zombie is gone, and so is a process that only
    reuses the pid (the suite starts thousands of processes; pid_max may be 32768, and two
    suites side by side wrap it in minutes): with `born` (recorded by `NOTE` while the process
    surely ran), another start time is another process, even one running `program` too."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        fields = _stat(pid)
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc: trust kill(0)
    if fields[0] == "Z" or (born is not None and fields[19] != born):
        return False
    return os.path.basename(argv[0]).decode(errors="replace") == program


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name: [0] is field 3 (the state)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _gone_soon(pid: int, program: str, within: float = 60.0, born: str | None = None) -> bool:
    """Waits for the condition (the process is gone), bounded well below the sleeps the
    commands run, so a slow machine cannot pass a process that merely finished on its own."""
    deadline = time.monotonic() + within
    while _alive(pid, program, born):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


async def _started(pid_file: Path) -> None:
    """Until the command wrote `pid_file` whole: a condition, never a fixed time (a loaded
    machine starts `bash` late); the bound only turns a hang into a failure."""
    deadline = time.monotonic() + 120
    while not pid_file.is_file() or not pid_file.read_text().endswith("\n"):
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0.02)


def _pid(path: Path) -> int:
    return int(path.read_text().split()[0])


def _gone(path: Path, program: str) -> bool:
    """`_gone_soon` for the process `note` recorded in `path`: its pid and its start time."""
    pid, *born = path.read_text().split()
    return _gone_soon(int(pid), program, born=born[0] if born else None)


def _context(ws: Path, **overrides) -> ToolContext:
    return ToolContext(workspace=ws, capture=lambda p: None, **overrides)


def test_output_and_exit_code(call, ws: Path):
    result = call("bash", command="echo hello; echo oops >&2; pwd")
    assert not result.is_error
    assert result.content == f"hello\noops\n{ws.resolve()}\n[exit code 0]"
    assert result.display == "exit 0, 3 lines"


def test_nonzero_exit_is_reported_as_an_error(call):
    result = call("bash", command="echo failing; exit 3")
    assert result.is_error
    assert result.content == "failing\n[exit code 3]"
    assert result.display == "exit 3, 1 line"


def test_no_output_closed_stdin_and_signals(call):
    assert call("bash", command="true").content == "(no output)\n[exit code 0]"
    assert call("bash", command="cat").content == "(no output)\n[exit code 0]"  # never waits
    killed = call("bash", command="kill -9 $$")
    assert killed.is_error and killed.content.endswith("[killed by SIGKILL]")
    assert call("bash", command="  ").content == "bash: the command is empty"


def test_timeout_kills_the_whole_group(ws: Path):
    ctx = _context(ws, bash_timeout_seconds=0.5)
    command = NOTE + "echo started; sleep 300 & note $! bg.pid; sleep 300"
    start = time.monotonic()
    result = asyncio.run(BASH.run({"command": command}, ctx))
    elapsed = time.monotonic() - start
    assert elapsed < 60.0, elapsed  # long before the 300 s sleep would end
    assert result.is_error
    assert result.content.startswith("started\n[timed out after 0.5 s;")
    assert result.display == "timed out after 0.5 s, 1 line"
    assert _gone(ws / "bg.pid", "sleep")


def test_cancellation_kills_the_whole_group_promptly(ws: Path):
    ctx = _context(ws)
    command = NOTE + "note $$ sh.pid; sleep 300 & note $! bg.pid; wait"

    async def scenario() -> float:
        task = asyncio.ensure_future(BASH.run({"command": command}, ctx))
        await _started(ws / "bg.pid")
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - start

    # the cancel returns long before the 300 s sleep would have ended
    assert asyncio.run(scenario()) < 60.0
    assert _gone(ws / "bg.pid", "sleep")
    assert _gone(ws / "sh.pid", "bash")


def test_a_cancel_while_the_shell_starts_still_ends_its_group(ws: Path, monkeypatch):
    """asyncio forks the shell before it connects the pipes; on a loaded machine the shell has
    long run by then. A cancel in between (an interrupt just as the call starts) must end what
    the shell started too, not only the shell: here the pipes connect only after the cancel."""
    from asyncio import base_subprocess

    connect = base_subprocess.BaseSubprocessTransport._connect_pipes
    gate: list[asyncio.Event] = []

    async def connect_after_the_cancel(self, waiter):  # type: ignore[no-untyped-def]
        await gate[0].wait()
        await connect(self, waiter)

    monkeypatch.setattr(
        base_subprocess.BaseSubprocessTransport, "_connect_pipes", connect_after_the_cancel
    )
    ctx = _context(ws)

    async def scenario() -> None:
        gate.append(asyncio.Event())
        task = asyncio.ensure_future(
            BASH.run({"command": NOTE + "sleep 300 & note $! bg.pid; wait"}, ctx)
        )
        await _started(ws / "bg.pid")  # the shell runs and started its child
        task.cancel()
        await asyncio.sleep(0)  # the cancel lands while the pipes wait to connect
        gate[0].set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert _gone(ws / "bg.pid", "sleep")


def test_sigterm_ignored_means_sigkill_after_the_grace(ws: Path):
    ctx = _context(ws, bash_timeout_seconds=0.3)
    command = (
        NOTE + "(trap '' TERM; note $BASHPID stubborn.pid; while :; do sleep 0.05; done) & wait"
    )
    start = time.monotonic()
    result = asyncio.run(BASH.run({"command": command}, ctx))
    assert time.monotonic() - start < 60.0  # the loop never ends on its own
    assert "timed out after 0.3 s" in result.content
    assert _gone(ws / "stubborn.pid", "bash")


def test_output_flood_is_bounded_keeping_head_and_tail(ws: Path):
    ctx = _context(ws, max_output_bytes=10_000)
    command = "echo START; yes | head -c 5000000; echo; echo END"
    start = time.monotonic()
    result = asyncio.run(BASH.run({"command": command}, ctx))
    assert time.monotonic() - start < 60  # bounded: `head` ends the flood, nothing hangs
    assert not result.is_error
    assert len(result.content.encode()) <= 10_000
    assert result.content.startswith("START\ny\ny\n")
    assert result.content.endswith("y\n\nEND\n[exit code 0]")
    marker = next(line for line in result.content.splitlines() if "output truncated" in line)
    assert " bytes (" in marker and " lines) cut from the middle" in marker
    assert "of 5,000,011 bytes" in marker
    assert result.display == "exit 0, 2500003 lines"


def test_head_tail_memory_stays_bounded():
    buffer = HeadTail(1000)
    for _ in range(10_000):
        buffer.feed(b"z" * 999 + b"\n")
        assert len(buffer._head) + len(buffer._tail) <= 2 * 1000
    assert buffer.total_bytes == 10_000_000 and buffer.total_lines == 10_000


def test_background_process_holding_the_output_is_stopped(ws: Path):
    ctx = _context(ws, bash_timeout_seconds=20)
    start = time.monotonic()
    result = asyncio.run(BASH.run({"command": NOTE + "sleep 300 & note $! bg.pid; echo done"}, ctx))
    assert time.monotonic() - start < 60.0  # not the 300 s of the background sleep
    assert result.content.startswith("done\n[exit code 0; background processes kept the output")
    assert _gone(ws / "bg.pid", "sleep")


def test_background_process_with_redirected_output_outlives_the_call(ws: Path):
    ctx = _context(ws)
    result = asyncio.run(
        BASH.run({"command": "sleep 300 > /dev/null 2>&1 & echo $! > bg.pid; echo ok"}, ctx)
    )
    pid = _pid(ws / "bg.pid")
    try:
        assert result.content == "ok\n[exit code 0]"
        # Until its exec the child is still `bash` (a loaded machine may not have run it yet);
        # a process the call's end killed never becomes `sleep`.
        deadline = time.monotonic() + 60
        while not _alive(pid, "sleep") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _alive(pid, "sleep")
    finally:
        os.kill(pid, 9)  # ours: started by this test


def test_cancellation_during_an_output_flood(ws: Path):
    ctx = _context(ws, max_output_bytes=5_000)

    async def scenario() -> float:
        task = asyncio.ensure_future(
            BASH.run({"command": NOTE + "yes & note $! bg.pid; yes x"}, ctx)
        )
        await _started(ws / "bg.pid")  # the flood runs (a fixed sleep lost the race under load)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - start

    # `yes` never ends: a return at all means the flood was stopped
    assert asyncio.run(scenario()) < 60.0
    assert _gone(ws / "bg.pid", "yes")
