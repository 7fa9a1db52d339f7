"""The cell part of a rewind or an undo, on the kernel's side of any frontend: recorded
pending (`Workspace.cell_part`), and said when no frontend can apply it now.

Shared by the notebook bridge (`notebook_bridge.NotebookBridge.after`) and the frame commands
run before anything else is loaded (`frame_light.py`: no frontend has opened the comm then).
Must never: record a cell part twice for one rewind (`Workspace.cell_part` appends it), or
raise after the files and variables are back (a failure is said as a notice).
"""

from __future__ import annotations

from ..workspace import CellEdit, CellRestore, ProjectionItem, Workspace

NO_FRONTEND = (
    "no frontend holding this notebook is connected (the JupyterLab extension serves "
    "the notebook tools; a console, papermill or VS Code does not)"
)
"""Why the notebook tools are not offered while no frontend is attached."""


def record(workspace: Workspace, item: ProjectionItem) -> tuple[CellRestore, list[CellEdit]] | None:
    """`item`'s cell part, recorded pending; None when it has none, or when recording it
    failed (said)."""
    try:
        return workspace.cell_part(item)
    except Exception as exc:  # noqa: BLE001 - the files and variables are back; say it
        workspace.notice(f"Logician: the cell part of the rewind failed: {exc}")
        return None


def say_waiting(workspace: Workspace, edits: list[CellEdit], why: str) -> None:
    """The cell part stays pending: say why, and how it is applied or given up."""
    workspace.notice(
        f"Logician: {len(edits)} cell edit{'s' if len(edits) != 1 else ''} of the agent "
        f"wait to be taken back ({why}); they are applied when the notebook's frontend "
        "reconnects, or give them up with `%logician rewind --skip-cells`."
    )


def after_unattached(workspace: Workspace, item: ProjectionItem) -> None:
    """A rewind or an undo with no frontend attached: its cell part (if any) stays pending,
    said as the bridge says it."""
    part = record(workspace, item)
    if part is not None:
        say_waiting(workspace, part[1], f"the notebook tools are unavailable: {NO_FRONTEND}")
