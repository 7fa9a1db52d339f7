"""One MCP server's connection, on the MCP loop: connect, list tools, serve calls, stop.

A `ServerConnection` runs one task per connection attempt (`serve`): start the transport
(stdio, `_stdio.py`; or streamable HTTP), `initialize`, `tools/list` - all within
`connect_timeout_seconds` - then hold the session until it is stopped or the server goes
away. Its state (`connecting`, `ready`, `failed`, `stopped`), tool list, last error and time
to connect are read from any thread (`snapshot`). Calls arrive from a run's worker loop
through `McpManager.call`; a call waits for a connecting server only as long as its connect
timeout has left.

Must never: raise out of `serve`, store or log a header or environment value read through
`env:VAR`, or leave a server running after `stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..config import McpServerSettings
from ..durable import is_credential_name, is_maskable_value, redact
from ..types.status import McpState
from . import cache

if TYPE_CHECKING:  # the SDK is imported only when a server is configured
    import mcp_types

logger = logging.getLogger("logician_kernel.mcp")

State = McpState
"""Where a server is (`types.status.McpState`)."""


class McpCallError(Exception):
    """A call that could not reach its server (not ready, gone, timed out)."""


@dataclass(frozen=True)
class RemoteTool:
    """One tool as a server lists it."""

    name: str
    """The server's own name for it."""
    description: str
    """Its description, passed through."""
    input_schema: dict[str, Any]
    """Its JSON schema, passed through."""
    read_only: bool
    """The server's `readOnlyHint` annotation."""

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "read_only": self.read_only,
        }


@dataclass(frozen=True)
class ServerStatus:
    """What `%logician mcp` and the status widget show of one server."""

    name: str
    """The server's configured name."""
    transport: str
    """`stdio` or `http`."""
    state: State
    """`connecting`, `ready`, `failed` or `stopped`."""
    tools: int
    """How many tools it offers the model (cached ones while connecting)."""
    stale: bool
    """The tools come from the cache of an earlier connection, not from the server yet."""
    error: str | None
    """Why it failed (or why its last connection ended)."""
    connect_seconds: float | None
    """How long connecting took (while connecting: how long so far)."""
    notice: str | None = None
    """Something the user should know that is not a failure (tools cut to the limit)."""


def resolve_env_refs(
    values: Mapping[str, str], env: Mapping[str, str], what: str
) -> dict[str, str]:
    """`env:VAR` values read from `env`; raises `McpCallError` naming a missing variable."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if value.startswith("env:"):
            var = value[4:]
            if var not in env:
                raise McpCallError(
                    f"{what} {key!r} names the environment variable {var}, which is not set"
                )
            out[key] = env[var]
        else:
            out[key] = value
    return out


STOP_WAIT_SECONDS = 6.0
"""How long a stop waits for a server's session to end by itself before cancelling it."""

