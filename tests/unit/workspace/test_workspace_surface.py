"""The public surface of `logician_kernel.workspace`, the front door of everything durable: its
own API, plus what the notebook side reads of the layers below (the same objects, re-exported),
and importing it starts nothing above it."""

from __future__ import annotations

import subprocess
import sys

import logician_kernel.durable as durable
import logician_kernel.frames as frames
import logician_kernel.ledger as ledger
import logician_kernel.workspace as workspace

OWN = {
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
}
FROM_BELOW = {
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
    "state_path",
    "storage_text",
    "store_usage",
}


def test_exported_names_are_what_we_mean_to_export() -> None:
    assert set(workspace.__all__) == OWN | FROM_BELOW
    assert len(workspace.__all__) == len(OWN | FROM_BELOW)  # no name listed twice


def test_re_exports_are_the_lower_surfaces_own_objects() -> None:
    below = {durable, frames, ledger}
    for name in FROM_BELOW:
        homes = [pkg for pkg in below if name in pkg.__all__]
        assert len(homes) == 1, f"{name} is in no (or more than one) lower surface"
        assert getattr(workspace, name) is getattr(homes[0], name), name


def test_importing_the_workspace_starts_nothing_above_it() -> None:
    code = (
        "import sys, logician_kernel.workspace\n"
        "above = ('agent', 'jupyter', 'loop', 'tools', 'policy', 'providers', 'mcp', 'events',"
        " 'compaction')\n"
        "bad = sorted(m for m in sys.modules if m in ('IPython', 'ipykernel', 'ipywidgets', 'comm')"
        " or m.split('.')[:2] in [['logician_kernel', a] for a in above])\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
