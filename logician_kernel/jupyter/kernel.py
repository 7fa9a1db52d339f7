"""LogicianKernel: ipykernel's IPythonKernel, with every executed cell a checkpoint frame.

Everything ipykernel does is inherited unchanged; `do_execute` brackets the inherited
execution with `Workspace.frame` (files and variables: pre-snapshot, run, post-snapshot,
diff, durable close), the bracket `%load_ext` and scripts use too. Cells made
only of `%logician` management commands are not frames, so `rewind --last` always means the
last cell that did work. Silent executions (widgets' and frontends' background requests) and
executions on subshells are never frames.

Logician's notices (a thread reopened, variables not captured, ...) go through the workspace's
`NoticeBoard`: to the `logician` comm, the kernel log and `%logician notices`, into a cell's
output only under `ui.notices = "cell"`.

Must never: change what a plain Python notebook sees (reply content, outputs, errors), or let
a capture failure break the user's cell.
"""

from __future__ import annotations

import ast
import os
import threading
from pathlib import Path
from typing import Any

from ipykernel.ipkernel import IPythonKernel
from ipykernel.zmqshell import ZMQInteractiveShell
from traitlets import Type

from .._version import __version__
from ..agent import reap_for_workspace
from ..workspace import (
    VSCODE_NOTEBOOK,
    FrameOutcome,
    Workspace,
    enter,
    found_at_this_start,
    starting_directory,
    workspace_notice,
)
from .kernel_parts import KernelParts
from .launcher import place_history
from .magic_words import is_management_cell, protect_prompt_lines

LOGICIAN_BANNER = (
    "Logician Kernel " + __version__ + " - Python with rewindable cells.\n"
    "%logician frames | diff N | rewind N | rewind --last | config | help\n"
)
"""Appended to IPython's banner (what ipykernel reports), so a console says which kernel it is."""


class LogicianShell(ZMQInteractiveShell):
    """ipykernel's shell, with per-cell error state reset for awaited cells too.

    `ZMQInteractiveShell.run_cell` clears the last traceback before a cell; `run_cell_async`
    (which `%%logician` cells take) did not, so an awaited cell whose first error is a short
    usage error made the execute reply fail. Reset it on both paths.
    """

    async def run_cell_async(self, *args: Any, **kwargs: Any) -> Any:
        self._last_traceback = None
        self._last_traceback_during_displayhook = False
        return await super().run_cell_async(*args, **kwargs)


