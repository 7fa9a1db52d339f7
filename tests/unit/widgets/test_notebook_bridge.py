"""The kernel's side of the notebook protocol without a kernel: what a waiting tool is told
(an answer, no frontend, a notebook closed, a malformed answer), and the steps that take the
agent's cell edits back or make them again."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from logician_kernel.jupyter import comm_messages as m
from logician_kernel.jupyter.notebook_bridge import NotebookBridge, restore_steps
from logician_kernel.ledger import CellEdit


class Comms:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    def send_to(self, comm_id: str, kind: str, payload: dict[str, Any]) -> bool:
        self.sent.append((comm_id, kind, payload))
        return True


class Workspace:
    def __init__(self) -> None:
        self.notices: list[str] = []

    def pending_cell_parts(self) -> list[Any]:
        return []

    def notice(self, text: str) -> None:
        self.notices.append(text)


def bridge() -> tuple[NotebookBridge, Comms]:
    comms = Comms()
    return NotebookBridge(comms, Workspace(), timeout=60), comms  # type: ignore[arg-type]


def asking(b: NotebookBridge, comms: Comms, op: str) -> tuple[dict[str, Any], str]:
    """Start `ask` on a thread of its own (as the run's worker loop does); the request id."""
    out: dict[str, Any] = {}
    before = len(comms.sent)
    thread = threading.Thread(target=lambda: out.update(asyncio.run(b.ask(op, {}))))
    thread.start()
    deadline = time.monotonic() + 10
    while len(comms.sent) == before and time.monotonic() < deadline:
        time.sleep(0.01)
    request = comms.sent[-1][2]["request"]
    out["_thread"] = thread
    return out, request


def done(out: dict[str, Any]) -> dict[str, Any]:
    out.pop("_thread").join(10)
    return out


def test_without_a_frontend_the_answer_says_why_and_nothing_is_sent() -> None:
    b, comms = bridge()
    assert "no frontend holding this notebook" in asyncio.run(b.ask("outline", {}))["error"]
    assert comms.sent == [] and not b.available


def test_a_reply_reaches_the_waiting_tool() -> None:
    b, comms = bridge()
    b.attach("c1", "nb.ipynb")
    out, request = asking(b, comms, "outline")
    assert comms.sent[-1][:2] == ("c1", "notebook.request")
    assert comms.sent[-1][2]["args"] == {"head_chars": 400}
    reply = m.FRONTEND.validate_python(
        {"v": 1, "type": "notebook.reply", "request": request, "path": "nb.ipynb", "cells": []}
    )
    assert b.received(reply)
    assert done(out)["cells"] == [] and not b.received(reply)  # answered once


def test_a_closed_notebook_and_a_malformed_answer_fail_the_tool_at_once() -> None:
    b, comms = bridge()
    b.attach("c1", "nb.ipynb")
    out, _ = asking(b, comms, "outline")
    b.detach("c1")
    assert "the notebook was closed before it answered" in done(out)["error"]
    b.attach("c2", "nb.ipynb")
    out, request = asking(b, comms, "cell")
    b.malformed(request, "cells.0.index must be an integer")
    assert "malformed (cells.0.index must be an integer)" in done(out)["error"]


def _edit(mode: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> CellEdit:
    return CellEdit(
        seq=1,
        parent=None,
        time="t",
        frame=1,
        call_id="c",
        notebook="nb.ipynb",
        mode=mode,
        before=before,
        after=after,  # type: ignore[arg-type]
    )


def test_the_steps_take_each_kind_of_edit_back_and_make_it_again() -> None:
    old = {"id": "a", "cell_type": "code", "source": "x", "index": 2}
    new = {"id": "a", "cell_type": "markdown", "source": "# x", "index": 2}
    edits = [_edit("insert", None, new), _edit("replace", old, new), _edit("delete", old, None)]
    assert restore_steps(edits, "rewind") == [
        {"op": "delete", "id": "a", "expect": "# x"},
        {"op": "replace", "id": "a", "expect": "# x", "source": "x", "cell_type": "code"},
        {"op": "insert", "id": "a", "index": 2, "source": "x", "cell_type": "code"},
    ]
    assert restore_steps(edits, "undo") == [
        {"op": "insert", "id": "a", "index": 2, "source": "# x", "cell_type": "markdown"},
        {"op": "replace", "id": "a", "expect": "x", "source": "# x", "cell_type": "markdown"},
        {"op": "delete", "id": "a", "expect": "x"},
    ]
