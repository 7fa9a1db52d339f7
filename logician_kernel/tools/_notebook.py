"""`notebook_read` and `notebook_edit`: the agent reads and changes the open notebook's cells.

The tools never touch the `.ipynb` on disk: they ask a `NotebookAccess` the kernel puts in
the `ToolContext` (the live document in the frontend, over the `logician` comm), which
answers with plain dicts. An edit names its cell by `id`, never by a position that may have
moved since the model read it; an insert is placed by `after_id` or `index`. Every edit the
frontend applied is handed to `ToolContext.record_cell_edit` with the cell before and after,
so the frame it belongs to can take it back. `notebook_read` is `pure`; `notebook_edit` is
`external`: a call whose result was never recorded may or may not have reached the document,
so it is quarantined, never repeated. With `run`, an inserted or replaced code cell is also
queued to run (`NotebookAccess.queue_run`): it executes as its own cell, its own frame, after
the agent's cell ends (`jupyter/cell_runs.py` says why and the queue's rules); the call is then
decided as running code, under the rule name `notebook_run` (`policy/gate.py`).

Must never: write a notebook file, or raise into the turn (failures are tool errors).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol

from ._base import Recovery, Tool, ToolContext, ToolError, ToolResult, format_size
from ._output import bound_output

CELL_TYPES = ("code", "markdown", "raw")
EDIT_MODES = ("insert", "replace", "delete")

OUTPUT_TEXT_BYTES = 4_000
"""One text output of a cell shown in full: its head and tail within this many bytes."""
ERROR_BYTES = 6_000
"""One error's traceback, within this many bytes (head and tail)."""
OUTLINE_LINES = 2
"""Lines of each cell's source the outline shows."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class NotebookAccess(Protocol):
    """The live notebook, as the kernel reaches it (the frontend over the comm)."""

    def ask(self, op: str, args: dict[str, Any]) -> Awaitable[dict[str, Any]]:
        """`op` is `outline`, `cell` or `edit`. The answer is the frontend's reply; a reply
        with an `error` key (no frontend, a timeout, an unknown id) is a failed call."""
        ...

    def queue_run(self, cell_id: str, source: str, cell_type: str, call_id: str | None) -> int:
        """Queue the cell to run after the agent's cell (`notebook_run`); its place in the
        queue. A `ValueError` says why it cannot be queued."""
        ...


RecordCellEdit = Callable[[dict[str, Any]], None]
"""Records one applied cell edit (`call_id`, `notebook`, `mode`, `before`, `after`)."""


async def _ask(ctx: ToolContext, tool: str, op: str, args: dict[str, Any]) -> dict[str, Any]:
    if ctx.notebook is None:
        raise ToolError(
            f"{tool}: no notebook frontend is connected to this kernel (the JupyterLab "
            "extension answers these calls); nothing was read or changed"
        )
    reply = await ctx.notebook.ask(op, args)
    if reply.get("error"):
        raise ToolError(f"{tool}: {reply['error']}")
    return reply


class NotebookReadTool(Tool):
    name: ClassVar[str] = "notebook_read"
    description: ClassVar[str] = (
        "Read the notebook you are running in. Without `cell_id`: its outline, one line per "
        "cell (index, id, type, execution count, output kinds, first lines of source). With "
        "`cell_id`: that cell's whole source and its outputs (long text cut in the middle, "
        "images as a placeholder, errors with their traceback)."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "cell_id": {
                "type": "string",
                "description": "The id of one cell to read in full (from the outline).",
            },
        },
        "required": [],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "pure"
    read_only: ClassVar[bool] = True

    def _describe(self, arguments: dict[str, Any]) -> str:
        cell = arguments.get("cell_id")
        return f"notebook_read {cell}" if isinstance(cell, str) else "notebook_read (outline)"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        cell_id = args["cell_id"]
        if cell_id is None:
            reply = await _ask(ctx, self.name, "outline", {})
            cells = reply.get("cells") or []
            text = outline_text(reply.get("path"), cells)
            return ToolResult(content=text, display=f"read the outline: {len(cells)} cells")
        reply = await _ask(ctx, self.name, "cell", {"cell_id": cell_id})
        cell = reply.get("cell") or {}
        return ToolResult(content=cell_text(cell), display=f"read cell {cell_id}")


class NotebookEditTool(Tool):
    name: ClassVar[str] = "notebook_edit"
    description: ClassVar[str] = (
        "Change the notebook you are running in, one cell per call. `mode`: `insert` a new "
        "cell (after the cell `after_id`, or at `index`; at the end when neither is given), "
        "`replace` the source (and optionally the type) of the cell `cell_id`, or `delete` "
        "the cell `cell_id`. Cells are named by id (see notebook_read), never by position. "
        "Every edit is part of this cell's frame: a rewind takes it back. With `run: true` "
        "(insert or replace of a code cell) the cell is also run: it executes as its own cell "
        "right after your reply ends, so you do not see its outputs in this turn (read the "
        "cell with notebook_read in a later turn); use the python tool to see results now."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "mode": {
                "type": "string",
                "enum": list(EDIT_MODES),
                "description": "insert, replace or delete.",
            },
            "cell_id": {
                "type": "string",
                "description": "The cell to replace or delete (required for those modes).",
            },
            "after_id": {
                "type": "string",
                "description": "insert: the id of the cell the new cell goes after.",
            },
            "index": {
                "type": "integer",
                "minimum": 0,
                "description": "insert: the position of the new cell (0 is the top).",
            },
            "cell_type": {
                "type": "string",
                "enum": list(CELL_TYPES),
                "description": "code, markdown or raw (insert: code when not given; "
                "replace: the cell keeps its type when not given).",
            },
            "source": {
                "type": "string",
                "description": "The cell's whole new source (insert, replace).",
            },
            "run": {
                "type": "boolean",
                "default": False,
                "description": "insert, replace: also run the code cell, after your reply ends.",
            },
        },
        "required": ["mode"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "external"
    read_only: ClassVar[bool] = False

    def _describe(self, arguments: dict[str, Any]) -> str:
        mode = arguments.get("mode", "edit")
        if mode == "insert":
            where = arguments.get("after_id")
            at = f"after {where}" if where else f"at {arguments.get('index', 'the end')}"
            shown = f"notebook_edit insert {arguments.get('cell_type') or 'code'} cell {at}"
        else:
            shown = f"notebook_edit {mode} {arguments.get('cell_id', '?')}"
        return shown + (" and run it" if arguments.get("run") is True else "")

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        request = edit_request(args)
        reply = await _ask(ctx, self.name, "edit", request)
        before, after = reply.get("before"), reply.get("after")
        record = {
            "call_id": ctx.call_id,
            "notebook": reply.get("path"),
            "mode": request["mode"],
            "before": before,
            "after": after,
        }
        if ctx.record_cell_edit is not None:
            try:
                ctx.record_cell_edit(record)
            except Exception as exc:  # the edit stands; the model and the user must know
                raise ToolError(
                    f"notebook_edit: the edit was made but could not be recorded in the "
                    f"frame ({exc}); a rewind will not take it back"
                ) from None
        text, shown = edit_text(request["mode"], before, after), _shown(record)
        if args["run"] and after is not None:
            text += " " + _queue_run(ctx, after)
            shown += ", queued to run"
        return ToolResult(content=text, display=shown)


def _queue_run(ctx: ToolContext, cell: dict[str, Any]) -> str:
    """Queue the edited cell's run; what the model is told."""
    assert ctx.notebook is not None  # the edit went through it
    cell_id = str(cell.get("id"))
    try:
        ctx.notebook.queue_run(
            cell_id, str(cell.get("source") or ""), str(cell.get("cell_type")), ctx.call_id
        )
    except ValueError as exc:
        raise ToolError(
            f"notebook_edit: the edit was made, but the cell is not run: {exc}"
        ) from None
    return (
        "It is queued to run as its own cell after your reply ends: its outputs are not "
        "visible to you in this turn (do not wait for them; read the cell in a later turn)."
    )


