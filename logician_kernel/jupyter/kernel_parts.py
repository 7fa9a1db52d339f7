"""The kernel's Logician parts that load on first use, so it starts and idles like ipykernel.

At start the kernel opens its `Workspace` (frames need it from the first cell), records cells
for the notebook context (`NotebookContext`, so `%logician fix` knows an error made before
any `%logician`), registers the `%logician` / `%%logician` names (`LogicianStartMagics`) and
the `logician` comm target. The frame commands (`frames`, `diff`, `vars`, `storage`, `gc`,
`rewind`, `undo`) need only the workspace and run without loading anything more
(`run_light`, `frame_light.py`). Everything else loads on the first of: another `%logician` line or
`%%logician` cell, a restart notice's *Rewind this call* under `ui.notices = "cell"`, or
configured MCP servers (they connect from start, as before). A frontend opening the
`logician` comm (the lab extension's sidebar) gets the comm handler built from the workspace
alone (`link`, `frontend_link.py`), which the agent adopts when it loads; VS Code naming its
notebook moves the workspace to its thread without loading the agent. Loading builds the
`AgentSession` (the loop, the providers and httpx, the permission policy, MCP), the magics'
implementation adopting the link (built then when no frontend opened the comm), the in-cell
call controls and ipywidgets.

Owns: when the parts load, and the kernel's view of them before (`loaded`, `session`,
`buttons`, `bridge`). Must never: load them on the path of a plain cell, or lose what happened before
they loaded (the cells recorded, the notices said: the board keeps them for the comm).
"""

from __future__ import annotations

import shlex
import sys
import threading
from typing import TYPE_CHECKING, Any

from IPython.core.magic import Magics, line_cell_magic, magics_class

from .magic_words import FRAME_COMMANDS, FRAME_OPTIONS_THAT_LOAD, MANAGEMENT_COMMANDS, classify
from .notebook_context import NotebookContext

if TYPE_CHECKING:
    from ..agent import AgentSession
    from ..config import LogicianSettings
    from ..workspace import Workspace
    from .call_buttons import CallButtons
    from .frontend_link import FrontendLink
    from .magics import LogicianMagics
    from .notebook_bridge import NotebookBridge

TARGET = "logician"
"""The comm target (`comm.TARGET`; the lab extension opens it)."""
WIDGET_CONTROL = "jupyter.widget.control"
"""ipywidgets' control comm (`answer.WIDGET_CONTROL_TARGET`): a widget-rendering frontend
opens it when it connects."""
CONTROL_PROTOCOL_MAJOR = "1"
"""The widget control protocol's major version ipywidgets 8 speaks
(`ipywidgets._version.__control_protocol_version__`; a test compares them)."""


