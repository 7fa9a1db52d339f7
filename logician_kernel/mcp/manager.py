"""`McpManager`: every configured MCP server, connected in the background on one loop.

The manager owns a daemon thread running an event loop of its own (never the kernel's, never
a run's: a run's loop lives only as long as the run, and a cell must not wait for
discovery). `apply` starts each enabled server concurrently and returns at once; a change of
a server's configuration restarts it, a removed server stops. `tools()` is what the next
model request offers: the ready servers' tools, and the cached tools of servers still
connecting (marked stale). `call` runs on that loop and is awaited from a run's loop, so
cancelling the run's task cancels the call on the server. `close` stops every server (stdio
processes are killed, and guarded against a kernel that dies first, `_stdio.py`).

Must never: block the caller for longer than a stop takes, import Jupyter, or raise from
`apply`, `tools` or `status`.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import dataclasses
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import McpSettings
from .connection import McpCallError, ServerConnection, ServerStatus, configured_secrets
from .names import assign, cut, offered
from .tool import McpTool, make_tool

if TYPE_CHECKING:
    import mcp_types

_STOP_SECONDS = 30.0
"""How long `close` waits for every server's stop: a session's end (`STOP_WAIT_SECONDS`),
then its process's kill and reaping (`_stdio`, up to 13 s on a loaded machine), with room.
Usually it takes a fraction of a second."""
_LEFT_SECONDS = 15.0
"""How long the closing loop lets a stop still killing its server finish before cancelling."""


class McpManager:
    """The MCP servers of one session."""

    def __init__(self, workspace: Path, env: Mapping[str, str]) -> None:
        self.workspace = workspace
        self.env = dict(env)
        self._servers: dict[str, ServerConnection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._max_tools = McpSettings.model_fields["max_tools_per_server"].default

    # -- the loop --------------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=_serve, args=(loop,), name="logician-mcp", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
                atexit.register(self.close)
            return self._loop

    def _submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    # -- configuration -----------------------------------------------------------------------

    def apply(self, settings: McpSettings) -> None:
        """Connect what is configured and enabled, in the background; stop what is not.
        Returns at once: the connections are made on the MCP loop."""
        if self._closed:
            return
        self._max_tools = settings.max_tools_per_server
        wanted = {name: s for name, s in settings.servers.items() if s.enabled}
        if not wanted and not self._servers:
            return
        stopping: list[ServerConnection] = []
        starting: list[ServerConnection] = []
        with self._lock:
            for name in sorted(set(self._servers) | set(wanted)):
                new = wanted.get(name)
                current = self._servers.get(name)
                if current is not None and new is not None and current.settings == new:
                    continue
                if current is not None:
                    stopping.append(self._servers.pop(name))
                if new is not None:
                    connection = ServerConnection(name, new, self.workspace, self.env)
                    self._servers[name] = connection
                    starting.append(connection)
        if starting and not _import_sdk():
            # Without the SDK nothing can connect: each server says so, with the fix, in
            # `%logician mcp` and to the agent, and nothing is started.
            for connection in starting:
                connection.fail(SDK_MISSING)
            starting = []
        if stopping or starting:
            self._submit(self._change(stopping, starting))

    @staticmethod
    async def _change(stopping: list[ServerConnection], starting: list[ServerConnection]) -> None:
        # Stopping runs beside the new connections, so a slow server never delays the others.
        for old in stopping:
            asyncio.get_running_loop().create_task(old.stop())
        for connection in starting:
            connection.start()

    def restart(self, name: str) -> None:
        """Stop and connect `name` again; raises `KeyError` naming the known servers."""
        if name not in self._servers:
            known = ", ".join(sorted(self._servers)) or "none"
            raise KeyError(f"no MCP server named {name!r}; the servers are: {known}")

        connection = self._servers[name]

        async def again() -> None:
            await connection.stop()
            connection.reset()
            connection.start()

        connection.reset()
        self._submit(again())

    # -- what runs see -----------------------------------------------------------------------

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds until no server is connecting; whether none is.
        Only for those who ask (`%logician mcp --wait`): nothing else ever waits."""
        deadline = time.monotonic() + timeout
        while any(s.state == "connecting" for s in self.status()):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def status(self) -> list[ServerStatus]:
        servers = dict(self._servers)  # `apply` may change the dict from another thread
        statuses = []
        for name in sorted(servers):
            status = servers[name].snapshot()
            _listed, notice = self._offered(servers[name])
            statuses.append(dataclasses.replace(status, notice=notice) if notice else status)
        return statuses

    def secrets(self) -> tuple[str, ...]:
        """Every configured server's header and environment secrets (resolved), for the run's
        masking: a tool result, hook output, the ledger and the audit log never show them."""
        servers = dict(self._servers)
        return tuple(
            dict.fromkeys(
                value
                for name in sorted(servers)
                for value in configured_secrets(servers[name].settings, self.env)
            )
        )

    def _offered(self, connection: ServerConnection) -> tuple[list[Any], str | None]:
        """A server's tools that pass its globs, cut to `mcp.max_tools_per_server`."""
        s = connection.settings
        listed = [
            t for t in list(connection.tools) if offered(t.name, s.allowed_tools, s.excluded_tools)
        ]
        return cut(connection.name, listed, self._max_tools)

    def tools(self) -> dict[str, McpTool]:
        """The tools to offer now, by model-facing name (each listed tool under a name of
        its own, duplicates included)."""
        offers: list[tuple[ServerConnection, list[Any]]] = []
        servers = dict(self._servers)
        for name in sorted(servers):
            connection = servers[name]
            if connection.state not in ("ready", "connecting"):
                continue
            listed, _notice = self._offered(connection)
            offers.append((connection, listed))
        names = assign((c.name, [t.name for t in listed]) for c, listed in offers)
        tools: dict[str, McpTool] = {}
        for connection, listed in offers:
            for name, remote in zip(names[connection.name], listed, strict=True):
                tools[name] = make_tool(
                    name, connection.name, remote, self.call, stale=connection.stale
                )
        return tools

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any]
    ) -> mcp_types.CallToolResult:
        """Call a tool from any event loop; cancelling the awaiting task cancels the call."""
        connection = self._servers.get(server)
        if connection is None or self._loop is None:
            raise McpCallError(f"the MCP server {server!r} is not configured any more")
        future = asyncio.run_coroutine_threadsafe(connection.call(tool, arguments), self._loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    # -- the end ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every server and the loop. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop = self._loop
        if loop is None:
            return

        async def stop_all() -> None:
            await asyncio.gather(
                *(c.stop() for c in self._servers.values()), return_exceptions=True
            )

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout=_STOP_SECONDS)
        except Exception:  # servers that do not stop in time are cancelled below
            pass
        # The MCP thread cancels what is left and closes the loop itself (`_serve`): run from
        # here, the loop would meet the caller's own running loop (the kernel's, at shutdown)
        # and raise "Cannot run the event loop while another loop is running".
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=2)
        atexit.unregister(self.close)


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """The MCP thread: run the loop until `close` stops it, then cancel the tasks still
    pending, let them finish their cancellation, and close the loop, in this thread."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        pending = asyncio.all_tasks(loop)
        if pending:  # a stop still killing its server finishes first (each is bounded)
            _done, pending = loop.run_until_complete(asyncio.wait(pending, timeout=_LEFT_SECONDS))
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()


SDK_MISSING = "the MCP SDK is not installed; install it with: pip install 'logician-kernel[mcp]'"
"""Why every configured server failed when the optional `mcp` package is missing."""


def _import_sdk() -> bool:
    """Import the SDK's client in the caller's thread (once, ~0.3 s, only when a server is
    configured), not on the MCP loop: an import there holds the GIL for that long while the
    user's first cell runs (measured: the first cell 5-20x slower; tests/bench/bench_mcp_start.py).
    False when the SDK (the `[mcp]` extra) is not installed."""
    try:
        import mcp.client.session  # noqa: F401
        import mcp.client.stdio  # noqa: F401
        import mcp.client.streamable_http  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "mcp":
            raise  # the SDK is there but broken: let its own error say how
        return False
    from . import _stdio  # noqa: F401

    return True
