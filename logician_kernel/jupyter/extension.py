"""`%load_ext logician_kernel`: the magics and per-cell frames in any IPython.

For people who cannot switch kernels (a stock `python3` kernel in VS Code, Colab or a managed
hub, or the `ipython` terminal): the same `AgentSession` and magics as the Logician kernel,
and the same frame bracket (`Workspace.frame`: files and variables), entered by IPython's
`pre_run_cell` event and left by `post_run_cell` instead of wrapping the kernel's
`do_execute`. `%unload_ext logician_kernel` removes every hook it added.

Must never: open a frame for a nested `run_cell` (the `python` tool's), leave a hook behind on
unload, or break a cell because capture failed.
"""

from __future__ import annotations

import os
import threading
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import IPython
from IPython.display import display

from ..agent import AgentSession, reap_for_workspace
from ..agent.threads import follow_vscode
from ..workspace import VSCODE_NOTEBOOK, FrameOutcome, OpenFrame, Workspace
from .call_buttons import CallButtons
from .kernel import StopBeforeRun, is_management_cell
from .magic_words import protect_prompt_lines
from .magics import LogicianMagics

COUNTED_BEFORE_PRE_RUN_CELL = IPython.version_info >= (9, 8)
"""IPython 9.8 made `run_cell` count the cell before `pre_run_cell` (so that cells can run
concurrently); before it, the count moved on after the cell. Either way a frame carries the
number the prompt shows (`In [n]`)."""


@dataclass
class _Loaded:
    """What `load` added to one shell, so that `unload` removes exactly that."""

    agent: AgentSession
    magics: LogicianMagics
    hooks: _CellFrames
    comm_manager: Any


_LOADED: dict[int, _Loaded] = {}


def notice(shell: Any, thread: str) -> str:
    """The one line that says what differs from the Logician kernel."""
    kernel = getattr(shell, "kernel", None)
    where = (
        "approvals come as a card where widgets render, else as an input() prompt when the "
        "cell may read stdin, else the headless policy decides"
        if kernel is not None
        else "approvals are asked at this terminal's prompt"
    )
    return (
        f"Logician loaded (thread {thread}): every cell is now a frame and %%logician runs the "
        f"agent. Unlike the Logician kernel, {where}, and frames start with the next cell; "
        "`%unload_ext logician_kernel` removes it."
    )


