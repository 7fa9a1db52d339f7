"""The frame stack: open and close, pre-images, attribution, rewind plans, restore, undo,
resume, recovery, the store budget, and variables (capture, store, restore).

Uses `snapshots/`, `ledger/`, `durable/` and `types/`, never anything above. `__all__` is what
the other packages use (`tests/unit/frames/test_frames_surface.py` holds it to that)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .attribution import launch_dir, map_lab_path
    from .capture_heal import CaptureHeal
    from .chain_verdict import external_notice
    from .file_checkpoints import FileCheckpoints
    from .frame_files import changed_files, diff_sides
    from .frame_report import FileDiff, frame_diff
    from .recovery import CallRewindError, describe_call_rewind, rewind_call
    from .rewind_incomplete import interrupted_notice
    from .rewind_types import RewindError, RewindPlan
    from .state_guard import heal_state_dir
    from .storage_commands import collect_garbage, storage_text
    from .store_budget import FrameUsage
    from .store_budget import usage as store_usage
    from .variable_checkpoints import VariableCheckpoints, VariableStep

__all__ = [
    "CallRewindError",
    "CaptureHeal",
    "FileCheckpoints",
    "FileDiff",
    "FrameUsage",
    "RewindError",
    "RewindPlan",
    "VariableCheckpoints",
    "VariableStep",
    "collect_garbage",
    "describe_call_rewind",
    "external_notice",
    "changed_files",
    "diff_sides",
    "frame_diff",
    "heal_state_dir",
    "interrupted_notice",
    "launch_dir",
    "map_lab_path",
    "rewind_call",
    "storage_text",
    "store_usage",
]


if not TYPE_CHECKING:
    __getattr__ = exports(__name__)
