"""The live notebook over the `logician` comm: the notebook tools' requests, and the cell part
of rewinds and undos.

A frontend that holds the kernel's notebook (the lab extension) sends `notebook.attach`; the
kernel then asks it with `notebook.request` and it answers with `notebook.reply`. The tools
ask from the run's worker thread and wait there (the reply arrives on the kernel's main thread
while the `%%logician` cell is awaited); no answer within `timeout` is a clear tool error.
After a rewind or an undo the cell part (recorded pending by the `Workspace`) is sent as one
`restore` request and settled when the frontend answers; with no frontend attached it stays
pending, is sent when one attaches, and `%logician rewind --skip-cells` gives it up.
The cells the agent asked to run (`notebook_run`) wait in `runs` (`cell_runs.py`) and go to
the frontend as one `run` request when the agent's cell ends (`end_cell`).

Must never: write the `.ipynb` on disk, or block the kernel's main thread waiting for a reply
(a reply arrives on that very thread).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from concurrent.futures import Future, InvalidStateError
from typing import Any

from ..workspace import CellEdit, CellRestore, ProjectionItem, Workspace
from . import cell_parts
from . import comm_messages as m
from .cell_runs import CellRunQueue, QueuedRun, settled_text
from .comm import LogicianComms

TIMEOUT_SECONDS = 30.0
"""How long a notebook tool waits for the frontend's answer."""
HEAD_CHARS = 400
"""Source characters of each cell an outline carries."""
OUTPUT_CHARS = 20_000
"""Characters of each text output the frontend sends for a cell read in full."""


