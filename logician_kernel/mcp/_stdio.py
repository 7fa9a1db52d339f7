"""The stdio transport for MCP servers: our own spawn, so the process is guarded.

The SDK's `stdio_client` starts the server but does not expose its process, and its stderr
must be a real file (ipykernel's `sys.stderr` has no file descriptor). This transport starts
the server in a session of its own, registers its process group with the kernel's process
guard (`tools/_process_guard.py`: it dies with the kernel, even on kill -9, and a restarted
kernel reaps it), sends its stderr to `.logician/logs/mcp-NAME.log`, and bridges its pipes to
the SDK's message streams. On exit it closes stdin, waits briefly, then kills the group and
waits for its exit to be reaped, even when the connection's task is cancelled meanwhile.

Must never: leave the process or its group running after the context exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import mcp_types
from anyio.streams.text import TextReceiveStream
from mcp.shared.message import SessionMessage

from ..durable import open_private, private_dir
from ..durable.state_dir import state_path
from ..tools import _process_guard
from ..tools._process_guard import group_alive
from ..types.process_marks import TOOL_SERVER_MARK

_GRACE_SECONDS = 1.0
_REAP_SECONDS = 10.0
"""How long a stop waits for a killed server's exit to be reaped and its pipes closed."""
_EXIT_SECONDS = 10.0
"""How long the end of a server's stdout waits for its exit status (reaped a moment later;
on a loaded machine over a second later)."""


@dataclass
class StdioProcess:
    """What the connection may know of a running stdio server."""

    pid: int
    """The server's pid, also its process group id."""
    exited: anyio.Event = field(default_factory=anyio.Event)
    """Set when the server's stdout reached its end (it exited or closed it)."""
    returncode: int | None = None
    """Its exit status, once it exited by itself (not when we stopped it)."""
    log: Path | None = None
    """Where its stderr goes."""
    log_start: int = 0
    """Size of the log when this process started: what it wrote comes after."""

    def last_stderr_line(self, limit: int = 300) -> str | None:
        """The last non-empty line this process wrote to stderr, bounded, or None."""
        if self.log is None:
            return None
        try:
            with open(self.log, "rb") as file:
                size = file.seek(0, os.SEEK_END)
                file.seek(max(self.log_start, size - 4096))
                tail = file.read().decode("utf-8", errors="replace")
        except OSError:  # the log is a convenience: its absence must not hide the failure
            return None
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        return lines[-1][:limit] if lines else None


def log_path(workspace: Path, server: str) -> Path:
    return state_path(workspace) / "logs" / f"mcp-{server}.log"


@contextlib.asynccontextmanager
async def stdio_transport(
    *,
    server: str,
    command: list[str],
    env: Mapping[str, str],
    cwd: Path,
    workspace: Path,
) -> AsyncIterator[tuple[object, object, StdioProcess]]:
    """Start `command`; yield (read stream, write stream, process) for a `ClientSession`."""
    log = log_path(workspace, server)
    private_dir(log.parent)
    fd = open_private(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    log_start = os.fstat(fd).st_size
    try:
        process = await anyio.open_process(
            command,
            env={**env, TOOL_SERVER_MARK: server},  # its writes belong to its calls
            cwd=str(cwd),
            stderr=fd,
            start_new_session=True,
        )
    finally:
        os.close(fd)
    pgid = process.pid
    _process_guard.watch(pgid, workspace, tool="mcp", describe=f"MCP server {server}")
    info = StdioProcess(pid=pgid, log=log, log_start=log_start)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        assert process.stdout is not None
        buffer = ""
        try:
            async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                lines = (buffer + chunk).split("\n")
                buffer = lines.pop()
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        message = mcp_types.jsonrpc_message_adapter.validate_json(
                            line, by_name=False
                        )
                    except ValueError as exc:
                        await read_writer.send(exc)
                        continue
                    await read_writer.send(SessionMessage(message))
            # The end of stdout comes a moment before the exit status (at load, seconds):
            # wait for it before the session sees the end, so its failure can say how the
            # server ended. Not when we stop it: then this task is cancelled.
            with anyio.move_on_after(_EXIT_SECONDS):
                while process.returncode is None:
                    await anyio.sleep(0.02)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            info.returncode = process.returncode
            info.exited.set()
            read_writer.close()

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_stream, write_stream, info
            finally:
                tg.cancel_scope.cancel()
    finally:
        try:
            with anyio.CancelScope(shield=True):
                await _stop_to_the_end(process, pgid)
        finally:
            _process_guard.release(pgid, workspace)


async def _stop_to_the_end(process: anyio.abc.Process, pgid: int) -> None:
    """`_stop`, finished even when this task is cancelled meanwhile: anyio's shield does not
    hold off asyncio's own `Task.cancel` (the connection's stop gives up waiting for a slow
    session and cancels its task; at load the server's exit outlasts the grace), and a stop
    cut short leaves the server running and its transport open. The cancellation is raised
    once the server is stopped (`_stop` is bounded by its own timeouts)."""
    stopping = asyncio.ensure_future(_stop(process, pgid))
    cancelled: asyncio.CancelledError | None = None
    while not stopping.done():
        try:
            await asyncio.shield(stopping)
        except asyncio.CancelledError as exc:
            if stopping.cancelled():  # the stop itself was cancelled: the loop is closing
                raise
            cancelled = exc
    if cancelled is not None:
        raise cancelled


async def _stop(process: anyio.abc.Process, pgid: int) -> None:
    with contextlib.suppress(Exception):
        if process.stdin is not None:
            await process.stdin.aclose()
    with anyio.move_on_after(_GRACE_SECONDS):
        await process.wait()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.returncode is not None and not group_alive(pgid):
            break
        with contextlib.suppress(OSError):
            os.killpg(pgid, sig)
        with anyio.move_on_after(_GRACE_SECONDS):
            await process.wait()
    # Its pipes closed and its exit seen (killed above, it goes at once; at load the exit can
    # take longer than the grace to be reaped): else the loop's transport outlives the
    # connection, open, and is only found by the collector.
    with contextlib.suppress(Exception), anyio.move_on_after(_REAP_SECONDS):
        await process.aclose()
