"""The front door's surface: what `logician_kernel.workspace` exports, and what it must never
pull in (Jupyter, or the tools whose reaper it is handed)."""

from __future__ import annotations

import subprocess
import sys

import logician_kernel.workspace as workspace

WORKSPACE_API = {
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
}


def test_exported_names() -> None:
    assert set(workspace.__all__) == WORKSPACE_API
    assert all(hasattr(workspace, name) for name in workspace.__all__)


def test_the_front_door_imports_no_jupyter_and_no_tools() -> None:
    code = (
        "import sys, logician_kernel.workspace\n"
        "bad = {'IPython', 'ipykernel', 'ipywidgets', 'comm', 'logician_kernel.tools'}\n"
        "print(sorted(bad & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
