"""What the rewind control shows of a frame: its row in the list and what rewinding to it
would do. Plain values, apart from the control (`rewind.py`) so the frame source that builds
them (`rewind_source.py`, for the sidebar's comm too) loads no ipywidgets.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class FrameRow:
    """One checkpoint frame as the list shows it (a projection, not the frame itself)."""

    frame: int
    """The frame's number; higher is newer."""
    cell: str
    """The cell it belongs to, e.g. `In [3]`."""
    time: str
    """When it was taken, already formatted."""
    label: str
    """The prompt, or the first line of the cell's code."""
    outcome: str
    """How the cell or turn ended, e.g. `completed`."""
    files: str
    """File changes in the frame, e.g. `2 created, 1 modified`."""
    tokens: str
    """Tokens the frame used, already formatted."""


@dataclass(frozen=True, slots=True)
class RewindPreview:
    """What rewinding to one frame would do."""

    files: list[str] = field(default_factory=list)
    """One line per file action, e.g. `restore data.csv`."""
    conflicts: list[str] = field(default_factory=list)
    """Files changed outside the agent since the frame, which a rewind would overwrite."""
    messages_dropped: int = 0
    """Conversation messages a conversation rewind would drop."""
    variables: list[str] = field(default_factory=list)
    """One line per user variable, e.g. `restore df (as In [3] left it)`."""
    error: str = ""
    """Why the frame cannot be previewed (or rewound); empty when it can."""
