"""A small MCP server for notebooks/05-mcp-and-hooks.ipynb, written with the SDK's MCPServer
(FastMCP in mcp 1.x; the `[mcp]` extra). Its notes live in memory; run it over stdio:

    [mcp.servers.notes]
    command = "python"
    args = ["-m", "logician_kernel.examples.notes_server"]
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("notes")
NOTES = {
    "otters.md": "Sea otters hold hands while they sleep.",
    "rivers.md": "River otters live in burrows near water.",
    "owls.md": "Owls can turn their heads 270 degrees.",
}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def search_notes(query: str) -> str:
    """Find the notes whose text mentions `query` (case-insensitive)."""
    hits = [f"{name}: {text}" for name, text in NOTES.items() if query.lower() in text.lower()]
    return "\n".join(hits) or f"no note mentions {query!r}"


@server.tool()
def add_note(name: str, text: str) -> str:
    """Add or replace a note."""
    NOTES[name] = text
    return f"saved {name} ({len(text)} characters)"


if __name__ == "__main__":
    server.run("stdio")
