"""One hook command: `bash -c COMMAND` fed a JSON event on stdin, bounded in time and output.

Like `bash` calls, the command runs in its own process group in the workspace, registered
with the per-kernel process guard (`_process_guard`) so it never outlives the kernel; a
timeout or a cancellation ends the whole group (SIGTERM, then SIGKILL). stdout and stderr are
kept apart (a `pre_tool` hook's stderr is its reason) and each bounded, head and tail.

Must never: raise for anything the command does (a missing program, a crash, a flood, a
hang) - those are results; only a cancellation propagates, after the group is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

from . import _process_guard as process_guard
from ._base import first_line
from ._bash import _KILL_GRACE_SECONDS, _terminate_group, start_group
from ._output import HeadTail

_READ_CHUNK = 64 * 1024

MISSING_PROGRAM = 127
"""bash's exit status when the command's program is not found."""


@dataclass(frozen=True)
class HookProcess:
    """What one hook command did."""

    returncode: int | None
    """Its exit status (negative: killed by that signal); None when it never started or was
    killed at the timeout."""
    stdout: str
    """Its standard output, bounded (head and tail)."""
    stderr: str
    """Its standard error, bounded (head and tail)."""
    timed_out: bool
    """It ran past the timeout and its process group was killed."""
    seconds: float
    """How long it ran."""
    start_error: str | None = None
    """Why it could not be started at all (bash missing, the workspace gone)."""


async def run_hook_command(
    command: str, event: bytes, *, cwd: Path, timeout: float, limit: int, guard_in: Path
) -> HookProcess:
    """Run `command` with `event` on stdin; never raises except on cancellation."""
    started = time.monotonic()
    try:
        proc = await start_group(  # its own group: a timeout reaches all it started
            "bash",
            "-c",
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        return HookProcess(None, "", "", False, 0.0, start_error=str(exc))
    process_guard.watch(proc.pid, guard_in, tool="hook", describe=first_line(command))
    out, err = HeadTail(limit), HeadTail(limit)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    readers: list[asyncio.Future[None]] = [
        asyncio.ensure_future(_pump(proc.stdout, out)),
        asyncio.ensure_future(_pump(proc.stderr, err)),
        asyncio.ensure_future(_feed(proc.stdin, event)),
    ]
    timed_out = False
    try:
        done = asyncio.ensure_future(_finish(proc, readers))
        try:
            await asyncio.wait_for(asyncio.shield(done), timeout)
        except asyncio.TimeoutError:
            timed_out = True
            await _terminate_group(proc.pid)
            await _settle(proc, readers)
            done.cancel()
    except BaseException:
        # Cancelled (an interrupt): the group must not outlive the run.
        await _terminate_group(proc.pid)
        await _settle(proc, readers)
        raise
    finally:
        process_guard.release(proc.pid, guard_in)
    return HookProcess(
        None if timed_out else proc.returncode,
        out.render(),
        err.render(),
        timed_out,
        time.monotonic() - started,
    )


async def _finish(proc: asyncio.subprocess.Process, readers: list[asyncio.Future[None]]) -> None:
    await asyncio.gather(*readers)
    await proc.wait()


async def _pump(stream: asyncio.StreamReader, output: HeadTail) -> None:
    while chunk := await stream.read(_READ_CHUNK):
        output.feed(chunk)


async def _feed(stdin: asyncio.StreamWriter, event: bytes) -> None:
    # A hook that never reads its stdin is fine: a closed pipe is not its failure.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(event)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()
        await stdin.wait_closed()


async def _settle(proc: asyncio.subprocess.Process, readers: list[asyncio.Future[None]]) -> None:
    """After killing: let the pipes drain and reap the shell, never waiting without bound."""
    await asyncio.wait(readers, timeout=_KILL_GRACE_SECONDS)
    for reader in readers:
        reader.cancel()
    await asyncio.gather(*readers, return_exceptions=True)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), _KILL_GRACE_SECONDS)
