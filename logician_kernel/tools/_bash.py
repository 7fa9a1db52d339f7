"""`bash`: one shell command in its own process group, with a timeout and bounded output.

`external`: its effects are unknown, so a call interrupted by a crash is quarantined, never
re-run - unless its processes' writes were recorded exactly while it ran (`ctx.watch_call`,
`frames/call_watch.py`): then it is offered for `rewind --call` after the crash. Whatever ends the call early (timeout, cancellation, background processes holding
the output open) ends the whole process group: SIGTERM, then SIGKILL after a short grace.
Output is read as it arrives and only its head and tail are kept, so a flood costs bounded
memory. The group dies with the kernel, even on kill -9 (see `_process_guard`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, ClassVar

from . import _process_guard as process_guard
from ._base import Recovery, Tool, ToolContext, ToolError, ToolResult, first_line
from ._output import HeadTail
from ._paths import base_dir

_READ_CHUNK = 64 * 1024
_POLL_SECONDS = 0.1
_KILL_GRACE_SECONDS = 1.0
# How long output may stay open after the shell exited before we call it held open.
_HELD_OPEN_GRACE_SECONDS = 1.0


class BashTool(Tool):
    name: ClassVar[str] = "bash"
    description: ClassVar[str] = (
        "Run a bash command in the workspace directory and return its combined stdout and "
        "stderr and exit code. stdin is closed, so nothing may prompt. Long output keeps "
        "its head and tail. The command is killed, with everything it started, when it "
        "times out or the run is interrupted; background processes must redirect their "
        "output (`cmd > log 2>&1 &`) to outlive the call."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command line to run."},
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "external"
    read_only: ClassVar[bool] = False

    def _describe(self, arguments: dict[str, Any]) -> str:
        command = arguments.get("command")
        return first_line(command) if isinstance(command, str) else "bash"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        if not command.strip():
            raise ToolError("bash: the command is empty")
        timeout = ctx.bash_timeout_seconds
        watching = ctx.watch_call and ctx.call_id and ctx.watch_call(ctx.call_id)
        try:
            with watching or nullcontext():
                run = await _run(
                    command, base_dir(ctx), timeout, ctx.max_output_bytes, guard_in=ctx.workspace
                )
        except OSError as exc:  # bash missing, workspace gone, out of processes
            raise ToolError(f"bash: could not start the command: {exc}") from None
        output = run.output.render() if run.output.total_bytes else "(no output)"
        lines = run.output.total_lines
        size = f"{lines} line{'s' if lines != 1 else ''}"
        if run.timed_out:
            status = f"timed out after {timeout:g} s; the command and its processes were killed"
            display = f"timed out after {timeout:g} s, {size}"
        else:
            status = _exit_text(run.returncode)
            display = f"{_exit_text(run.returncode, short=True)}, {size}"
        if run.held_open:
            status += (
                "; background processes kept the output open after the shell exited and were "
                "stopped (redirect their output, e.g. `cmd > log 2>&1 &`, to keep them running)"
            )
        if run.pipe_left_open:
            status += "; a process outside the command's group still holds its output"
        return ToolResult(
            content=f"{output.rstrip(chr(10))}\n[{status}]",
            is_error=run.timed_out or run.returncode != 0,
            display=display,
        )


def _exit_text(returncode: int | None, *, short: bool = False) -> str:
    if returncode is None:
        return "exit status unknown"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exit {returncode}" if short else f"exit code {returncode}"


class _Run:
    def __init__(self, limit: int) -> None:
        self.output = HeadTail(limit)
        self.returncode: int | None = None
        self.timed_out = False
        self.held_open = False
        self.pipe_left_open = False


async def _run(
    command: str, cwd: Path, timeout: float, limit: int, *, guard_in: Path | None = None
) -> _Run:
    """Run one command; with `guard_in` (the workspace), its group dies with the kernel."""
    run = _Run(limit)
    proc = await start_group(
        "bash",
        "-c",
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert proc.stdout is not None
    if guard_in is not None:
        process_guard.watch(proc.pid, guard_in, tool="bash", describe=first_line(command))
    try:
        return await _supervise(proc, run, timeout)
    finally:
        if guard_in is not None:
            process_guard.release(proc.pid, guard_in)


async def start_group(program: str, *args: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` in a process group of its own (one signal reaches all
    it starts), whose whole group dies if we are cancelled while it starts.

    asyncio forks first and connects the pipes after; a cancellation in between makes it kill
    the shell alone. On a loaded machine the shell has long run by then and started what it
    was told to (`sleep 300 &`), which would outlive the call as the orphan of a dead shell:
    the start is shielded, and a cancellation ends the group once it is known."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(program, *args, start_new_session=True, **kwargs)
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        while not starting.done():  # connecting the pipes: moments; a second cancel waits too
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({starting})
        if starting.cancelled() or starting.exception() is not None:
            raise  # never started (OSError): nothing to end
        proc = starting.result()
        await _terminate_group(proc.pid)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), _KILL_GRACE_SECONDS)  # reap the shell
        raise


async def _supervise(proc: asyncio.subprocess.Process, run: _Run, timeout: float) -> _Run:
    assert proc.stdout is not None
    reader = asyncio.ensure_future(_pump(proc.stdout, run.output))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        # `proc.wait()` also waits for the pipe to close, so the shell's own exit is
        # noticed through `returncode`, set as soon as the child is reaped.
        exited_at: float | None = None
        while not reader.done():
            now = loop.time()
            if now >= deadline:
                run.timed_out = True
                break
            if proc.returncode is not None:
                exited_at = now if exited_at is None else exited_at
                if now - exited_at >= _HELD_OPEN_GRACE_SECONDS:
                    run.held_open = True
                    break
            await asyncio.wait({reader}, timeout=min(deadline - now, _POLL_SECONDS))
        if reader.done():
            try:
                # A little slack: output that ended right at the deadline is not a timeout.
                await asyncio.wait_for(proc.wait(), max(deadline - loop.time(), _POLL_SECONDS))
            except asyncio.TimeoutError:
                run.timed_out = True  # the shell closed its output but kept running
        if run.timed_out or run.held_open:
            await _terminate_group(proc.pid)
            await _settle(proc, reader, run)
    except BaseException:
        # Cancelled (an interrupt) or broken: the process group must not outlive the call.
        # The reader keeps draining meanwhile, so a full pipe cannot hide the end of output.
        await _terminate_group(proc.pid)
        await _settle(proc, reader, run)
        raise
    if reader.done() and not reader.cancelled():
        reader.result()  # a failure while reading the output surfaces here
    run.returncode = proc.returncode
    return run


async def _pump(stream: asyncio.StreamReader, output: HeadTail) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        output.feed(chunk)


async def _settle(
    proc: asyncio.subprocess.Process, reader: asyncio.Future[None], run: _Run
) -> None:
    """After killing: drain the pipe and reap the shell, but never wait without bound."""
    try:
        await asyncio.wait({reader}, timeout=_KILL_GRACE_SECONDS)
        if not reader.done():
            run.pipe_left_open = True  # a process that left the group (setsid) holds it
            reader.cancel()
            return
        await asyncio.wait_for(proc.wait(), _KILL_GRACE_SECONDS)
    except asyncio.TimeoutError:
        pass


async def _terminate_group(pgid: int) -> None:
    """SIGTERM the group, SIGKILL whatever is left after the grace (at once if we are
    interrupted while waiting)."""
    _signal_group(pgid, signal.SIGTERM)
    try:
        deadline = time.monotonic() + _KILL_GRACE_SECONDS
        while process_guard.group_alive(pgid) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        if process_guard.group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
