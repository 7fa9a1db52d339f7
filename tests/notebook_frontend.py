"""A notebook as the lab extension holds it, answering the kernel's `notebook.request`
(`labextension/src/notebook_tools.ts` in Python): the tests' stand-in for JupyterLab's model.

`answer(request)` is the extension's answer to one request; `NotebookClient` speaks it over a
real kernel's `logician` comm.
"""

from __future__ import annotations

import copy
import time
import uuid
from queue import Empty
from typing import Any


class FakeNotebook:
    """Cells as dicts: id, cell_type, source, execution_count, outputs."""

    def __init__(self, cells: list[dict[str, Any]], path: str = "nb.ipynb") -> None:
        self.cells = [{"execution_count": None, "outputs": [], **c} for c in cells]
        self.path = path
        self.ran: list[str] = []
        """The cells a `run` request started, in order."""

    def shape(self) -> list[tuple[str, str, str]]:
        return [(c["id"], c["cell_type"], c["source"]) for c in self.cells]

    def _find(self, cell_id: str) -> int | None:
        for i, cell in enumerate(self.cells):
            if cell["id"] == cell_id:
                return i
        return None

    def _info(self, i: int, head: int | None = None) -> dict[str, Any]:
        cell = self.cells[i]
        source = cell["source"]
        info = {
            "id": cell["id"],
            "index": i,
            "cell_type": cell["cell_type"],
            "source": source if head is None else source[:head],
            "execution_count": cell["execution_count"],
            "output_kinds": [o.get("output_type", "") for o in cell["outputs"]],
        }
        if head is not None:
            info["lines"] = len(source.splitlines())
        else:
            info["outputs"] = copy.deepcopy(cell["outputs"])
        return info

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op, args = request["op"], request["args"]
        reply: dict[str, Any] = {"type": "notebook.reply", "request": request["request"]}
        reply["path"] = self.path
        try:
            reply.update(getattr(self, "op_" + op)(args))
        except LookupError as exc:
            reply["error"] = str(exc.args[0])
        return reply

    def op_outline(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"cells": [self._info(i, args["head_chars"]) for i in range(len(self.cells))]}

    def op_cell(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"cell": self._info(self._index(args["cell_id"]))}

    def _index(self, cell_id: str) -> int:
        i = self._find(cell_id)
        if i is None:
            raise LookupError(f"no cell has the id {cell_id!r} (read the outline again)")
        return i

    def op_edit(self, args: dict[str, Any]) -> dict[str, Any]:
        mode = args["mode"]
        if mode == "insert":
            if "after_id" in args:
                at = self._index(args["after_id"]) + 1
            else:
                at = min(args.get("index", len(self.cells)), len(self.cells))
            cell = {
                "id": uuid.uuid4().hex[:8],
                "cell_type": args["cell_type"],
                "source": args["source"],
                "execution_count": None,
                "outputs": [],
            }
            self.cells.insert(at, cell)
            return {"before": None, "after": self._info(at)}
        i = self._index(args["cell_id"])
        before = self._info(i)
        if mode == "delete":
            del self.cells[i]
            return {"before": before, "after": None}
        self.cells[i]["source"] = args["source"]
        self.cells[i]["cell_type"] = args.get("cell_type", self.cells[i]["cell_type"])
        return {"before": before, "after": self._info(i)}

    def op_restore(self, args: dict[str, Any]) -> dict[str, Any]:
        applied, conflicts, missing = [], [], []
        for step in args["steps"]:
            i = self._find(step["id"])
            if step["op"] == "insert":
                if i is not None:
                    conflicts.append(step["id"])
                    continue
                self.cells.insert(
                    min(step["index"], len(self.cells)),
                    {
                        "id": step["id"],
                        "cell_type": step["cell_type"],
                        "source": step["source"],
                        "execution_count": None,
                        "outputs": [],
                    },
                )
                applied.append(step["id"])
                continue
            if i is None:
                missing.append(step["id"])
                continue
            if self.cells[i]["source"] != step["expect"] and not args["force"]:
                conflicts.append(step["id"])
                continue
            if step["op"] == "delete":
                del self.cells[i]
            else:
                self.cells[i]["source"] = step["source"]
                self.cells[i]["cell_type"] = step["cell_type"]
            applied.append(step["id"])
        return {"applied": applied, "conflicts": conflicts, "missing": missing}

    def op_run(self, args: dict[str, Any]) -> dict[str, Any]:
        """The cells the agent asked to run: each still holding `expect` is recorded in `ran`
        (the extension executes it; here nothing runs), the others are conflicts or missing."""
        applied, conflicts, missing = [], [], []
        for want in args["cells"]:
            i = self._find(want["id"])
            if i is None:
                missing.append(want["id"])
            elif self.cells[i]["cell_type"] != "code" or self.cells[i]["source"] != want["expect"]:
                conflicts.append(want["id"])
            else:
                applied.append(want["id"])
        self.ran.extend(applied)
        return {"applied": applied, "conflicts": conflicts, "missing": missing}