class LogicianKernel(IPythonKernel):
    """A drop-in IPython kernel whose cells are checkpoint frames."""

    shell_class = Type(LogicianShell)

    # `implementation`, `implementation_version`, `language_info` and `help_links` are
    # ipykernel's (IPython's identity): clients branch on them (docs/drop-in.md). Ours is in
    # the banner and in `logician_version`, which the lab extension looks for.

    @property
    def banner(self) -> str:  # type: ignore[override]
        return (self.shell.banner if self.shell else "") + LOGICIAN_BANNER

    @property
    def kernel_info(self) -> dict[str, Any]:
        return {**super().kernel_info, "logician_version": __version__}

    def __init__(self, **kwargs: Any) -> None:
        app = kwargs.get("parent")
        if app is not None:  # before the shell (and its history database) exists
            place_history(app.config, app.log)
        super().__init__(**kwargs)
        self._executions = 0
        kernel_session = getattr(self.session, "session", "") if self.session else ""
        # A gateway starts us in its own directory; KERNEL_WORKING_DIR names the notebook's.
        start = starting_directory(os.environ, Path.cwd())
        moved = enter(start)
        self.logician = Workspace.open(
            start.path,
            os.environ,
            kernel_session=str(kernel_session),
            reap=reap_for_workspace,
            launch=start,
        )
        # Notices go where `ui.notices` says (the sidebar by default, never a plain cell's
        # outputs), and every one to this kernel's log (the process's real stderr).
        self.logician.notices.attach(self.log)
        config = self.logician.config
        where = workspace_notice(config.workspace, start, config.settings.workspace.root)
        for text in (start.notice, moved, where):
            if text:
                self.logician.notice(text)
        assert self.shell is not None
        # The agent, the magics' implementation, the comm handler: loaded on first use
        self.parts = KernelParts(self, self.logician)
        self.shell.input_transformers_cleanup.append(protect_prompt_lines)
        self._framed = False
        self._vscode_seen: object = None
        self.logician.bind_namespace(self.shell.user_ns, self.shell.user_ns_hidden)
        # Every cell run inside a frame (an agent's `python` tool calls too) names the
        # variables it may have mutated: they are the ones hashed at the frame's close.
        self.shell.events.register("pre_run_cell", self._note_code)

    def _note_code(self, info: Any) -> None:
        self.logician.note_code(info.raw_cell or "")

    async def do_execute(  # type: ignore[override]
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
        *,
        cell_meta: dict[str, Any] | None = None,
        cell_id: str | None = None,
    ) -> dict[str, Any]:
        run = super().do_execute(
            code,
            silent,
            store_history,
            user_expressions,
            allow_stdin,
            cell_meta=cell_meta,
            cell_id=cell_id,
        )
        workspace = self.logician
        if silent or threading.current_thread() is not threading.main_thread():
            return await run
        self._executions += 1
        parts = self.parts
        parts.set_frontend_can_answer(allow_stdin)
        assert self.shell is not None
        named = self.shell.user_ns.get(VSCODE_NOTEBOOK)
        if named != self._vscode_seen:  # VS Code binds it after start; looked at once per value
            self._vscode_seen = named
            if isinstance(named, str) and named.strip():
                from ..agent.threads import follow_vscode

                said = follow_vscode(
                    workspace, self.shell.user_ns, framed=self._framed, session=parts.session
                )
                if said:
                    workspace.notice(said)
        workspace.flush_notices()
        if self._executions == 1 and workspace.notices.in_cells and _restorable(workspace):
            # The restart notice's "Rewind this call", where widgets render; elsewhere the
            # notice names `%logician rewind --call ID`. Only then does the agent load.
            from . import call_rewind

            call_rewind.offer(parts.agent, parts.load().frames)
        bridge = parts.bridge
        if bridge is not None:
            bridge.begin_cell(cell_id)
        if parts.buttons is not None:  # the in-cell Rewind this call buttons: off meanwhile
            parts.buttons.cell_started()
        if is_management_cell(code):
            try:
                reply = await run
            finally:
                self._buttons_ended(None)
            bridge = parts.bridge  # the cell may have loaded the parts
            if bridge is not None:
                self._after_cell("the agent's queued runs", bridge.end_cell, _outcome(reply))
            return reply
        self._framed = True
        # In [n] as the user sees it; a frontend that runs cells without storing history
        # (nbval) has no prompt numbers, so there the n-th execution of this kernel stands in.
        count = self.shell.execution_count if store_history else self._executions
        stop = StopBeforeRun(self.shell)
        outcome: FrameOutcome = "error"
        opened: int | None = None
        try:
            with workspace.frame(count, cell_id, code) as frame:
                opened = frame.frame
                # `running_cell`: the Lab turns its Rewind this call buttons off meanwhile
                parts.push_status()
                if frame.interrupted:  # the interrupt came while the frame opened
                    self.shell.ast_transformers.append(stop)
                reply = await run
                frame.outcome = outcome = _outcome(reply)
        finally:
            stop.remove()
            # the frame has closed: its calls' changes are attributed, their buttons can show
            self._buttons_ended(opened)
            self._after_cell("the sidebar's update", parts.after_cell)
            # The cells the agent asked to run go to the frontend now, after this cell's
            # frame closed: each runs as its own cell, its own frame.
            bridge = parts.bridge  # the cell may have loaded the parts
            if bridge is not None:
                self._after_cell("the agent's queued runs", bridge.end_cell, outcome)
        return reply

    def _buttons_ended(self, frame: int | None) -> None:
        buttons = self.parts.buttons
        if buttons is not None:
            self._after_cell("the Rewind this call controls", buttons.cell_ended, frame)

    def _after_cell(self, what: str, step: Any, *args: Any) -> None:
        """One step after a cell's frame closed. A failure is logged and said, never raised:
        an exception here would leave the cell without its execute reply, and a frontend
        (nbclient, `logician run`) waiting for it until its timeout."""
        try:
            step(*args)
        except Exception as exc:  # noqa: BLE001 - the reply must go out whatever failed here
            self.log.exception("Logician: %s failed after the cell", what)
            self.logician.notice(f"Logician: {what} failed after the cell: {exc}")

    def do_shutdown(self, restart: bool) -> dict[str, Any]:  # type: ignore[override]
        self.parts.close()  # the MCP servers stop with the kernel, then the workspace closes
        return super().do_shutdown(restart)


class StopBeforeRun(ast.NodeTransformer):
    """One cell's AST transformer: the cell raises KeyboardInterrupt before its first
    statement, as it would have had the interrupt not been held while its frame opened; its
    history, prompt number and reply stay what ipykernel makes of an interrupted cell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def visit_Module(self, node: ast.Module) -> ast.Module:
        self.remove()
        stop = ast.Raise(exc=ast.Name(id="KeyboardInterrupt", ctx=ast.Load()), cause=None)
        node.body = [ast.copy_location(stop, node.body[0]) if node.body else stop]
        return ast.fix_missing_locations(node)

    def remove(self) -> None:
        if self in self.shell.ast_transformers:
            self.shell.ast_transformers.remove(self)


def _restorable(workspace: Workspace) -> bool:
    """Whether this kernel's start found calls a dead kernel cut off that can be rewound (the
    first cell offers them), read from the ledger without loading the agent."""
    ledger = workspace.ledger
    return ledger is not None and bool(found_at_this_start(ledger))


def _outcome(reply: dict[str, Any]) -> FrameOutcome:
    if reply.get("status") == "ok":
        return "ok"
    if reply.get("ename") == "KeyboardInterrupt" or reply.get("status") == "aborted":
        return "interrupted"
    return "error"
