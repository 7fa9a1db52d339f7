"""The words a status is said in: what the agent is doing, and what state an MCP server is in.

Declared here, with no imports, so the comm's message models (what a frontend is told) need
neither the event folds nor the MCP client to be loaded.
"""

from __future__ import annotations

from typing import Literal

Phase = Literal["idle", "turn", "compaction", "branch_summary"]
"""What the agent is doing: nothing, a turn of a run, compacting, or summarising a branch."""

McpState = Literal["connecting", "ready", "failed", "stopped"]
"""Where an MCP server is: starting and listing its tools, serving them, given up, or shut."""