class KernelParts:
    """The agent, the magics and the comm handler of one kernel, built on first use."""

    def __init__(self, kernel: Any, workspace: Workspace) -> None:
        self._kernel = kernel
        self.workspace = workspace
        self.frontend_can_answer = False
        """Whether the last execute request allowed stdin (handed to the agent's cell)."""
        self._magics: LogicianMagics | None = None
        self._buttons: CallButtons | None = None
        self._link: FrontendLink | None = None
        self._building = threading.RLock()
        """Held while the link or the parts are built: a sidebar's `comm_open` arrives on a
        subshell's thread, perhaps while a cell's `%logician` loads them on the main one."""
        shell = kernel.shell
        self.notebook = NotebookContext(shell, self)
        shell.register_magics(LogicianStartMagics(shell=shell, parts=self))
        kernel.comm_manager.register_target(TARGET, self._comm_opened)
        kernel.comm_manager.register_target(WIDGET_CONTROL, self._widget_control_opened)
        if _has_mcp_servers(workspace):  # they connect in the background from start
            self.load()

    # -- the session-like view the notebook context reads (notebook_context.Session) ---------

    @property
    def settings(self) -> LogicianSettings:
        return self.workspace.config.settings

    def secrets(self) -> tuple[str, ...]:
        return self.agent.secrets()

    # -- loading ----------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._magics is not None

    @property
    def agent(self) -> AgentSession:
        return self.load().session

    @property
    def session(self) -> AgentSession | None:
        """The agent's session when loaded; None before (nothing loaded for asking)."""
        return self._magics.session if self._magics is not None else None

    @property
    def buttons(self) -> CallButtons | None:
        """The in-cell *Rewind this call* controls; None until loaded (no call made yet)."""
        return self._buttons

    @property
    def bridge(self) -> NotebookBridge | None:
        """The notebook protocol's bridge; None until a frontend opened the comm or the agent
        loaded (no frontend can have attached before)."""
        return self._link.notebook if self._link is not None else None

    def link(self) -> FrontendLink:
        """The comm handler and its sources (`frontend_link.py`), built on the first call,
        without the agent; then the same object. Takes the `logician` comm target."""
        with self._building:
            if self._link is None:
                from .frontend_link import FrontendLink

                link = FrontendLink(self.workspace)
                link.comms.register(self._kernel.comm_manager)
                self._link = link
            return self._link

    def load(self) -> LogicianMagics:
        """The magics, built (with the agent, the comm handler and the call controls) on the
        first call; then the same object."""
        with self._building:
            if self._magics is not None:
                return self._magics
            import ipywidgets

            from ..agent import AgentSession
            from .call_buttons import CallButtons
            from .magics import LogicianMagics

            kernel, shell = self._kernel, self._kernel.shell
            link = self.link()
            magics = LogicianMagics(
                shell=shell,
                agent=AgentSession(self.workspace, broker=link.broker),
                notebook=self.notebook,
                link=link,
            )
            magics.agent.frontend_can_answer = self.frontend_can_answer
            shell.register_magics(magics)  # replaces the start magics' `logician`
            self._buttons = CallButtons(kernel, magics.frames)
            # Imported by an earlier module before the shell existed, ipywidgets could not
            # register its comm targets then; registering again is harmless.
            ipywidgets.register_comm_target()
            self._magics = magics
            return magics

    def run_light(self, line: str) -> bool:
        """Run `%logician LINE` without loading anything when it is a frame command
        (`magic_words.FRAME_COMMANDS`, by `frame_light.FrameLight`); False (nothing run)
        for any other line, which the loaded magics take."""
        if not line.strip() or classify(line, MANAGEMENT_COMMANDS)[0] != "command":
            return False
        try:
            argv = shlex.split(line)
        except ValueError:
            return False  # the loaded magics say why
        if argv[0] not in FRAME_COMMANDS or any(
            a.startswith(FRAME_OPTIONS_THAT_LOAD) for a in argv[1:]
        ):
            return False
        from .frame_light import FrameLight

        FrameLight(self.workspace, self._link).run(argv[0], argv[1:])
        return True

    def _comm_opened(self, comm: Any, open_msg: dict[str, Any]) -> None:
        """The first `logician` comm: the link is built (not the agent) and takes it, and
        the comms that follow (`link` registered its handler)."""
        self.link().comms._opened(comm, open_msg)

    def _widget_control_opened(self, comm: Any, open_msg: dict[str, Any]) -> None:
        """A widget-rendering frontend connected (JupyterLab's widget manager opens this comm
        as the page opens, sends `request_states` and closes it): the comm stays registered,
        so approvals know to show as cards (`answer.widgets_render`). While ipywidgets is not
        imported no widget can exist, and the answer is the empty state, without importing
        it; once it is (the agent loaded, or a cell used widgets), ipywidgets answers, as it
        does for every control comm opened after it registered its own target."""
        version = str(open_msg.get("metadata", {}).get("version", ""))
        if "ipywidgets" in sys.modules or version.split(".")[0] != CONTROL_PROTOCOL_MAJOR:
            self._widgets_answer(comm, open_msg, opened=True)  # theirs, or their error
            return
        comm.on_msg(lambda msg: self._widget_control_message(comm, msg))

    def _widget_control_message(self, comm: Any, msg: dict[str, Any]) -> None:
        if "ipywidgets" in sys.modules:
            self._widgets_answer(comm, msg, opened=False)
            return
        method = msg.get("content", {}).get("data", {}).get("method")
        if method != "request_states":  # as ipywidgets says it
            raise RuntimeError(
                f"Unknown front-end to back-end widget control msg with method {method!r}"
            )
        comm.send({"method": "update_states", "states": {}, "buffer_paths": []})

    @staticmethod
    def _widgets_answer(comm: Any, msg: dict[str, Any], *, opened: bool) -> None:
        import ipywidgets
        from ipywidgets.widgets.widget import Widget

        ipywidgets.register_comm_target()
        if opened:
            Widget.handle_control_comm_opened(comm, msg)
        else:  # a comm we answered before ipywidgets loaded: it takes it from here
            Widget._control_comm = comm
            comm.on_msg(Widget._handle_control_comm_msg)
            Widget._handle_control_comm_msg(msg)

    # -- the kernel's steps, each a no-op until loaded ------------------------------------

    def set_frontend_can_answer(self, allowed: bool) -> None:
        self.frontend_can_answer = allowed
        if self._magics is not None:
            self._magics.agent.frontend_can_answer = allowed

    def push_status(self) -> None:
        if self._link is not None:
            self._link.comms.push_status(force=True)

    def after_cell(self) -> None:
        if self._magics is not None:
            self._magics.after_cell()
        elif self._link is not None:
            self._link.after_cell()

    def close(self) -> None:
        """The MCP servers stop (when loaded), then the workspace closes."""
        if self._magics is not None:
            self._magics.session.close()
        else:
            self.workspace.close()


@magics_class
class LogicianStartMagics(Magics):
    """`%logician` and `%%logician` as registered at start: the first call loads the
    implementation (`KernelParts.load`, which registers `LogicianMagics` over this one)."""

    def __init__(self, shell: Any, parts: KernelParts) -> None:
        super().__init__(shell=shell)
        self._parts = parts

    def load(self) -> LogicianMagics:
        return self._parts.load()

    @property
    def workspace(self) -> Workspace:
        """The kernel's workspace, as on the loaded magics (nothing loads)."""
        return self._parts.workspace

    @property
    def frames(self) -> Any:
        """The frames' rewind source (`LedgerRewindSource`), as on the loaded magics: the
        frontend link's, built (without the agent) if no frontend opened the comm yet."""
        return self._parts.link().frames

    @line_cell_magic
    def logician(self, line: str, cell: str | None = None) -> None:
        """Logician: `%%logician [--max-turns N]` + a prompt runs the agent; `%logician
        <prompt>` is the one-line form; `%logician frames|diff|rewind|config|trust|clear|help`
        manage the session."""
        if cell is None and not self._parts.loaded and self._parts.run_light(line):
            return
        magics: Any = self.load()  # IPython's decorator hides the method's type
        magics.logician(line, cell)


def _has_mcp_servers(workspace: Workspace) -> bool:
    return any(s.enabled for s in workspace.config.settings.mcp.servers.values())
