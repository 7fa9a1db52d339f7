"""The agent's tools: read, write, edit, bash, python, ls, glob, grep, notebook_read,
notebook_edit.

Each tool declares its recovery behaviour (`pure`, `restorable`, `external`) and whether it
is read-only; the harness records a call's intent, result and commit as separate states and
uses the declaration to decide what a crash left behind may do. Paths resolve against the
workspace and may not leave it. Never imports Jupyter: `python` reaches the notebook only
through the `run_python` callable the kernel puts in the `ToolContext`, and the notebook tools
reach the live notebook only through its `notebook` (`NotebookAccess`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ..types import FRONTEND_TOOLS as NOTEBOOK_TOOLS
    from ._base import Recovery, Tool, ToolContext, ToolError, ToolResult
    from ._notebook import NotebookAccess
    from ._output import bound_output
    from ._paths import resolve_path

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


if not TYPE_CHECKING:
    __getattr__ = exports(__name__)


def default_tools() -> dict[str, Tool]:
    """A fresh instance of every built-in tool, by name (the tools load here, not at start)."""
    from ._bash import BashTool
    from ._explore import GlobTool, GrepTool, LsTool
    from ._files import EditTool, ReadTool, WriteTool
    from ._notebook import NotebookEditTool, NotebookReadTool
    from ._python import PythonTool

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
