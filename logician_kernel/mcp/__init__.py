"""MCP tool servers: configured in `[mcp.servers.NAME]`, connected in the background, their
tools offered to the model as `server__tool` and run through the same gate, ledger and
bounds as ours.

Never imports Jupyter; the magics and widgets only render `McpManager.status()`.
"""

from .connection import McpCallError, ServerStatus
from .manager import McpManager
from .names import is_mcp_name
from .tool import McpTool

__all__ = ["McpCallError", "McpManager", "McpTool", "ServerStatus", "is_mcp_name"]