class NotebookClient:
    """A frontend on a real kernel's `logician` comm that holds `notebook` and answers."""

    def __init__(self, kernel: Any, notebook: FakeNotebook, comm_id: str = "nb-1") -> None:
        self.k = kernel
        self.notebook = notebook
        self.comm_id = comm_id
        self.seen: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.answer: Any = notebook.answer
        """The answer to one request; None sends none (a test may close the comm instead)."""
        self.statuses: list[tuple[str, str]] = []
        """Every kernel status `run` saw: (the type of the message it is about, busy/idle)."""
        self._send("comm_open", {"comm_id": comm_id, "target_name": "logician", "data": {}})

    def _send(self, msg_type: str, content: dict[str, Any]) -> None:
        self.k.kc.shell_channel.send(self.k.kc.session.msg(msg_type, content))

    def send(self, data: dict[str, Any]) -> None:
        self._send("comm_msg", {"comm_id": self.comm_id, "data": {"v": 1, **data}})

    def attach(self) -> dict[str, Any]:
        self.send({"type": "notebook.attach", "path": self.notebook.path, "id": "attach"})
        return self.pump(until="notebook.attached")

    def close(self) -> None:
        self._send("comm_close", {"comm_id": self.comm_id, "data": {}})

    def _handle(self, m: dict[str, Any]) -> dict[str, Any] | None:
        if m["msg_type"] != "comm_msg" or m["content"]["comm_id"] != self.comm_id:
            return None
        data = m["content"]["data"]
        self.seen.append(data)
        if data.get("type") == "notebook.request":
            self.requests.append(data)
            reply = self.answer(data)
            if reply is not None:
                self.send(reply)
        return data

    def pump(self, until: str, timeout: float = 60) -> dict[str, Any]:
        """Answer requests until a message of type `until` arrives."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = self.k.kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            data = self._handle(m)
            if data is not None and data.get("type") == until:
                return data
        raise AssertionError(f"no {until!r}; saw {[d.get('type') for d in self.seen]}")

    def run(self, code: str, cell_id: str, timeout: float = 120) -> tuple[str, str]:
        """Run a cell, answering the kernel's requests meanwhile; (status, text printed)."""
        msg = self.k.kc.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
            metadata={"cellId": cell_id},
        )
        self.k.kc.shell_channel.send(msg)
        msg_id = msg["header"]["msg_id"]
        text: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = self.k.kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            if m["msg_type"] == "status":
                about = m["parent_header"].get("msg_type", "")
                self.statuses.append((about, m["content"]["execution_state"]))
            if self._handle(m) is not None:
                continue
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = m["msg_type"], m["content"]
            if kind == "stream":
                text.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                text.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                text.append(f"{content['ename']}: {content['evalue']}")
            if kind == "status" and content["execution_state"] == "idle":
                while True:
                    reply = self.k.kc.get_shell_msg(timeout=timeout)
                    if reply["parent_header"].get("msg_id") == msg_id:
                        return reply["content"]["status"], "".join(text)
        raise AssertionError(f"the cell did not finish in {timeout} s: {''.join(text)}")
