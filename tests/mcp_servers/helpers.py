"""Starting the test MCP servers (`servers.py`) and waiting for what they do."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

SERVERS = Path(__file__).with_name("servers.py")


CONNECT_SECONDS = 300
"""How long a test server may take to answer: the default 10 s is a user's machine; beside a
second suite and 8 busy loops (load average 30) a Python server's imports alone take longer."""


def stdio_server(mode: str = "stdio", **extra: object) -> dict[str, object]:
    """An `[mcp.servers.NAME]` table for a stdio mode of `servers.py`."""
    return {
        "command": sys.executable,
        "args": [str(SERVERS), mode],
        "connect_timeout_seconds": CONNECT_SECONDS,
        **extra,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server(env: dict[str, str] | None = None) -> Iterator[str]:
    """`servers.py http` on a free loopback port; yields its URL once it listens."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS), "http", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    try:
        wait_until(lambda: _listening(port), 120, "the HTTP MCP server to listen")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(10)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_until(check: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class ServerProcess(NamedTuple):
    """A test server as its pid file names it: the pid and its start time (clock ticks since
    boot, /proc/PID/stat field 22; empty where there is no /proc)."""

    pid: int
    born: str


def alive(server: ServerProcess) -> bool:
    """Whether that server still runs. A zombie counts as running (whoever started the server
    must also reap it), a later process that reuses the pid does not: the suite starts
    thousands of processes and pid_max may be 32768, so beside a second suite the pid of a
    server that stopped is soon someone else's."""
    try:
        os.kill(server.pid, 0)
    except ProcessLookupError:
        return False
    try:
        fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    if server.born and fields[19] != server.born:
        return False
    return fields[0] != "X"


def server_pids(pid_dir: Path) -> list[ServerProcess]:
    """The servers that wrote their pid file into `pid_dir` (`servers.py`'s MCP_PID_DIR)."""
    if not pid_dir.exists():
        return []
    found = []
    for record in pid_dir.iterdir():
        if record.name.startswith("."):
            continue  # still being written
        pid, _, born = record.read_text().partition(" ")
        found.append(ServerProcess(int(pid), born))
    return found
