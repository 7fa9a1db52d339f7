"""The thread-ledger kinds of frames and of what rewinds them: a frame's open and close with
every pre-image, its variables, the notebook cells an agent edited, and a rewind's plan,
progress and projection item (with the paths, variables and cells it restored).

Must never: do I/O, or grow a kind without a docstring on each field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..types.path_states import PathChange, PathState, SkippedPath
from ..types.rewind_scope import RewindScope
from .entry_base import _MODEL, FrameOutcome, ProjectionReason, _Entry


class FrameOpen(_Entry):
    """A cell started: its frame is open and its pre-snapshot taken."""

    kind: Literal["frame_open"] = "frame_open"
    frame: int
    """Frame id, unique and increasing within the thread; never reused."""
    execution_count: int | None
    """The cell's execution count (`In [n]`)."""
    cell_id: str | None
    """The notebook cell id, when the frontend sent one."""
    code: str
    """The first line of the cell, bounded, for listings."""
    pre_tree: str | None
    """Git tree of the workspace before the cell; None when capture failed."""
    capture_error: str | None = None
    """Why the pre-snapshot failed, if it did."""
    fs_time: float | None = None
    """The file system's clock (Linux's coarse realtime clock, which stamps file times) when
    the frame opened: a directory born at or after it is the frame's (`perms.remove_debris`);
    `time` comes from a finer clock that runs up to a few milliseconds ahead of it."""


class FramePreSnapshot(_Entry):
    """The pre-snapshot of a frame that opened while the first full snapshot was still being
    taken: taken at the cell's first write, just before it (first_snapshot_wait.py)."""

    kind: Literal["frame_pre_snapshot"] = "frame_pre_snapshot"
    frame: int
    """The frame whose pre-snapshot this is (its `frame_open` carries none)."""
    pre_tree: str
    """Git tree of the workspace just before the cell's first write."""


class FrameClose(_Entry):
    """A cell ended: what it changed, with every pre-image, and its outcome."""

    kind: Literal["frame_close"] = "frame_close"
    frame: int
    """The frame this closes."""
    outcome: FrameOutcome
    """How the cell ended."""
    post_tree: str | None
    """Git tree of the workspace after the cell; None when capture failed."""
    start_tree: str | None = None
    """Git tree of the workspace when the cell started, when it differs from the frame's
    `pre_tree`: a stat scan read it after the cell, and files changed between cells (not by
    the cell) are in it. Supersedes `FrameOpen.pre_tree`; None when that one is right."""
    changes: list[PathChange] = Field(default_factory=list)
    """Every captured path the cell changed, with its first pre-state and final post-state."""
    skipped: list[SkippedPath] = Field(default_factory=list)
    """Paths the cell changed that could not be captured, with why."""
    capture_error: str | None = None
    """Why capture failed, if it did; the cell itself ran regardless."""
    duration_ms: float = 0.0
    """Wall time of the cell, milliseconds."""


class FileCheckpoint(_Entry):
    """An agent tool captured a path's pre-state inside a frame before writing it."""

    kind: Literal["file_checkpoint"] = "file_checkpoint"
    frame: int
    """The open frame the capture belongs to."""
    path: str
    """Workspace-relative path."""
    before: PathState
    """The pre-state; within a frame only the first capture of a path counts."""
    call_id: str | None = None
    """The tool call that captured this path; None for cell code."""


class VariableRecord(BaseModel):
    """What a frame did to one user variable, and where its new value is stored."""

    model_config = _MODEL

    name: str
    """The variable's name in the notebook namespace."""
    action: Literal["created", "changed", "deleted", "shared"]
    """Bound for the first time, rebound or mutated in place, deleted by the frame; or
    `shared`: unchanged, but stored again with a changed name that shares its objects (so a
    restore keeps `b is a`)."""
    type: str = ""
    """The value's type, `module.qualname` (empty for a deletion)."""
    blob: str | None = None
    """Digest of the variables-store blob holding the new value; None when not captured."""
    digest: str | None = None
    """Digest of this name's value alone (how the next frame tells it changed after a rewind)."""
    size: int = 0
    """Bytes the stored group takes (shared by every name of the group)."""
    not_captured: str | None = None
    """Why the new value could not be stored (unpicklable, over the size limit, ...)."""


