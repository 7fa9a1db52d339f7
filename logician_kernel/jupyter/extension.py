"""`%load_ext logician_kernel`: the magics and per-cell frames in any IPython.

For people who cannot switch kernels (a stock `python3` kernel in VS Code, Colab or a managed
hub, or the `ipython` terminal): the same `AgentSession` and magics as the Logician kernel,
with frames opened and closed by IPython's `pre_run_cell` / `post_run_cell` events instead of
the kernel's `do_execute`. `%unload_ext logician_kernel` removes every hook it added.

Must never: open a frame for a nested `run_cell` (the `python` tool's), leave a hook behind on
unload, or break a cell because capture failed.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent import AgentSession, reap_for_workspace
from ..agent.threads import follow_vscode
from ..workspace import VSCODE_NOTEBOOK, LogicianRuntime
from .kernel import is_management_cell
from .magics import LogicianMagics, protect_prompt_lines


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
    """Opens a frame before each top-level cell and closes it after, like the kernel's
    `do_execute`; the `python` tool's nested cells are part of the frame they run in."""

    def __init__(self, shell: Any, runtime: LogicianRuntime, magics: LogicianMagics) -> None:
        self.shell = shell
        self.runtime = runtime
        self.magics = magics
        self._depth = 0
        self._opened = False
        self._framed = False
        self._vscode_seen: object = None

    def pre(self, info: Any) -> None:
        self._depth += 1
        if self._depth > 1 or threading.current_thread() is not threading.main_thread():
            return
        self._opened = False
        kernel = getattr(self.shell, "kernel", None)
        # A terminal can always be asked; a kernel's cell only if its request allowed stdin.
        self.magics.agent.frontend_can_answer = (
            bool(getattr(kernel, "_allow_stdin", False)) if kernel is not None else True
        )
        named = self.shell.user_ns.get(VSCODE_NOTEBOOK)
        if named != self._vscode_seen:  # a stock kernel in VS Code: follow its notebook name
            self._vscode_seen = named
            said = follow_vscode(self.magics.session, self.shell.user_ns, framed=self._framed)
            if said:
                self.runtime.notice(said)
        self.runtime.flush_notices(sys.stderr)
        code = getattr(info, "raw_cell", "") or ""
        if getattr(info, "silent", False) or is_management_cell(code):
            return
        self.runtime.open_frame(
            execution_count=self.shell.execution_count,
            cell_id=getattr(info, "cell_id", None),
            code=code,
            stream=sys.stderr,
        )
        self._opened = self._framed = True

    def post(self, result: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth > 0:
            return
        if self._opened:
            self._opened = False
            self.runtime.close_frame(_outcome(result), sys.stderr)
        self.magics.after_cell()

    def close_open_frame(self) -> None:
        """On unload from inside a cell: the cell's frame ends here."""
        if self._opened:
            self._opened = False
            self.runtime.close_frame("ok", sys.stderr)


def _outcome(result: Any) -> str:
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    if error is None:
        return "ok"
    return "interrupted" if isinstance(error, KeyboardInterrupt) else "error"


def load(shell: Any) -> None:
    if id(shell) in _LOADED:
        print("Logician is already loaded in this IPython.", file=sys.stderr)
        return
    kernel = getattr(shell, "kernel", None)
    kernel_session = getattr(getattr(kernel, "session", None), "session", "") or ""
    runtime = LogicianRuntime.start(
        Path.cwd(), env=os.environ, kernel_session=str(kernel_session), reap=reap_for_workspace
    )
    agent = AgentSession(runtime)
    magics = LogicianMagics(shell, agent)
    shell.register_magics(magics)
    comm_manager = getattr(kernel, "comm_manager", None)
    if comm_manager is not None:
        magics.comms.register(comm_manager)
    shell.input_transformers_cleanup.append(protect_prompt_lines)
    hooks = _CellFrames(shell, runtime, magics)
    # The cell running `%load_ext` is under way: its post_run_cell is not one of ours.
    hooks._depth = 1
    shell.events.register("pre_run_cell", hooks.pre)
    shell.events.register("post_run_cell", hooks.post)
    _LOADED[id(shell)] = _Loaded(agent, magics, hooks, comm_manager)
    print(notice(shell, runtime.thread_id), file=sys.stderr)


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
    loaded.agent.close()
    print("Logician unloaded: cells are no longer frames.", file=sys.stderr)
