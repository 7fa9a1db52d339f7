"""The front door of everything durable: `Workspace` - a workspace's `.logician/` state, its
threads, the frame bracket the kernel, `%load_ext` and scripts share, and the rewinds.

Uses everything durable below it (`frames/`, `snapshots/`, `ledger/`, `durable/`) and
`config/`; nothing below imports it, and it never imports `tools/` (the process reaper is
handed in), a run or a UI. `__all__` is its own API plus what `jupyter/` reads of the layers
below (ledger entries, the frame view, frame reports, their errors): `jupyter/` imports nothing
durable except through here (`tests/unit/workspace/test_workspace_surface.py`,
`tests/unit/test_imports.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ..durable import JournalError, state_path
    from ..frames import (
        FileCheckpoints,
        FileDiff,
        RewindError,
        RewindPlan,
        VariableCheckpoints,
        VariableStep,
        changed_files,
        collect_garbage,
        describe_call_rewind,
        diff_sides,
        frame_diff,
        interrupted_notice,
        launch_dir,
        map_lab_path,
        storage_text,
        store_usage,
    )
    from ..ledger import (
        Branch,
        CallRewound,
        CellEdit,
        CellRestore,
        FrameOutcome,
        FrameView,
        ProjectionItem,
        SessionStart,
        ThreadLedger,
        VariableRecord,
        check_ledger,
        derive_frames,
        found_at_this_start,
        read_entries,
    )
    from ..types.rewind_scope import RewindMode, RewindPart, RewindScope
    from .call_rows import CallRow
    from .frame import CellFrame, OpenFrame, not_captured_line
    from .launch import enter, starting_directory, workspace_notice
    from .notices import Notice, NoticeBoard, NoticeMode
    from .open_thread import STATE_DIR, Reaper, thread_id_for
    from .rewinding import RewindTarget
    from .rewinds import FramePage, Preview, RestoreProgress
    from .threads import (
        VSCODE_NOTEBOOK,
        ThreadChoice,
        ThreadInfo,
        ThreadSource,
        list_threads,
        named_thread,
        render_threads,
    )
    from .workspace import Workspace

__all__ = [
    # the workspace's own
    "STATE_DIR",
    "VSCODE_NOTEBOOK",
    "CallRow",
    "CellFrame",
    "FramePage",
    "Notice",
    "NoticeBoard",
    "NoticeMode",
    "OpenFrame",
    "Preview",
    "Reaper",
    "RestoreProgress",
    "RewindMode",
    "RewindPart",
    "RewindScope",
    "RewindTarget",
    "ThreadChoice",
    "ThreadInfo",
    "ThreadSource",
    "Workspace",
    "enter",
    "list_threads",
    "named_thread",
    "not_captured_line",
    "render_threads",
    "starting_directory",
    "thread_id_for",
    "workspace_notice",
    # what the notebook side reads of the layers below
    "Branch",
    "CallRewound",
    "CellEdit",
    "CellRestore",
    "FileCheckpoints",
    "FileDiff",
    "FrameOutcome",
    "FrameView",
    "JournalError",
    "ProjectionItem",
    "RewindError",
    "RewindPlan",
    "SessionStart",
    "ThreadLedger",
    "VariableCheckpoints",
    "VariableRecord",
    "VariableStep",
    "check_ledger",
    "collect_garbage",
    "derive_frames",
    "describe_call_rewind",
    "found_at_this_start",
    "changed_files",
    "diff_sides",
    "frame_diff",
    "interrupted_notice",
    "launch_dir",
    "map_lab_path",
    "read_entries",
    "storage_text",
    "state_path",
    "store_usage",
]


if not TYPE_CHECKING:
    __getattr__ = exports(__name__)
