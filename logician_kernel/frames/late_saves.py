"""A JupyterLab save reported after its frame closed, told as the save it was.

The Lab reports a save (`document.saved`, with the file's new modification time) once the
server has answered it; a cell that ends as the save lands closes its frame before the report
arrives. The frame then recorded the file as changed by another process (the server's), and a
rewind leaves it alone either way; what this adds is the user's own words for it: a save of
that very path, reported by this kernel's Lab, whose time falls inside the frame, is "saved in
JupyterLab at ..." in the rewind's plan and dialog. It lives in memory (`SaveLog`): after a
restart the recorded wording stands.

Must never: make a change that was not external look external, or one outside the frame's time.
"""

from __future__ import annotations

from datetime import datetime

from ..ledger.frame_view import FrameView
from ..types.path_states import PathChange
from .chain_verdict import clock

SLACK_SECONDS = 1.0
"""How far a save's time may lie outside its frame's open and close times (the file system's
clock and the ledger's are read at different moments)."""


def with_late_save(change: PathChange, view: FrameView, saves: dict[str, str]) -> PathChange:
    """`change` as frame `view` recorded it, or, when it was recorded as another program's and
    the Lab reported saving that path inside the frame, as that save."""
    if change.by != "external" or change.saved_at or change.path not in saves:
        return change
    at = saves[change.path]
    saved, opened, closed = _when(at), _when(view.opened_at), _when(view.closed_at)
    if saved is None or opened is None or closed is None:
        return change
    if not (
        (opened - saved).total_seconds() <= SLACK_SECONDS
        and (saved - closed).total_seconds() <= SLACK_SECONDS
    ):
        return change
    return change.model_copy(
        update={"basis": f"saved in JupyterLab at {clock(at)}", "saved_at": at}
    )


def _when(iso: str | None) -> datetime | None:
    if not iso:
        return None
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
