"""The front door of everything durable: `Workspace` - a workspace's `.logician/` state, its
threads, the frame bracket the kernel, `%load_ext` and scripts share, and the rewinds.

Uses everything durable below it; nothing below imports it, and it imports neither Jupyter nor
`tools/` (the process reaper is handed in). The names exported here are its surface for the
floors above (`agent/`, `jupyter/`)."""

from ..frames.file_checkpoints import RewindError
from ..ledger.thread_ledger import FrameOutcome
from ..types.rewind_scope import RewindMode, RewindPart, RewindScope
from .frame import CellFrame, OpenFrame, not_captured_line
from .open_thread import STATE_DIR, Reaper, thread_id_for
from .rewinds import FramePage, Preview
from .threads import VSCODE_NOTEBOOK, ThreadChoice, ThreadInfo, ThreadSource
from .workspace import RewindTarget, Workspace

__all__ = [
    "STATE_DIR",
    "VSCODE_NOTEBOOK",
    "CellFrame",
    "FrameOutcome",
    "FramePage",
    "OpenFrame",
    "Preview",
    "Reaper",
    "RewindError",
    "RewindMode",
    "RewindPart",
    "RewindScope",
    "RewindTarget",
    "ThreadChoice",
    "ThreadInfo",
    "ThreadSource",
    "Workspace",
    "not_captured_line",
    "thread_id_for",
]