def edit_request(args: dict[str, Any]) -> dict[str, Any]:
    """The frontend's edit request from validated arguments; bad combinations are errors."""
    mode = args["mode"]
    if mode not in EDIT_MODES:
        raise ToolError(f"notebook_edit: mode must be one of {', '.join(EDIT_MODES)}, not {mode!r}")
    cell_type = args["cell_type"]
    if cell_type is not None and cell_type not in CELL_TYPES:
        raise ToolError(
            f"notebook_edit: cell_type must be one of {', '.join(CELL_TYPES)}, not {cell_type!r}"
        )
    request: dict[str, Any] = {"mode": mode}
    if args["run"] and mode == "delete":
        raise ToolError("notebook_edit: run goes with insert or replace, not delete")
    if mode == "insert":
        if args["cell_id"] is not None:
            raise ToolError(
                "notebook_edit: insert places a new cell by after_id or index, not cell_id"
            )
        if args["after_id"] is not None and args["index"] is not None:
            raise ToolError("notebook_edit: give after_id or index for an insert, not both")
        if args["source"] is None:
            raise ToolError("notebook_edit: insert needs the new cell's source")
        request.update(source=args["source"], cell_type=cell_type or "code")
        if args["after_id"] is not None:
            request["after_id"] = args["after_id"]
        if args["index"] is not None:
            request["index"] = args["index"]
        return request
    if not args["cell_id"]:
        raise ToolError(f"notebook_edit: {mode} needs the cell_id of the cell to {mode}")
    if args["after_id"] is not None or args["index"] is not None:
        raise ToolError(f"notebook_edit: {mode} names its cell by cell_id only")
    request["cell_id"] = args["cell_id"]
    if mode == "replace":
        if args["source"] is None:
            raise ToolError("notebook_edit: replace needs the cell's new source")
        request["source"] = args["source"]
        if cell_type is not None:
            request["cell_type"] = cell_type
    elif args["source"] is not None or cell_type is not None:
        raise ToolError("notebook_edit: delete takes only cell_id")
    return request


