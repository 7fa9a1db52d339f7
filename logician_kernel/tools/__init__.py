"""The agent's tools: read, write, edit, bash, python, ls, glob, grep, notebook_read,
notebook_edit.

Each tool declares its recovery behaviour (`pure`, `restorable`, `external`) and whether it
is read-only; the harness records a call's intent, result and commit as separate states and
uses the declaration to decide what a crash left behind may do. Paths resolve against the
workspace and may not leave it. Never imports Jupyter: `python` reaches the notebook only
through the `run_python` callable the kernel puts in the `ToolContext`, and the notebook tools
reach the live notebook only through its `notebook` (`NotebookAccess`).
"""

from ..types import FRONTEND_TOOLS
from ._base import Recovery, Tool, ToolContext, ToolError, ToolResult
from ._bash import BashTool
from ._explore import GlobTool, GrepTool, LsTool
from ._files import EditTool, ReadTool, WriteTool
from ._notebook import NotebookAccess, NotebookEditTool, NotebookReadTool
from ._output import bound_output
from ._paths import resolve_path
from ._python import PythonTool

NOTEBOOK_TOOLS = FRONTEND_TOOLS
"""The tools offered only where a notebook frontend can answer them."""

__all__ = [
    "NOTEBOOK_TOOLS",
    "NotebookAccess",
    "Recovery",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "bound_output",
    "default_tools",
    "resolve_path",
]


def default_tools() -> dict[str, Tool]:
    """A fresh instance of every built-in tool, by name."""
    tools: list[Tool] = [
        ReadTool(),
        WriteTool(),
        EditTool(),
        BashTool(),
        PythonTool(),
        LsTool(),
        GlobTool(),
        GrepTool(),
        NotebookReadTool(),
        NotebookEditTool(),
    ]
    return {tool.name: tool for tool in tools}