class VariablesCaptured(_Entry):
    """At a frame's close: the user variables it created, changed or deleted (a manifest)."""

    kind: Literal["variables"] = "variables"
    frame: int
    """The frame whose cell (or agent run) made these changes."""
    records: list[VariableRecord] = Field(default_factory=list)
    """One per variable touched, by name."""
    duration_ms: float = 0.0
    """Time the detection and storing took, milliseconds."""


class RestoredVariable(BaseModel):
    """What a rewind did to one user variable."""

    model_config = _MODEL

    name: str
    """The variable's name."""
    action: Literal["restored", "deleted", "not-restored", "not-live"]
    """Brought back to its earlier value, removed (the rewound frames created it), could not be
    restored, or (after a restart) absent from the live namespace and left so."""
    detail: str = ""
    """Why, for names not restored; which cells (`In [n]`) made the value."""


class RestoredPath(BaseModel):
    """What a rewind did to one path."""

    model_config = _MODEL

    path: str
    """Workspace-relative path."""
    action: Literal["restored", "deleted", "recreated", "conflict", "skipped", "failed", "external"]
    """What happened to it; `external`: changed outside this kernel, so left alone."""
    detail: str = ""
    """Why, for conflicts, skips and failures."""
    bits: int | None = None
    """A directory's permission bits when the rewind removed it (its path ends in "/"): an
    undo makes it again with them."""


class CellState(BaseModel):
    """One notebook cell as an edit saw it (before or after)."""

    model_config = _MODEL

    id: str
    """The cell's id in the notebook (nbformat 4.5)."""
    cell_type: Literal["code", "markdown", "raw"]
    source: str
    """The cell's whole source."""
    index: int
    """Its position in the notebook, 0-based, when the edit was made."""


class CellEdit(_Entry):
    """The agent changed one cell of the live notebook (through its frontend)."""

    kind: Literal["cell_edit"] = "cell_edit"
    frame: int | None
    """The frame (the agent's cell) the edit belongs to: its rewind takes the edit back."""
    call_id: str | None
    """The `notebook_edit` call that made it."""
    notebook: str | None
    """The notebook's path as its frontend named it."""
    mode: Literal["insert", "replace", "delete"]
    before: CellState | None
    """The cell before the edit; None for an insert."""
    after: CellState | None
    """The cell after the edit; None for a delete."""


class CellRestore(_Entry):
    """A rewind or an undo asked the notebook's frontend to take cell edits back (or put them
    back again), and what the frontend did. Pending until `applied` is recorded."""

    kind: Literal["cell_restore"] = "cell_restore"
    by: int
    """The projection entry (the rewind or the undo) this belongs to."""
    direction: Literal["rewind", "undo"]
    """`rewind` reverses the edits, `undo` makes them again."""
    edits: list[int]
    """The `cell_edit` entries concerned, in the order they are applied."""
    state: Literal["pending", "applied", "skipped"]
    """`pending`: asked for (or waiting for a frontend); `applied`: the frontend answered;
    `skipped`: the user gave the cell part up (`--skip-cells`)."""
    conflicts: list[str] = Field(default_factory=list)
    """Cell ids the user changed after the agent did: left alone."""
    missing: list[str] = Field(default_factory=list)
    """Cell ids no longer in the notebook."""


class CallRewound(_Entry):
    """`rewind --call`: one tool call's recorded pre-images were put back (frames stay)."""

    kind: Literal["call_rewind"] = "call_rewind"
    call_id: str
    """The call whose effects were taken back."""
    frame: int | None
    """The frame the call ran in."""
    paths: list[RestoredPath] = Field(default_factory=list)
    """What happened to each path the call captured."""
    note: str = ""
    """Free text for the user (e.g. `--force`)."""


