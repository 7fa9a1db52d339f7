"""An MCP server's tool as one of ours: a `Tool` the harness runs like `bash` or `read`.

Each listed tool becomes a `Tool` subclass named `server__tool`, its description and JSON
schema passed through, `recovery = "external"` (an MCP call has effects we cannot see, so an
interrupted one is quarantined, never repeated) and `read_only` from the server's
`readOnlyHint`. `Tool.run` masks secrets and bounds the output; this module turns the
server's content blocks into text and leaves argument checking to the server, which owns
the schema.

Must never: call a server outside `McpManager.call` (the per-call timeout and cancellation
live there).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from ..tools import Recovery, Tool, ToolContext, ToolError, ToolResult
from .connection import McpCallError, RemoteTool

if TYPE_CHECKING:  # the SDK is imported only when a server is configured
    import mcp_types

Caller = Callable[[str, str, dict[str, Any]], Awaitable["mcp_types.CallToolResult"]]
"""`(server, remote tool name, arguments)` -> the server's result; raises `McpCallError`."""

_DESCRIPTION_LIMIT = 1024


class McpTool(Tool):
    """Base of the generated classes; `server` and `remote` name what it calls."""

    recovery: ClassVar[Recovery] = "external"
    read_only: ClassVar[bool] = False
    server: ClassVar[str]
    remote: ClassVar[str]
    stale: ClassVar[bool] = False

    def __init__(self, caller: Caller) -> None:
        self._caller = caller

    def _validate(self, arguments: Any) -> dict[str, Any]:
        # The server validates against its own schema (it may use any JSON-schema feature);
        # we only make sure there is an object to send.
        if not isinstance(arguments, dict):
            raise ToolError(f"{self.name}: arguments must be a JSON object")
        return arguments

    def _describe(self, arguments: dict[str, Any]) -> str:
        shown = ", ".join(f"{k}={json.dumps(v)[:60]}" for k, v in arguments.items())
        return f"{self.name}({shown})"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            result = await self._caller(self.server, self.remote, args)
        except McpCallError as exc:
            raise ToolError(f"{self.name}: {exc}") from None
        text = content_text(result)
        summary = text.strip().splitlines()[0][:100] if text.strip() else "(no output)"
        return ToolResult(
            content=text or "(the tool returned no content)",
            is_error=bool(result.is_error),
            display=summary,
        )


def content_text(result: mcp_types.CallToolResult) -> str:
    """The result's content blocks as text for the model."""
    parts: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(getattr(block, "text", "")))
        elif kind in ("image", "audio"):
            mime = getattr(block, "mime_type", "") or "unknown type"
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[{kind}: {mime}, about {size} bytes, not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource: {getattr(block, 'uri', '')}]")
        elif kind == "resource":
            resource = getattr(block, "resource", None)
            parts.append(
                str(getattr(resource, "text", "") or f"[resource: {getattr(resource, 'uri', '')}]")
            )
        else:
            parts.append(f"[{kind or 'content'} block]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def make_tool(
    name: str, server: str, remote: RemoteTool, caller: Caller, *, stale: bool
) -> McpTool:
    """A tool instance of a class generated for one listed tool."""
    schema = dict(remote.input_schema)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    description = f"[MCP server {server}] {remote.description}"[:_DESCRIPTION_LIMIT]
    cls = type(
        f"McpTool_{name}",
        (McpTool,),
        {
            "name": name,
            "description": description,
            "parameters": schema,
            "read_only": remote.read_only,
            "server": server,
            "remote": remote.name,
            "stale": stale,
        },
    )
    tool: McpTool = cls(caller)
    return tool
