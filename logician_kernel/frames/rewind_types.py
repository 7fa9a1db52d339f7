"""What a rewind's callers hold before any rewind runs: its error, and its plan.

A kernel's start and every frame's close name these (`file_checkpoints.py`, the watched
calls), so they live apart from the rewind itself (`frame_rewind.py`, `rewind_plan.py`,
`restore.py`, `undo.py`), which loads with a session's first rewind, preview or undo.

Must never: import the rewind's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ledger.thread_ledger import RestoredPath, RewindProgress
from ..snapshots.stat_memory import Looked
from ..types.path_states import PathState
from .rewind_incomplete import incomplete_text


class RewindError(ValueError):
    """A rewind request that cannot be carried out; the message is one line for the user."""


class RewindIncomplete(RewindError):
    """A rewind (or undo) pass left paths failed: they stay pending, its frames stay active.
    Carries the durable record that says so (`rewind_incomplete.py`)."""

    def __init__(self, entry: RewindProgress) -> None:
        self.entry = entry
        """The `rewind_progress` record naming the failed paths."""
        super().__init__(incomplete_text(entry))


@dataclass
class RewindPlan:
    """What a rewind to a frame would do, computed without touching anything."""

    frames: list[int]
    """The frames that would be popped, oldest first."""
    restore: list[tuple[str, PathState]] = field(default_factory=list)
    """Paths to bring back to a state."""
    conflicts: list[RestoredPath] = field(default_factory=list)
    """Paths changed by something else since the frames recorded them."""
    skipped: list[RestoredPath] = field(default_factory=list)
    """Paths whose pre-state was never captured."""
    external: list[RestoredPath] = field(default_factory=list)
    """Paths only someone outside this kernel changed: left alone (`include_external` reverts)."""
    messages_dropped: int = 0
    """Conversation messages the rewind takes out of the projection."""
    recreate: set[str] = field(default_factory=set)
    """Paths of `restore` that are absent now (a popped cell deleted them, nothing wrote them
    since): the rewind recreates them."""
    looks: dict[str, Looked] = field(default_factory=dict, repr=False, compare=False)
    """The `lstat` (and the clock before it) the plan judged each path of `restore` by: the
    plan record's pre-image of that path is stored by it, not by a second look
    (`rewind_plan.write_plan`)."""