_SCHEME = re.compile(r"(?i)^(?:bearer|basic|token|digest)\s+(\S+)$")
_AUTH_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def configured_secrets(settings: McpServerSettings, env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of a server's configuration that must never be shown: its credential
    headers (`Authorization`, `Cookie`, `X-Api-Key`, ...) and the token after a scheme
    (`Bearer abc` -> `abc` too), credential-named `env` entries, and every value read through
    `env:VAR`, resolved. Values are masked only where long enough and not paths."""
    found: list[str] = []
    for table in (settings.headers, settings.env):
        for key, value in table.items():
            resolved = env.get(value[4:], "") if value.startswith("env:") else value
            header = table is settings.headers and (
                key.lower() in _AUTH_HEADERS or "auth" in key.lower()
            )
            if value.startswith("env:") or header or is_credential_name(key):
                found.append(resolved)
                if match := _SCHEME.match(resolved.strip()):
                    found.append(match.group(1))
    return tuple(v for v in found if v and is_maskable_value(v))


@dataclass
class ServerConnection:
    """One configured server and its current connection."""

    name: str
    settings: McpServerSettings
    workspace: Path
    env: Mapping[str, str]
    state: State = "connecting"
    tools: list[RemoteTool] = field(default_factory=list)
    stale: bool = False
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    connect_seconds: float | None = None
    _session: Any = None
    _ready: asyncio.Event | None = None
    _stop: asyncio.Event | None = None
    _task: asyncio.Task[None] | None = None
    _digest: str = ""

    def __post_init__(self) -> None:
        self._digest = cache.config_hash(self.settings)
        cached = cache.load(self.workspace, self._digest)
        self.tools = [
            RemoteTool(
                str(t["name"]),
                str(t.get("description", "")),
                dict(t.get("input_schema") or {"type": "object"}),
                bool(t.get("read_only")),
            )
            for t in cached
        ]
        self.stale = bool(self.tools)

    # -- on the MCP loop ----------------------------------------------------------------------

    def reset(self) -> None:
        """Mark it connecting (from any thread), before `start` runs on the MCP loop."""
        self.state, self.error, self.connect_seconds = "connecting", None, None
        self.started = time.monotonic()

    def start(self) -> None:
        """Start connecting (on the running MCP loop). `connect_timeout_seconds` counts from
        here: not from `reset` or the connection's creation, before the manager's first import
        of the SDK (`manager._import_sdk`, seconds on a loaded machine) and the loop's turn."""
        self.started = time.monotonic()
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._serve(), name=f"mcp-{self.name}")

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._task), timeout=STOP_WAIT_SECONDS)
            if not self._task.done():
                # A session that does not end in time is cancelled; its server is still
                # killed and reaped before the task ends (`_stdio._stop_to_the_end`).
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task
        self.state = "stopped"
        self._session = None

    async def _serve(self) -> None:
        assert self._stop is not None and self._ready is not None
        gone: Any = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                # The deadline covers only awaits, never the entering of a context: a task
                # group opened inside a cancel scope must not outlive it.
                read, write, gone = await self._open(stack)
                from mcp import ClientSession

                session = await stack.enter_async_context(ClientSession(read, write))
                with anyio.fail_after(self._connect_left()):
                    await session.initialize()
                    listing = await session.list_tools()
                self._session = session
                self.tools = [_remote(tool) for tool in listing.tools]
                self.stale = False
                self.connect_seconds = time.monotonic() - self.started
                self.state = "ready"
                cache.store(self.workspace, self._digest, [t.as_json() for t in self.tools])
                self._ready.set()
                waits = [asyncio.ensure_future(self._stop.wait())]
                if gone is not None:
                    waits.append(asyncio.ensure_future(gone.exited.wait()))
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for w in waits:
                        w.cancel()
                if not self._stop.is_set():
                    self._fail(self._exited(gone) or "the server closed its connection")
        except TimeoutError:  # a server that exited meanwhile says how, not that it was slow
            self._fail(
                self._exited(gone)
                or f"no answer within connect_timeout_seconds="
                f"{self.settings.connect_timeout_seconds:g}"
            )
        except asyncio.CancelledError:
            if self.state == "connecting":
                self._fail("stopped before it was ready")
            raise
        except McpCallError as exc:
            self._fail(self._exited(gone) or str(exc))
        except BaseException as exc:  # an SDK or OS error: the server failed, the kernel goes on
            if isinstance(_leaf(exc), TimeoutError):
                self._fail(
                    self._exited(gone)
                    or f"no answer within connect_timeout_seconds="
                    f"{self.settings.connect_timeout_seconds:g}"
                )
            else:
                # A server that died at start shows as the SDK's "Connection closed": say how
                # it ended, and the last thing it said, instead.
                self._fail(self._exited(gone) or _describe(exc))
        finally:
            self._session = None
            if self._ready is not None:
                self._ready.set()  # wake waiting calls: they see the state

    async def _open(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any, Any]:
        s = self.settings
        if s.command is not None:
            from mcp.client.stdio import get_default_environment

            from ._stdio import stdio_transport

            env = get_default_environment() | resolve_env_refs(s.env, self.env, "env")
            program = shutil.which(s.command, path=env.get("PATH")) or s.command
            cwd = self.workspace if s.cwd is None else (self.workspace / s.cwd.expanduser())
            read, write, process = await stack.enter_async_context(
                stdio_transport(
                    server=self.name,
                    command=[program, *s.args],
                    env=env,
                    cwd=cwd,
                    workspace=self.workspace,
                )
            )
            return read, write, process
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert s.url is not None
        headers = resolve_env_refs(s.headers, self.env, "header")
        client = await stack.enter_async_context(
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
        )
        read, write = await stack.enter_async_context(
            streamable_http_client(s.url, http_client=client)
        )
        return read, write, None

    def _connect_left(self) -> float:
        return max(self.settings.connect_timeout_seconds - (time.monotonic() - self.started), 0.01)

    def fail(self, reason: str) -> None:
        """Mark the server failed with `reason` without connecting (e.g. no SDK)."""
        self._fail(reason)

    def _exited(self, gone: Any) -> str | None:
        """How a stdio server that ended by itself ended: its status and last stderr line
        (secrets of its configuration masked), or None while it runs."""
        code = getattr(gone, "returncode", None)
        if code is None:
            return None
        said = gone.last_stderr_line()
        where = f".logician/logs/mcp-{self.name}.log"
        if not said:
            return f"the server exited with status {code} (no stderr; log: {where})"
        secrets = configured_secrets(self.settings, self.env)
        return (
            f"the server exited with status {code}; its last stderr line: "
            f"{redact(said, secrets)!r} (log: {where})"
        )

    def _fail(self, reason: str) -> None:
        # An SDK or HTTP error may quote a header or URL: shown in `%logician mcp` and logged.
        reason = redact(reason, configured_secrets(self.settings, self.env))
        self.state = "failed"
        self.error = reason
        if self.connect_seconds is None:
            self.connect_seconds = time.monotonic() - self.started
        logger.info("MCP server %s: %s", self.name, reason)

    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call `tool` once the server is ready (waiting no longer than it may take)."""
        if self.state == "connecting" and self._ready is not None:
            left = self.settings.connect_timeout_seconds - (time.monotonic() - self.started)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), timeout=max(left, 0.0))
        session = self._session
        if self.state != "ready" or session is None:
            why = f": {self.error}" if self.error else ""
            raise McpCallError(f"the MCP server {self.name!r} is {self.state}{why}")
        try:
            with anyio.fail_after(self.settings.call_timeout_seconds):
                return await session.call_tool(tool, arguments)
        except TimeoutError:
            raise McpCallError(
                f"no answer within call_timeout_seconds={self.settings.call_timeout_seconds:g} "
                f"(server {self.name!r}); the call was cancelled and whether it had any effect "
                "is unknown"
            ) from None

    def snapshot(self) -> ServerStatus:
        seconds = self.connect_seconds
        if self.state == "connecting":
            seconds = time.monotonic() - self.started
        return ServerStatus(
            self.name,
            self.settings.transport,
            self.state,
            len(self.tools),
            self.stale,
            self.error,
            seconds,
        )


def _remote(tool: mcp_types.Tool) -> RemoteTool:
    annotations = tool.annotations
    return RemoteTool(
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        input_schema=dict(tool.input_schema or {"type": "object"}),
        read_only=bool(annotations is not None and annotations.read_only_hint),
    )


def _leaf(exc: BaseException) -> BaseException:
    inner = getattr(exc, "exceptions", None)  # an exception group from a task group
    return _leaf(inner[0]) if inner else exc


def _describe(exc: BaseException) -> str:
    exc = _leaf(exc)
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return f"cannot start the server: {text}"
    return f"{type(exc).__name__}: {text}"[:500]


__all__ = [
    "McpCallError",
    "RemoteTool",
    "ServerConnection",
    "ServerStatus",
    "State",
    "configured_secrets",
]