class ProjectionItem(_Entry):
    """The conversation (and, for rewinds, the frame stack) took a new shape."""

    kind: Literal["projection"] = "projection"
    reason: ProjectionReason
    """Why: one of the seed's typed reasons."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The replacement messages: the whole conversation from here on."""
    frames: list[int] = Field(default_factory=list)
    """Frames this item pops (rewind) - they leave the frame stack."""
    paths: list[RestoredPath] = Field(default_factory=list)
    """What a rewind did to each path."""
    note: str = ""
    """Free text for people (e.g. `--force`); never read back by the code (`scope` is typed)."""
    scope: RewindScope | None = None
    """For a rewind: what it restored (files, conversation, variables); None for the other
    reasons, and for rewinds recorded before the scope was (they read as whole rewinds)."""
    variables: list[RestoredVariable] = Field(default_factory=list)
    """What a rewind did to each user variable (restored after the files)."""
    variable_frames: list[int] = Field(default_factory=list)
    """Frames whose variable changes this rewind took back (their manifests no longer count)."""
    plan: int | None = None
    """For a rewind: the seq of its `rewind_plan` record (its undo snapshot); None for rewinds
    recorded before plans were."""
    undoes: int | None = None
    """For reason `restore`: the seq of the rewind projection item this takes back; that
    rewind's frames (and their variable changes) count again."""


class RewindStep(BaseModel):
    """One path of a rewind plan: what the rewind writes, and what stood there before it."""

    model_config = _MODEL

    path: str
    """Workspace-relative path."""
    target: PathState
    """The state the rewind brings the path to."""
    current: PathState
    """The state the path had just before the rewind (stored: an undo brings it back)."""
    perms: int | None = None
    """Its permission bits (`st_mode & 0o7777`) before the rewind; None for a symlink or an
    absent path. Git keeps only the executable bit, so the full bits live here."""
    uid: int | None = None
    """The owner of what stood there before the rewind (None: absent, or a record made before
    owners were kept). An undo run as root gives the file back to them (`beneath.py`)."""
    gid: int | None = None
    """Its group, with `uid`."""


class RewindPlanned(_Entry):
    """A rewind about to start: its whole plan, durable before the first path is touched. It is
    the rewind's undo snapshot and what `--resume` completes after a crash."""

    kind: Literal["rewind_plan"] = "rewind_plan"
    frame: int
    """The rewind goes back to just before this frame."""
    frames: list[int] = Field(default_factory=list)
    """The frames it pops, oldest first."""
    files: bool = True
    """Whether it restores files."""
    conversation: bool = True
    """Whether it restores the conversation."""
    variables: bool = True
    """Whether it restores variables."""
    force: bool = False
    """Whether conflicts were overwritten (`--force`)."""
    include_external: bool = False
    """Whether changes made outside this kernel were reverted too (`--include-external`)."""
    call_id: str | None = None
    """`rewind --call`: the one tool call whose changes it restores (no frame is popped)."""
    steps: list[RewindStep] = Field(default_factory=list)
    """Every path it restores, in the order it restores them."""
    known: list[RestoredPath] = Field(default_factory=list)
    """Paths settled by the plan itself: conflicts left alone and skips."""
    since: str | None = None
    """UTC time the first popped frame opened: directories born after it, left empty by the
    restore, are the frames' debris and are removed."""
    since_fs: float | None = None
    """The same moment on the file system's clock (`FrameOpen.fs_time`), when recorded."""
    fs_time: float | None = None
    """The file system's clock when the plan was recorded: a directory born at or after it
    is the rewind's, for its undo."""

    @property
    def scope(self) -> RewindScope:
        """`files`, `conversation` and `variables` as one scope (kept apart on disk: older ledgers)."""
        return RewindScope(
            files=self.files, conversation=self.conversation, variables=self.variables
        )


class RewindProgress(_Entry):
    """How far a planned rewind (or its undo) has come; written in batches."""

    kind: Literal["rewind_progress"] = "rewind_progress"
    plan: int
    """The seq of the `rewind_plan` record."""
    done: int
    """Steps finished, in the plan's order."""
    undo: bool = False
    """Whether this is the progress of undoing the rewind rather than of the rewind."""
    failed: list[RestoredPath] = Field(default_factory=list)
    """Paths a whole pass could not bring back (disk full, I/O error): the rewind (or undo) is
    incomplete, its frames stay active, and these stay pending until `--resume` restores them
    or `--skip-failed` gives them up by name. Empty for a batch record."""
    results: list[RestoredPath] = Field(default_factory=list)
    """With `failed`: what the pass did to every other path, so the record that finishes the
    rewind names them all."""
    frames: list[int] = Field(default_factory=list)
    """With `failed`: the plan's frames, so the frame list marks them "rewind incomplete"."""
