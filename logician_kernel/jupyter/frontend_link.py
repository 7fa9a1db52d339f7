"""The `logician` comm's handler and what answers it, built from the workspace alone.

JupyterLab's sidebar opens the comm as the page opens. What it asks then (`hello`, the
frames, the model picker's list, the status, the notices, a notebook attaching, the saves it
reports, a rewind from the dialog) needs the workspace, not the agent: the link answers it
without loading the `AgentSession` (the loop, the permission policy, the providers and httpx,
MCP), so a kernel a JupyterLab user opens holds what a plain cell needs plus this.

When the agent loads (the first `%%logician`, a command that needs it), `LogicianMagics`
adopts the link: the same comms, frame source, notebook bridge and approval broker (the
session is built on it, so an approval the agent asks is the one the sidebar lists), and the
status the frontends are sent gains the agent's own fields (`agent_status`).

Owns: the comm handler of a kernel, from the first frontend (or the agent's load) to the
kernel's end. Must never: import the agent's machinery, or answer differently from the
loaded magics for the same ledger (the status before any run is the same dictionary).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..agent import AuditLog
from ..agent.approvals import ApprovalBroker
from ..workspace import Workspace
from .comm import LogicianComms
from .config_view import ConfigView
from .model_picker import ModelPicker
from .notebook_bridge import NotebookBridge
from .progress_view import ProgressAnnouncer
from .rewind_source import LedgerRewindSource


class FrontendLink:
    """One kernel's `LogicianComms` with its sources: frames, notebook, models, config,
    progress and notices."""

    def __init__(self, workspace: Workspace, broker: ApprovalBroker | None = None) -> None:
        self.workspace = workspace
        self.broker = broker or ApprovalBroker()
        self.agent_status: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        """Set by the loaded magics: the status with the agent's fields added."""
        self.comms = LogicianComms(self.broker, self.status)
        self.frames = LedgerRewindSource(workspace, self.comms)
        self.comms.frames = self.frames
        self.comms.notebook = self.frames.notebook = NotebookBridge(self.comms, workspace)
        self.comms.models = ModelPicker(workspace, self.comms)
        self.comms.config = ConfigView(workspace, self.comms)
        self.progress = ProgressAnnouncer(self.comms, running=workspace.long_work)
        workspace.progress_listeners.append(self.progress)  # the sidebar's bar
        self.comms.opened_listeners.append(self.progress.replay)  # opened mid-work
        board = workspace.notices
        self.comms.notices = board
        board.listeners.append(self.comms.send_notice)
        board.read_listeners.append(lambda: self.comms.push_status(force=True))

    @property
    def notebook(self) -> NotebookBridge:
        bridge = self.comms.notebook
        assert bridge is not None  # set in __init__
        return bridge

    def status(self) -> dict[str, Any]:
        """The runtime status the lab extension shows (sidebar and status bar): the
        workspace's fields, and the agent's once it has loaded (before, those of an agent
        that has not run: idle, no turn, no tokens, no cost)."""
        workspace = self.workspace
        checkpoints = workspace.checkpoints_if_on
        status: dict[str, Any] = {
            "thread": workspace.thread_id,
            "phase": "rewinding" if self.progress.rewinding else "idle",
            "model": workspace.config.settings.model.name,
            "frames": len(checkpoints.active_frames()) if checkpoints is not None else 0,
            "running_cell": bool(checkpoints is not None and checkpoints.is_open),
            "turn": 0,
            "tool_calls": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": None,
            "budget": {},
            "pending_approvals": len(self.broker.pending()),
            "last_outcome": None,
            "audit_problems": AuditLog.for_workspace(workspace.config.workspace).problem_count(),
            "unread_notices": workspace.notices.unread_count(),
            "undo_refused": self.frames.undo_refused(),
            "mcp": [],
        }
        return self.agent_status(status) if self.agent_status is not None else status

    def after_cell(self) -> None:
        """After every cell: the frontends see the ledger as it is now."""
        checkpoints = self.workspace.checkpoints_if_on
        if checkpoints is not None:
            self.comms.notify("frames.changed", {"total": len(checkpoints.frames())})
        self.comms.push_status(force=True)
