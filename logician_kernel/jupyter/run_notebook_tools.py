"""`logician run`'s side of the notebook protocol: the notebook being run answers the kernel's
`notebook.request`, as the lab extension's `notebook_tools.ts` does for an open notebook.

`HeldNotebook` answers over the in-memory nbformat notebook the run executes and writes to
`-o`: an agent's inserted cells are in the output notebook. `ToolServingClient` is nbclient's
client with a `logician` comm of its own: it attaches when the kernel starts, answers every
request (whatever its parent message, which nbclient would otherwise drop), and runs the cells
the notebook held when the run began, by identity: a cell the agent inserts is not run (as in
JupyterLab, where the agent's cells wait for the user) unless the agent asked to run it
(`notebook_run`): the cells of a `run` request execute right after the agent's cell, each as
its own cell, their outputs in `-o`; a cell the agent deleted is skipped.

Must never: write the notebook file (the runner writes `-o` once, at the end).
"""

from __future__ import annotations

import uuid
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.util import ensure_async, run_sync

from .comm_messages import SCHEMA_VERSION, TARGET

_CELL_TYPES = ("code", "markdown", "raw")


class HeldNotebook:
    """An nbformat notebook's cells in memory, answering `notebook.request` (see
    `notebook_tools.ts`). `cells` is the document as the agent sees it: the same cell objects
    the run executes, in the order its edits left them."""

    def __init__(self, cells: list[Any], path: str) -> None:
        self.cells = cells
        self.path = path
        self.to_run: list[Any] = []
        """The cells a `run` request asked for, in order, not yet executed."""

    def answer(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = {"path": self.path}
        try:
            handler = getattr(self, "_op_" + op, None)
            if handler is None:
                raise LookupError(f"unknown notebook operation {op!r}")
            reply.update(handler(args))
        except LookupError as exc:
            reply["error"] = str(exc.args[0])
        return reply

    def _find(self, cell_id: Any) -> int:
        for i, cell in enumerate(self.cells):
            if cell.get("id") == cell_id:
                return i
        raise LookupError(f"no cell has the id {cell_id!r} (read the outline again)")

    def _info(self, i: int, head: int | None = None, output_chars: int = 20_000) -> dict[str, Any]:
        cell = self.cells[i]
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        info: dict[str, Any] = {
            "id": cell.get("id") or "",
            "index": i,
            "cell_type": cell.cell_type,
            "source": cell.source if head is None else cell.source[:head],
            "execution_count": cell.get("execution_count"),
            "output_kinds": [o.get("output_type", "output") for o in outputs],
        }
        if head is None:
            info["outputs"] = [summary(o, output_chars) for o in outputs]
        else:
            info["lines"] = len(cell.source.splitlines())
        return info

    def _op_outline(self, args: dict[str, Any]) -> dict[str, Any]:
        head = int(args.get("head_chars", 400))
        return {"cells": [self._info(i, head) for i in range(len(self.cells))]}

    def _op_cell(self, args: dict[str, Any]) -> dict[str, Any]:
        i = self._find(args.get("cell_id"))
        return {"cell": self._info(i, output_chars=int(args.get("output_chars", 20_000)))}

    def _new(self, cell_type: Any, source: str, cell_id: str | None = None) -> Any:
        if cell_type not in _CELL_TYPES:
            raise LookupError(f"cell_type must be code, markdown or raw, not {cell_type!r}")
        make = {
            "code": nbformat.v4.new_code_cell,
            "markdown": nbformat.v4.new_markdown_cell,
            "raw": nbformat.v4.new_raw_cell,
        }[cell_type]
        cell = make(source)
        if cell_id is not None:
            cell["id"] = cell_id
        return cell

    def _op_edit(self, args: dict[str, Any]) -> dict[str, Any]:
        mode = args.get("mode")
        cells = self.cells
        if mode == "insert":
            if "after_id" in args:
                at = self._find(args["after_id"]) + 1
            else:
                at = min(max(int(args.get("index", len(cells))), 0), len(cells))
            cells.insert(at, self._new(args.get("cell_type", "code"), str(args.get("source", ""))))
            return {"before": None, "after": self._info(at)}
        i = self._find(args.get("cell_id"))
        before = self._info(i)
        if mode == "delete":
            del cells[i]
            return {"before": before, "after": None}
        if mode != "replace":
            raise LookupError(f"mode must be insert, replace or delete, not {mode!r}")
        self._change(i, str(args.get("source", "")), args.get("cell_type", cells[i].cell_type))
        return {"before": before, "after": self._info(i)}

    def _change(self, i: int, source: str, cell_type: Any) -> None:
        cell = self.cells[i]
        if cell_type == cell.cell_type:
            cell.source = source
        else:
            self.cells[i] = self._new(cell_type, source, cell.get("id"))

    def _op_restore(self, args: dict[str, Any]) -> dict[str, Any]:
        applied: list[str] = []
        conflicts: list[str] = []
        missing: list[str] = []
        for step in args.get("steps", []):
            cell_id = str(step.get("id"))
            ids = [c.get("id") for c in self.cells]
            if step.get("op") == "insert":
                if cell_id in ids:
                    conflicts.append(cell_id)
                    continue
                at = min(int(step.get("index", len(ids))), len(ids))
                new = self._new(step.get("cell_type", "code"), str(step.get("source", "")), cell_id)
                self.cells.insert(at, new)
                applied.append(cell_id)
                continue
            if cell_id not in ids:
                missing.append(cell_id)
                continue
            i = ids.index(cell_id)
            if self.cells[i].source != step.get("expect") and args.get("force") is not True:
                conflicts.append(cell_id)
                continue
            if step.get("op") == "delete":
                del self.cells[i]
            else:
                self._change(i, str(step.get("source", "")), step.get("cell_type", "code"))
            applied.append(cell_id)
        return {"applied": applied, "conflicts": conflicts, "missing": missing}

    def _op_run(self, args: dict[str, Any]) -> dict[str, Any]:
        applied: list[str] = []
        conflicts: list[str] = []
        missing: list[str] = []
        for want in args.get("cells", []):
            cell_id = str(want.get("id"))
            cell = next((c for c in self.cells if c.get("id") == cell_id), None)
            if cell is None:
                missing.append(cell_id)
            elif cell.cell_type != "code" or cell.source != want.get("expect"):
                conflicts.append(cell_id)
            else:
                self.to_run.append(cell)
                applied.append(cell_id)
        return {"applied": applied, "conflicts": conflicts, "missing": missing}


def summary(output: dict[str, Any], limit: int) -> dict[str, Any]:
    """One output bounded as the extension bounds it: text head and tail, data as sizes."""
    kind = output.get("output_type", "output")
    if kind == "error":
        return {
            "output_type": kind,
            "ename": output.get("ename"),
            "evalue": output.get("evalue"),
            "traceback": list(output.get("traceback", []))[-40:],
        }
    out: dict[str, Any] = {"output_type": kind}
    text = output.get("text", "")
    data = output.get("data", {})
    sizes = {}
    for mime, value in data.items():
        raw = value if isinstance(value, str) else str(value)
        image = mime.startswith("image/") and "svg" not in mime
        sizes[mime] = len(raw) * 3 // 4 if image else len(raw)
    if not text and "text/plain" in data:
        text = data["text/plain"]
    if sizes:
        out["sizes"] = sizes
    if len(text) > limit:
        half = limit // 2
        out["cut"] = len(text) - 2 * half
        text = text[:half] + "\n…\n" + text[-half:]
    if text:
        out["text"] = text
    return out


class ToolServingClient(NotebookClient):
    """nbclient's client, serving the notebook tools from the notebook it runs."""

    held: HeldNotebook | None = None

    async def async_start_new_kernel_client(self) -> Any:
        kc = await super().async_start_new_kernel_client()
        path = str(self.resources.get("notebook_path") or "")
        self.held = HeldNotebook(list(self.nb.cells), path)
        self._comm_id = uuid.uuid4().hex
        # Nobody answers approvals here: the kernel keeps deciding them headless.
        opened = {"comm_id": self._comm_id, "target_name": TARGET, "data": {"approvals": False}}
        self._send("comm_open", opened)
        self._send_data({"type": "notebook.attach", "path": self.held.path})
        return kc

    def _send(self, msg_type: str, content: dict[str, Any]) -> None:
        assert self.kc is not None
        self.kc.shell_channel.send(self.kc.session.msg(msg_type, content))

    def _send_data(self, data: dict[str, Any]) -> None:
        self._send("comm_msg", {"comm_id": self._comm_id, "data": {"v": SCHEMA_VERSION, **data}})

    def _serve(self, msg: dict[str, Any]) -> bool:
        """Answer one of our comm's requests; False for any other message."""
        if msg["msg_type"] != "comm_msg" or self.held is None:
            return False
        content = msg["content"]
        if content.get("comm_id") != self._comm_id:
            return False
        data = content.get("data") or {}
        if data.get("type") == "notebook.request":
            reply = self.held.answer(str(data.get("op")), dict(data.get("args") or {}))
            self._send_data({"type": "notebook.reply", "request": data.get("request"), **reply})
        return True

    def _sync(self) -> None:
        """Between cells: the notebook takes the order the agent's edits left (nbclient keeps
        a running cell's index, so the order changes only here), and nbclient's map from
        display ids to cell indexes follows the cells that moved."""
        held = self.held
        if held is None or [id(c) for c in held.cells] == [id(c) for c in self.nb.cells]:
            return
        before = list(self.nb.cells)
        self.nb.cells[:] = held.cells
        where = {id(cell): i for i, cell in enumerate(self.nb.cells)}
        for display_id, by_cell in self._display_id_map.items():
            self._display_id_map[display_id] = {
                where[id(before[i])]: outputs
                for i, outputs in by_cell.items()
                if i < len(before) and id(before[i]) in where
            }

    async def _async_poll_output_msg(
        self, parent_msg_id: str, cell: nbformat.NotebookNode, cell_index: int
    ) -> None:
        # nbclient's loop, which drops messages of other parents: our comm's come first.
        from nbclient.exceptions import CellExecutionComplete

        assert self.kc is not None
        while True:
            msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=None))
            if self._serve(msg):
                continue
            if msg["parent_header"].get("msg_id") == parent_msg_id:
                try:
                    self.process_message(msg, cell, cell_index)
                except CellExecutionComplete:
                    return

    async def async_execute(self, reset_kc: bool = False, **kwargs: Any) -> Any:
        # nbclient's, with one change: the cells held at the start run by identity, so the
        # agent's inserts and deletes neither re-run nor skip a cell.
        if reset_kc and self.owns_km:
            await self._async_cleanup_kernel()
        self.reset_execution_trackers()
        async with self.async_setup_kernel(**kwargs):
            assert self.kc is not None
            msg_id = await ensure_async(self.kc.kernel_info())
            info_msg = await self.async_wait_for_reply(msg_id)
            if info_msg is not None and "language_info" in info_msg["content"]:
                self.nb.metadata["language_info"] = info_msg["content"]["language_info"]
            for cell in list(self.nb.cells):
                await self._run_held(cell)
                # the cells the agent asked to run, right after its cell (each its own frame)
                while self.held is not None and self.held.to_run:
                    await self._run_held(self.held.to_run.pop(0))
            self.set_widgets_metadata()
        return self.nb

    async def _run_held(self, cell: nbformat.NotebookNode) -> None:
        index = next((i for i, c in enumerate(self.nb.cells) if c is cell), None)
        if index is None:
            return  # the agent deleted it
        try:
            await self.async_execute_cell(cell, index, execution_count=self.code_cells_executed + 1)
        finally:
            self._sync()

    execute = run_sync(async_execute)  # nbclient binds its own `execute` to its own method
