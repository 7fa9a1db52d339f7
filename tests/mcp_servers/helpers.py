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

SERVERS = Path(__file__).with_name("servers.py")


def stdio_server(mode: str = "stdio", **extra: object) -> dict[str, object]:
    """An `[mcp.servers.NAME]` table for a stdio mode of `servers.py`."""
    return {"command": sys.executable, "args": [str(SERVERS), mode], **extra}


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


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes, but it must have been reaped: fail on it too
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "X"


def server_pids(pid_dir: Path) -> list[int]:
    return [int(p.read_text()) for p in pid_dir.iterdir()] if pid_dir.exists() else []
