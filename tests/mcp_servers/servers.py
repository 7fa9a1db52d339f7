"""Real MCP servers for the tests, written with the SDK's `MCPServer` (FastMCP in mcp 1.x).

`python servers.py MODE [PORT]`:

- `stdio`: tools `search` (readOnlyHint), `write_note`, `slow` (sleeps, for mid-call kills
  and timeouts), `big` (a large result, for the output bound), over stdio;
- `http PORT`: the same tools over streamable HTTP on 127.0.0.1:PORT (`/mcp`); it checks the
  `Authorization` header against `EXPECT_TOKEN` when that is set, and with `MCP_ECHO_TOKEN`
  set offers `whoami`, which echoes that token back;
- `hang`: a stdio server whose start-up never finishes, so it never answers `initialize`;
- `crash`: lists its tools, then exits (a crash after listing);
- `many`: lists `dup` twice and 130 tools in all (for duplicate names and the per-server cap);
- `stubborn`: the stdio tools, but it ignores SIGTERM and lingers 120 s after its stdin ends
  (only SIGKILL stops it in time: a server as slow to exit as any at load average 30).

Every mode writes its pid to `$MCP_PID_DIR/<mode>-<pid>` when that variable is set, so tests
can check that no server process outlives the kernel.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations


def _note_pid(mode: str) -> None:
    directory = os.environ.get("MCP_PID_DIR")
    if directory:
        pid = os.getpid()
        try:  # the start time tells this process from a later one that reuses its pid
            born = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            born = ""
        partial = Path(directory, f".{mode}-{pid}.partial")
        partial.write_text(f"{pid} {born}".strip())
        partial.rename(Path(directory, f"{mode}-{pid}"))  # a reader never sees half of it


def _tools(server: MCPServer) -> None:
    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def search(query: str) -> str:
        """Search the notes for a word."""
        print(f"search called with {query!r}", file=sys.stderr, flush=True)
        return f"found 2 notes about {query}: alpha.md, beta.md"

    @server.tool()
    def write_note(name: str, text: str) -> str:
        """Write a note (a side effect outside the workspace's files, or a file in
        `$MCP_NOTES_DIR` when that is set)."""
        folder = os.environ.get("MCP_NOTES_DIR")
        if folder:
            Path(folder, name).write_text(text)
        return f"wrote note {name} ({len(text)} characters)"

    @server.tool()
    def slow(seconds: float) -> str:
        """Sleep, then answer."""
        marker = os.environ.get("MCP_SLOW_MARKER")
        if marker:
            Path(marker).write_text("started")
        time.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def big(size: int) -> str:
        """Return `size` characters."""
        return "x" * size


class _CrashAfterListing(MCPServer):
    async def list_tools(self) -> Any:
        tools = await super().list_tools()
        threading.Timer(0.3, os._exit, (3,)).start()
        return tools


class _ManyTools(MCPServer):
    async def list_tools(self) -> Any:
        tools = list(await super().list_tools())  # the 4 of `_tools`
        search = tools[0]
        extra = [
            search.model_copy(update={"name": "dup", "description": "first dup"}),
            search.model_copy(update={"name": "dup", "description": "second dup"}),
        ]
        extra += [search.model_copy(update={"name": f"t{i:03d}"}) for i in range(130 - 6)]
        return tools + extra


@contextlib.asynccontextmanager
async def _never_ready(server: MCPServer) -> AsyncIterator[None]:
    import anyio

    await anyio.sleep_forever()
    yield None


def _serve_http(server: MCPServer, port: int, token: str | None) -> None:
    """Streamable HTTP on 127.0.0.1:port; with `token`, a request without the header
    `Authorization: <token>` gets 401 (so a test sees the header arrive)."""
    import uvicorn

    app = server.streamable_http_app()

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if token and scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != token:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else "stdio"
    _note_pid(mode)
    if mode == "hang":
        server: MCPServer = MCPServer("hang", lifespan=_never_ready)
        _tools(server)
        server.run("stdio")
    elif mode == "crash":
        server = _CrashAfterListing("crash")
        _tools(server)
        server.run("stdio")
    elif mode == "many":
        server = _ManyTools("many")
        _tools(server)
        server.run("stdio")
    elif mode == "http":
        server = MCPServer("notes-http")
        _tools(server)
        if os.environ.get("MCP_ECHO_TOKEN"):

            @server.tool()
            def whoami() -> str:
                """Say which token the requests carry (a server that echoes its credential)."""
                token = os.environ.get("EXPECT_TOKEN", "").split()[-1]
                return f"you are authenticated with token {token}"

        _serve_http(server, int(argv[1]), os.environ.get("EXPECT_TOKEN"))
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        server = MCPServer("stubborn")
        _tools(server)
        server.run("stdio")
        time.sleep(120)
    else:
        server = MCPServer("notes")
        _tools(server)
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
