"""`python`: code run in the notebook's own namespace, through the kernel.

The tool only delegates to `ToolContext.run_python`, which the kernel supplies: the user
sees the output in the cell and keeps the variables. `external`: code may do anything, so a
call interrupted by a crash is quarantined, never re-run.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._base import Recovery, Tool, ToolContext, ToolError, ToolResult, first_line


class PythonTool(Tool):
    name: ClassVar[str] = "python"
    description: ClassVar[str] = (
        "Run Python code in the notebook's own namespace, as if in a cell: variables, imports "
        "and data the user defined are available, and whatever you define stays available "
        "to the user. Returns printed output and the value of a final expression."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "The Python code to run."},
        },
        "required": ["code"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "external"
    read_only: ClassVar[bool] = False

    def _describe(self, arguments: dict[str, Any]) -> str:
        code = arguments.get("code")
        return first_line(code) if isinstance(code, str) else "python"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.run_python is None:
            raise ToolError("python tool needs a notebook kernel")
        if not args["code"].strip():
            raise ToolError("python: the code is empty")
        return await ctx.run_python(args["code"])