class _CellFrames:
    """Enters the workspace's frame bracket before each top-level cell and leaves it after,
    like the kernel's `do_execute`; the `python` tool's nested cells are part of the frame
    they run in (their code is noted for the variables' close)."""

    def __init__(self, shell: Any, workspace: Workspace, magics: LogicianMagics) -> None:
        self.shell = shell
        self.workspace = workspace
        self.magics = magics
        self._depth = 0
        self._open = ExitStack()
        """Holds the open cell's frame bracket between `pre` and `post`."""
        self._frame: OpenFrame | None = None
        self._stop: StopBeforeRun | None = None
        self._framed = False
        self._vscode_seen: object = None
        self.buttons = CallButtons(getattr(shell, "kernel", None), magics.frames)
        """The agent cells' *Rewind this call* controls, off while a cell runs."""

    def pre(self, info: Any) -> None:
        self._depth += 1
        code = getattr(info, "raw_cell", "") or ""
        if self._depth > 1:  # the `python` tool's cell, inside the frame of the cell running it
            self.workspace.note_code(code)
            return
        if threading.current_thread() is not threading.main_thread():
            return
        kernel = getattr(self.shell, "kernel", None)
        # A terminal can always be asked; a kernel's cell only if its request allowed stdin.
        self.magics.agent.frontend_can_answer = (
            bool(getattr(kernel, "_allow_stdin", False)) if kernel is not None else True
        )
        named = self.shell.user_ns.get(VSCODE_NOTEBOOK)
        if named != self._vscode_seen:  # a stock kernel in VS Code: follow its notebook name
            self._vscode_seen = named
            said = follow_vscode(
                self.workspace, self.shell.user_ns, framed=self._framed, session=self.magics.session
            )
            if said:
                self.workspace.notice(said)
        self.workspace.flush_notices()
        if getattr(info, "silent", False):
            return
        self.buttons.cell_started()
        if is_management_cell(code):
            return
        count = self.shell.execution_count
        if COUNTED_BEFORE_PRE_RUN_CELL and getattr(info, "store_history", True):
            count -= 1
        self._frame = self._open.enter_context(
            self.workspace.frame(count, getattr(info, "cell_id", None), code)
        )
        if self._frame.interrupted:  # the cell is compiled after this event: it stops first
            self._stop = StopBeforeRun(self.shell)
            self.shell.ast_transformers.append(self._stop)
        self._framed = True
        self.magics.comms.push_status(force=True)  # `running_cell`: the Lab's buttons turn off

    def post(self, result: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth > 0:
            return
        if self._stop is not None:  # unused if the cell never compiled (a syntax error)
            self._stop.remove()
            self._stop = None
        frame = self._frame.frame if self._frame is not None else None
        self.close_open_frame(_outcome(result))
        if threading.current_thread() is threading.main_thread():  # not a subshell's cell
            self.buttons.cell_ended(frame)  # the frame has closed: its calls' changes credited
        self.magics.after_cell()

    def close_open_frame(self, outcome: FrameOutcome = "ok") -> None:
        """The cell's frame ends here (after the cell, or on unload from inside it)."""
        if self._frame is not None:
            self._frame.outcome = outcome
            self._frame = None
            self._open.close()


def _outcome(result: Any) -> FrameOutcome:
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    if error is None:
        return "ok"
    return "interrupted" if isinstance(error, KeyboardInterrupt) else "error"


def load(shell: Any) -> None:
    if id(shell) in _LOADED:
        display({"text/plain": "Logician is already loaded in this IPython."}, raw=True)
        return
    kernel = getattr(shell, "kernel", None)
    kernel_session = getattr(getattr(kernel, "session", None), "session", "") or ""
    workspace = Workspace.open(
        Path.cwd(), os.environ, kernel_session=str(kernel_session), reap=reap_for_workspace
    )
    workspace.bind_namespace(shell.user_ns, getattr(shell, "user_ns_hidden", None))
    if kernel is not None:  # a notebook: `ui.notices` decides; a terminal prints them
        # No sidebar talks to a stock kernel: there `sidebar` means the cell (`off` still hides).
        workspace.notices.attach(kernel.log, sidebar=False)
    agent = AgentSession(workspace)
    magics = LogicianMagics(shell, agent)
    shell.register_magics(magics)
    comm_manager = getattr(kernel, "comm_manager", None)
    if comm_manager is not None:
        magics.comms.register(comm_manager)
    shell.input_transformers_cleanup.append(protect_prompt_lines)
    hooks = _CellFrames(shell, workspace, magics)
    # The cell running `%load_ext` is under way: its post_run_cell is not one of ours.
    hooks._depth = 1
    shell.events.register("pre_run_cell", hooks.pre)
    shell.events.register("post_run_cell", hooks.post)
    _LOADED[id(shell)] = _Loaded(agent, magics, hooks, comm_manager)
    # A display, not stderr: the Lab shows stderr in pink, like an error.
    display({"text/plain": notice(shell, workspace.thread_id)}, raw=True)


def unload(shell: Any) -> None:
    loaded = _LOADED.pop(id(shell), None)
    if loaded is None:
        return
    hooks = loaded.hooks
    shell.events.unregister("pre_run_cell", hooks.pre)
    shell.events.unregister("post_run_cell", hooks.post)
    if protect_prompt_lines in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(protect_prompt_lines)
    manager = shell.magics_manager
    manager.registry.pop(type(loaded.magics).__name__, None)
    for kind in ("line", "cell"):
        manager.magics[kind].pop("logician", None)
    if loaded.comm_manager is not None:
        loaded.comm_manager.unregister_target("logician", loaded.magics.comms._opened)
    hooks.close_open_frame()
    loaded.magics.notebook.close()
    loaded.agent.close()
    display({"text/plain": "Logician unloaded: cells are no longer frames."}, raw=True)
