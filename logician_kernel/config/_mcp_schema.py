"""The `[mcp]` settings: MCP tool servers the agent may use, by name.

Shape only, like `_schema.py`: nothing here connects, reads the environment or a file. A server
is either a stdio command (`command`, `args`, `env`, `cwd`) or a streamable HTTP endpoint
(`url`, `headers`); `logician_kernel/mcp/` connects them. Header values of the form `env:VAR`
are read from the environment when connecting and are never stored, logged or shown.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["McpServerSettings", "McpSettings"]

_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)  # descriptions: _field_docs.py


class McpServerSettings(_Section):
    """One MCP server: a stdio command or a streamable HTTP URL (exactly one of the two)."""

    command: str | None = Field(default=None, examples=["python"])
    """The program of a stdio server, found on PATH or given as a path."""

    args: tuple[str, ...] = Field(default=(), json_schema_extra={"merge": "replace"})
    """Arguments of `command`. Merge rule: replace - a higher layer's list replaces a lower
    one's."""

    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables added to the kernel's for a stdio server."""

    cwd: Path | None = None
    """Working directory of a stdio server (relative paths resolve against the workspace);
    the workspace when unset."""

    url: str | None = Field(default=None, examples=["http://127.0.0.1:8765/mcp"])
    """The endpoint of a streamable HTTP server."""

    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers sent to a streamable HTTP server; a value `env:VAR` is read from the
    environment variable VAR when connecting (never stored, logged or shown)."""

    enabled: bool = True
    """Connect this server at kernel start; false keeps its settings without connecting."""

    allowed_tools: tuple[str, ...] | None = Field(
        default=None, examples=[["search", "fetch_*"]], json_schema_extra={"merge": "replace"}
    )
    """Glob patterns of the server's tool names (unprefixed) the agent is offered; all of
    them when unset. Merge rule: replace - a higher layer's list replaces a lower one's."""

    excluded_tools: tuple[str, ...] = Field(default=(), json_schema_extra={"merge": "replace"})
    """Glob patterns of the server's tool names never offered (applied after
    `allowed_tools`). Merge rule: replace - a higher layer's list replaces a lower one's."""

    connect_timeout_seconds: float = Field(default=10.0, gt=0)
    """How long connecting (start, `initialize`, the tool list) may take before the server is
    marked failed."""

    call_timeout_seconds: float = Field(default=60.0, gt=0)
    """Wall-clock limit of one tool call on this server; the call is cancelled after it."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                "set exactly one of `command` (a stdio server) or `url` (streamable HTTP)"
            )
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


class McpSettings(_Section):
    """MCP tool servers, connected in the background at kernel start."""

    servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    """Servers by name (letters, digits, `_`, `-`; at most 32 characters). Their tools are
    offered to the model as `NAME__TOOL`."""

    max_tools_per_server: int = Field(default=128, ge=1)
    """At most this many tools of one server are offered to the model, in the server's
    listing order (after `allowed_tools`/`excluded_tools`); the rest are cut, with a notice
    naming the server and the count in `%logician mcp`. Bounds what one server can put into
    every request."""

    @field_validator("servers", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name in value:
                if not isinstance(name, str) or not _SERVER_NAME.match(name):
                    raise ValueError(
                        f"server name {name!r}: use letters, digits, `_` and `-` "
                        "(at most 32 characters)"
                    )
                if "__" in name:
                    raise ValueError(f"server name {name!r}: `__` separates server and tool names")
        return value