class NotebookBridge:
    """The kernel's side of the notebook protocol, for one kernel."""

    def __init__(
        self, comms: LogicianComms, workspace: Workspace, *, timeout: float = TIMEOUT_SECONDS
    ) -> None:
        self.comms = comms
        self.workspace = workspace
        self.timeout = timeout
        self._lock = threading.Lock()
        self._attached: dict[str, str | None] = {}
        """comm id -> the notebook path it holds, in the order attached."""
        self._waiting: dict[str, tuple[str, Future[dict[str, Any]]]] = {}
        """request id -> (the comm asked, the asking tool's future)."""
        self._restores: dict[str, CellRestore] = {}
        """restore request id -> the cell part it carries."""
        self.runs = CellRunQueue()
        """The cells the agent's current cell asked to run."""
        self._run_requests: dict[str, list[QueuedRun]] = {}
        """run request id -> the runs it carries."""

    # -- the frontends ----------------------------------------------------------------------

    def attach(self, comm_id: str, path: str | None) -> int:
        """A frontend holds the notebook: the pending cell parts are sent to it now."""
        with self._lock:
            self._attached.pop(comm_id, None)
            self._attached[comm_id] = path
        pending = self.workspace.pending_cell_parts()
        for restore, edits in pending:
            self._send_restore(comm_id, restore, edits, force=False)
        if pending:
            self.workspace.notice(
                f"Logician: the notebook's frontend reconnected; taking back the cell part of "
                f"{len(pending)} rewind{'s' if len(pending) != 1 else ''} left pending."
            )
        return len(pending)

    def detach(self, comm_id: str) -> None:
        """The frontend went away (its notebook closed): a tool waiting on it fails now."""
        with self._lock:
            self._attached.pop(comm_id, None)
            gone = [f for asked, f in self._waiting.values() if asked == comm_id]
        for future in gone:
            _answer(future, {"error": CLOSED})

    def frontends(self) -> int:
        """How many frontends holding the notebook are attached (`%logician status`)."""
        with self._lock:
            return len(self._attached)

    @property
    def available(self) -> bool:
        """Whether a frontend holding the notebook is attached."""
        with self._lock:
            return bool(self._attached)

    def why_unavailable(self) -> str | None:
        """Why the notebook tools are not offered, or None when they are."""
        if self.available:
            return None
        return cell_parts.NO_FRONTEND

    def _target(self, edits: bool) -> tuple[str | None, str]:
        with self._lock:
            attached = list(self._attached)
        if not attached:
            return None, f"the notebook tools are unavailable: {self.why_unavailable()}"
        if edits and len(attached) > 1:
            return None, (
                f"{len(attached)} frontends hold this notebook (two browser tabs or clients); "
                "close all but one before the agent edits cells - nothing was changed"
            )
        return attached[-1], ""

    # -- the tools' side (called on the run's worker loop) ----------------------------------

    async def ask(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        """Ask the frontend; the reply as a dict, or `{"error": ...}` saying why not."""
        comm_id, why = self._target(edits=op == "edit")
        if comm_id is None:
            return {"error": why}
        request = uuid.uuid4().hex
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._waiting[request] = (comm_id, future)
        if op == "outline":
            args = {**args, "head_chars": HEAD_CHARS}
        elif op == "cell":
            args = {**args, "output_chars": OUTPUT_CHARS}
        try:
            if not self.comms.send_to(
                comm_id, "notebook.request", {"request": request, "op": op, "args": args}
            ):
                return {"error": "the notebook's frontend went away before it was asked"}
            try:
                reply = await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
            except TimeoutError:
                return {
                    "error": f"the notebook's frontend did not answer within {self.timeout:g} s "
                    "(is the notebook still open?); an edit may or may not have been made"
                }
        finally:
            with self._lock:
                self._waiting.pop(request, None)
        if op == "edit" and not reply.get("error"):
            self.runs.edited(reply.get("before"), reply.get("after"))
        return reply

    def queue_run(self, cell_id: str, source: str, cell_type: str, call_id: str | None) -> int:
        """`notebook_run`: queue the cell to run after the agent's cell; its place in the
        queue. `RunRefused` (a `ValueError`) says why not."""
        return self.runs.queue(cell_id, source, cell_type, call_id)

    def begin_cell(self, cell_id: str | None) -> None:
        """A cell starts executing (the kernel's frame opens)."""
        self.runs.begin(cell_id)
        self._say_runs()

    def end_cell(self, outcome: str) -> int:
        """The cell ended: the runs it queued go to the frontend (when it ended `ok`), as one
        `run` request the frontend answers with the cells it started; how many were sent."""
        comm_id, why = self._target(edits=True)
        runs = self.runs.take(outcome, unavailable="" if comm_id is not None else why)
        self._say_runs()
        if not runs or comm_id is None:
            return 0
        request = uuid.uuid4().hex
        with self._lock:
            self._run_requests[request] = runs
        cells = [{"id": r.cell_id, "expect": r.expect} for r in runs]
        if not self.comms.send_to(
            comm_id, "notebook.request", {"request": request, "op": "run", "args": {"cells": cells}}
        ):
            with self._lock:
                self._run_requests.pop(request, None)
            self.workspace.notice(
                "Logician: the agent's queued runs were not sent: the notebook's frontend went away."
            )
            return 0
        return len(runs)

    def _say_runs(self) -> None:
        for text in self.runs.take_notices():
            self.workspace.notice(text)

    def received(self, reply: m.NotebookReply) -> bool:
        """A `notebook.reply` arrived (on the kernel's main thread)."""
        data = reply.model_dump(mode="json", exclude={"v", "id", "type"})
        with self._lock:
            waiting = self._waiting.pop(reply.request, None)
            restore = self._restores.pop(reply.request, None)
            runs = self._run_requests.pop(reply.request, None)
        if runs is not None:
            if reply.error:
                self.workspace.notice(
                    f"Logician: the agent's queued runs did not start: {reply.error}."
                )
            else:
                text = settled_text(list(reply.applied), list(reply.conflicts), list(reply.missing))
                if text:
                    self.workspace.notice(text)
            return True
        if restore is not None:
            self._settled(restore, reply)
            return True
        return waiting is not None and _answer(waiting[1], data)

    def malformed(self, request: Any, why: str) -> None:
        """A `notebook.reply` that broke the schema: its tool fails with the reason now."""
        with self._lock:
            waiting = self._waiting.pop(request, None) if isinstance(request, str) else None
        if waiting is not None:
            _answer(waiting[1], {"error": f"the notebook's frontend answered malformed ({why})"})

    # -- rewinds and undos ------------------------------------------------------------------

    def after(self, item: ProjectionItem, *, force: bool = False) -> None:
        """A rewind or an undo happened: send its cell part, or keep it pending (said)."""
        part = cell_parts.record(self.workspace, item)
        if part is None:
            return
        restore, edits = part
        comm_id, why = self._target(edits=True)
        if comm_id is None:
            cell_parts.say_waiting(self.workspace, edits, why)
            return
        self._send_restore(comm_id, restore, edits, force=force)

    def skip_pending(self) -> int:
        """`--skip-cells`: give up every pending cell part; how many there were."""
        pending = self.workspace.pending_cell_parts()
        for restore, _ in pending:
            self.workspace.settle_cell_part(restore, "skipped")
        with self._lock:
            self._restores.clear()
        return len(pending)

    def _send_restore(
        self, comm_id: str, restore: CellRestore, edits: list[CellEdit], *, force: bool
    ) -> None:
        request = uuid.uuid4().hex
        with self._lock:
            self._restores[request] = restore
        args = {"steps": restore_steps(edits, restore.direction), "force": force}
        if not self.comms.send_to(
            comm_id, "notebook.request", {"request": request, "op": "restore", "args": args}
        ):
            with self._lock:
                self._restores.pop(request, None)

    def _settled(self, restore: CellRestore, reply: m.NotebookReply) -> None:
        what = "rewind" if restore.direction == "rewind" else "undo"
        if reply.error:
            self.workspace.notice(
                f"Logician: the notebook could not take the cell part of the {what}: "
                f"{reply.error}; it stays pending (`%logician rewind --skip-cells` gives it up)."
            )
            return
        self.workspace.settle_cell_part(
            restore, "applied", conflicts=list(reply.conflicts), missing=list(reply.missing)
        )
        text = f"Logician: {what} of the agent's cell edits: {len(reply.applied)} cell(s) changed"
        if reply.conflicts:
            text += (
                f"; left alone, edited by you since the agent did (conflicts): "
                f"{', '.join(reply.conflicts)}"
            )
        if reply.missing:
            text += f"; no longer in the notebook: {', '.join(reply.missing)}"
        self.workspace.notice(text + ".")


CLOSED = (
    "the notebook was closed before it answered; an edit may or may not have been made "
    "(read the outline when it is open again)"
)


def _answer(future: Future[dict[str, Any]], data: dict[str, Any]) -> bool:
    """Resolve a waiting tool's future once; False when it was resolved already."""
    try:
        future.set_result(data)
    except InvalidStateError:  # the frontend answered as it went away: the first one counts
        return False
    return True


def restore_steps(edits: list[CellEdit], direction: str) -> list[dict[str, Any]]:
    """The frontend's steps that take `edits` back (`rewind`, newest first) or make them
    again (`undo`, oldest first). Each step names its cell by id and, where the cell must
    still hold what the agent left, `expect`s that source."""
    steps: list[dict[str, Any]] = []
    for edit in edits:
        before, after = edit.before, edit.after
        if direction == "undo":
            before, after = after, before  # making the edit again is taking back its inverse
        if before is None and after is not None:  # the cell was inserted: remove it
            steps.append({"op": "delete", "id": after.id, "expect": after.source})
        elif after is None and before is not None:  # the cell was deleted: put it back
            steps.append(
                {
                    "op": "insert",
                    "id": before.id,
                    "index": before.index,
                    "source": before.source,
                    "cell_type": before.cell_type,
                }
            )
        elif before is not None and after is not None:
            steps.append(
                {
                    "op": "replace",
                    "id": after.id,
                    "expect": after.source,
                    "source": before.source,
                    "cell_type": before.cell_type,
                }
            )
    return steps