def _shown(record: dict[str, Any]) -> str:
    cell = record["after"] or record["before"] or {}
    verb = {"insert": "inserted", "replace": "replaced", "delete": "deleted"}[record["mode"]]
    return f"{verb} {cell.get('cell_type', 'cell')} cell {cell.get('id', '?')} at [{cell.get('index', '?')}]"


def edit_text(mode: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    """What the model is told of an applied edit: the ids and positions that now hold."""
    if mode == "insert" and after:
        return f"Inserted {after.get('cell_type')} cell id={after.get('id')} at index {after.get('index')}."
    if mode == "replace" and after:
        return f"Replaced the source of cell id={after.get('id')} (index {after.get('index')})."
    if mode == "delete" and before:
        return f"Deleted cell id={before.get('id')} (it was at index {before.get('index')})."
    return f"{mode}: done."


def outline_text(path: str | None, cells: list[dict[str, Any]]) -> str:
    """One entry per cell: `[index] id type In[n] outputs`, then its first lines."""
    head = f"{path or 'the notebook'}: {len(cells)} cell{'s' if len(cells) != 1 else ''}"
    lines = [head]
    for cell in cells:
        count = cell.get("execution_count")
        kinds = cell.get("output_kinds") or []
        parts = [f"[{cell.get('index')}]", f"id={cell.get('id')}", str(cell.get("cell_type"))]
        if count is not None:
            parts.append(f"In[{count}]")
        if kinds:
            parts.append("outputs: " + ", ".join(kinds))
        lines.append(" ".join(parts))
        source = str(cell.get("source") or "").splitlines()
        for text in source[:OUTLINE_LINES]:
            lines.append("    " + text[:160])
        more = int(cell.get("lines") or len(source)) - min(len(source), OUTLINE_LINES)
        if more > 0:
            lines.append(f"    … {more} more line{'s' if more != 1 else ''}")
    return "\n".join(lines)


def cell_text(cell: dict[str, Any]) -> str:
    """One cell in full: header, source, then each output bounded."""
    count = cell.get("execution_count")
    header = f"[{cell.get('index')}] id={cell.get('id')} {cell.get('cell_type')}"
    if count is not None:
        header += f" In[{count}]"
    parts = [header, "--- source ---", str(cell.get("source") or "")]
    outputs = cell.get("outputs") or []
    if outputs:
        parts.append(f"--- outputs ({len(outputs)}) ---")
    for output in outputs:
        parts.append(output_text(output))
    return "\n".join(parts)


def output_text(output: dict[str, Any]) -> str:
    """One output, bounded: text head and tail, images as one line with their size, errors
    with their traceback (ANSI colours removed) up to `ERROR_BYTES`."""
    kind = str(output.get("output_type") or "output")
    if kind == "error":
        trace = "\n".join(str(line) for line in output.get("traceback") or [])
        text = f"{output.get('ename')}: {output.get('evalue')}\n{_ANSI.sub('', trace)}"
        return bound_output(text.strip(), ERROR_BYTES)
    lines: list[str] = []
    for mime, size in sorted((output.get("sizes") or {}).items()):
        if not str(mime).startswith("text/"):
            lines.append(f"[{mime} output, {format_size(int(size))}]")
    shown = output.get("text")
    if isinstance(shown, str) and shown:
        cut = int(output.get("cut") or 0)
        body = bound_output(_ANSI.sub("", shown), OUTPUT_TEXT_BYTES)
        if cut:
            body += f"\n[{cut} characters of this output cut by the frontend]"
        lines.insert(0, body)
    return "\n".join(lines) if lines else f"[{kind}]"
