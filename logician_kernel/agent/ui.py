"""What a user interface of a run reads, from the packages the agent composes: the run's
events, the status fold and its phases, the todo list, the MCP servers' report, the permission
modes, the audit log, the python tool's result and output bound, and the process guard a
kernel starts under.

`jupyter/` imports these from here (and the durable state from `workspace/`), never from
`events/`, `loop/`, `mcp/`, `policy/` or `tools/` themselves: the agent is the one place that
knows how a run is put together. Re-exports only; nothing is defined here.
"""

from ..events.events import (
    HarnessEvent,
    HookReported,
    ModelStreamed,
    RunEnded,
    ToolFinished,
    ToolStarted,
)
from ..events.runtime_state import Phase, RuntimeState, context_fraction
from ..loop.todo import TodoCapability
from ..mcp import report as mcp_report
from ..mcp.connection import State as McpState
from ..policy import MODES, AuditLog
from ..tools import ToolResult
from ..tools._base import MAX_OUTPUT_BYTES
from ..tools._output import BoundedText
from ..tools._process_guard import guard_kernel_tree

__all__ = [
    "MAX_OUTPUT_BYTES",
    "MODES",
    "AuditLog",
    "BoundedText",
    "HarnessEvent",
    "HookReported",
    "McpState",
    "ModelStreamed",
    "Phase",
    "RunEnded",
    "RuntimeState",
    "TodoCapability",
    "ToolFinished",
    "ToolResult",
    "ToolStarted",
    "context_fraction",
    "guard_kernel_tree",
    "mcp_report",
]
