"""What users read about MCP servers: the `%logician mcp` table and the one-line summary the
status widget shows. Pure text from `ServerStatus` rows; HTML is the jupyter side's.
"""

from __future__ import annotations

from collections.abc import Sequence

from .connection import ServerStatus

HEADERS = ("server", "transport", "state", "tools", "time to connect", "last error or notice")


def _seconds(status: ServerStatus) -> str:
    if status.connect_seconds is None:
        return "-"
    so_far = " so far" if status.state == "connecting" else ""
    return f"{status.connect_seconds:.1f} s{so_far}"


def rows(statuses: Sequence[ServerStatus]) -> list[tuple[str, ...]]:
    return [
        (
            s.name,
            s.transport,
            s.state,
            f"{s.tools} (cached, stale)" if s.stale and s.tools else str(s.tools),
            _seconds(s),
            s.error or s.notice or "-",
        )
        for s in statuses
    ]


def summary(statuses: Sequence[ServerStatus]) -> str:
    """`MCP: files ready (4 tools) · hung connecting · bad failed`; empty without servers."""
    if not statuses:
        return ""
    parts = []
    for s in statuses:
        tools = f" ({s.tools} tools{', stale' if s.stale else ''})" if s.tools else ""
        cut = " (tools cut to the limit)" if s.notice else ""
        parts.append(f"{s.name} {s.state}{tools}{cut}")
    return "MCP: " + " · ".join(parts)


NO_SERVERS = (
    "No MCP servers are configured. Add one to your config.toml:\n"
    '  [mcp.servers.files]\n  command = "python"\n  args = ["-m", "my_mcp_server"]'
)
