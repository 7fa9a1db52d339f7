"""The closed set of thread-ledger entry kinds: one discriminated union, a docstring under
every field. Pure vocabulary: the ledger (`thread_ledger.py`) appends and projects them.

Must never: do I/O, or grow a kind without a docstring on each field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..types.approvals import ApprovalChoice
from ..types.field_docs import FIELD_DOCS
from ..types.path_states import Fingerprint, PathChange, PathState, SkippedPath
from ..types.rewind_scope import RewindScope

ProjectionReason = Literal[
    "restore", "rewind", "branch-discard", "branch-merge", "compaction", "clear", "run-commit"
]
"""Why a projection item replaced the conversation (the seed's typed reasons)."""

FrameOutcome = Literal["ok", "error", "interrupted", "killed", "failed"]
"""How a cell ended; `killed` is recorded on reopen for a frame whose kernel died, `failed` by
the next cell for a frame whose close could not be written (the ledger failed; its reason is
the close's `capture_error`)."""

_MODEL = ConfigDict(
    frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, defer_build=True
)
"""`defer_build`: a kind's validator is built the first time one is read or appended, so a
start builds those of the few kinds it meets, not the thirty it imports."""


class _Entry(BaseModel):
    model_config = _MODEL

    seq: int
    """1-based position in the ledger; assigned by `ThreadLedger.append`."""
    parent: int | None
    """Sequence number of the entry before this one (None for the first)."""
    time: str
    """UTC time of the append, ISO 8601."""


class SessionStart(_Entry):
    """A kernel session opened this thread."""

    kind: Literal["session_start"] = "session_start"
    kernel_session: str
    """Id of the kernel session (new on every kernel start or restart)."""
    pid: int
    """Process id of the kernel."""
    workspace: str
    """Absolute workspace root the frames of this session refer to."""
    version: str
    """logician_kernel version."""
    notebook: str | None = None
    """The notebook the thread is named after (the server's `JPY_SESSION_NAME` or VS Code's
    `__vsc_ipynb_file__`), when one was known; what `%logician threads` shows."""


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


class MessageEntry(_Entry):
    """One conversation message, recorded at a turn or tool boundary (never deltas)."""

    kind: Literal["message"] = "message"
    frame: int | None
    """The frame whose cell produced the message."""
    message: dict[str, Any]
    """The message in its JSON form."""


ToolRecovery = Literal["pure", "restorable", "external"]
"""How a tool recovers when its intent was recorded but its result was not (see tools/)."""


class ToolIntent(_Entry):
    """A tool call is about to run: durable before the tool starts."""

    kind: Literal["tool_intent"] = "tool_intent"
    frame: int | None
    """The frame (cell) the call runs in."""
    call_id: str
    """The model's id for the call."""
    name: str
    """Tool name."""
    arguments: dict[str, Any]
    """The call's arguments, with secret-looking strings masked."""
    recovery: ToolRecovery
    """What may happen to this call if its result is never recorded."""


class ToolOutcome(_Entry):
    """A tool call finished (or was resolved on reopen): its result as the model saw it."""

    kind: Literal["tool_result"] = "tool_result"
    frame: int | None
    """The frame the call ran in."""
    call_id: str
    """The call this is the result of."""
    is_error: bool
    """Whether the tool failed."""
    content: str
    """What the model was told (bounded)."""
    display: str = ""
    """The one-line summary shown in the notebook."""


class ToolCommit(_Entry):
    """The result is part of the conversation: the call is complete."""

    kind: Literal["tool_commit"] = "tool_commit"
    call_id: str
    """The committed call."""


class Quarantine(_Entry):
    """A call with unknown external effects was cut off by a dead kernel; never repeated."""

    kind: Literal["quarantine"] = "quarantine"
    frame: int | None
    """The frame it ran in."""
    call_id: str
    """The quarantined call."""
    name: str
    """Tool name."""
    detail: str
    """What the user and the model are told."""


class RestorableCall(_Entry):
    """A `restorable` call (write, edit) cut off by a dead kernel whose pre-images were
    recorded, or a `bash` call whose writes were recorded exactly as it ran (`call_watch`):
    offered for `rewind --call`, never repeated."""

    kind: Literal["restorable_call"] = "restorable_call"
    frame: int | None
    """The frame it ran in."""
    call_id: str
    """The call cut off."""
    name: str
    """Tool name."""
    paths: list[str] = Field(default_factory=list)
    """Workspace-relative paths whose pre-image the call recorded before writing (for a
    watched call: the paths its processes were seen changing)."""
    detail: str
    """What the user and the model are told."""


class CallWatch(_Entry):
    """A `bash` call's writes as the attribution watcher saw them, recorded while it runs, so
    a call a dead kernel cut off can be rewound (`phase`: `start` before it runs, `seen` as
    its processes write, `end` once every event up to its end was read)."""

    kind: Literal["call_watch"] = "call_watch"
    frame: int | None
    """The frame the call runs in."""
    call_id: str
    """The watched call."""
    phase: Literal["start", "seen", "end"]
    """`start`: the baseline (or why there is none); `seen`: paths first written since the
    last record; `end`: the call returned and every event of it was read."""
    baseline: str | None = None
    """`start`: the git tree of the workspace snapshot taken as the call began: the paths'
    pre-images (None when the call is not watched exactly)."""
    not_exact: str = ""
    """Why the record does not tell the call's writes exactly ("" when it does): said on
    `start` (the mechanism) or later (events lost, another call ran meanwhile)."""
    paths: list[str] = Field(default_factory=list)
    """Workspace-relative paths the call's processes changed, first seen since the last record."""
    others: list[str] = Field(default_factory=list)
    """Paths a process outside the call changed meanwhile (never the call's to restore)."""


class ApprovalRequested(_Entry):
    """A tool call needs the user's decision (action-required; routine allows never appear)."""

    kind: Literal["approval_request"] = "approval_request"
    frame: int | None
    """The frame (cell) of the run."""
    request_id: str
    """Id the frontends answer to."""
    call_id: str
    """The tool call waiting for the decision."""
    tool: str
    """Tool name."""
    description: str
    """The call in readable form (masked)."""
    reason: str
    """Why the policy asks."""


class ApprovalResolved(_Entry):
    """How an approval request was decided, by whom, and through which channel."""

    kind: Literal["approval_resolution"] = "approval_resolution"
    request_id: str
    """The request decided."""
    choice: ApprovalChoice
    """The decision."""
    via: str
    """Where it was made: one of `types.approvals.ApprovalChannel` (widget, comm, stdin,
    headless, callback); `restart` when the kernel stopped before anyone answered (settled as
    a denial on reopen), `interrupted` when the run stopped first; ledgers written before that
    was recorded say `user`."""
    note: str = ""
    """The user's note (passed to the model with a denial)."""
    rule: str | None = None
    """The rule persisted or added for the session, if any."""


class RunEnd(_Entry):
    """An agent run in a frame ended: how, and what it used (for listings and budgets)."""

    kind: Literal["run_end"] = "run_end"
    frame: int | None
    """The frame (cell) of the run."""
    status: str
    """The run's outcome status (completed, budget_exhausted, denied, cancelled, failed)."""
    input_tokens: int = 0
    """Prompt tokens the run used."""
    output_tokens: int = 0
    """Generated tokens."""
    cost_usd: float = 0.0
    """Estimated cost from the configured prices (0 when the model has no price)."""
    usage_estimated: bool = False
    """Whether the token counts are in part an estimate: a reply cut off (an interrupt, a
    broken stream) before the server reported what it used, or a server reporting none."""


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


class Recovery(_Entry):
    """Something was repaired when the thread was opened; says what, never silently."""

    kind: Literal["recovery"] = "recovery"
    what: Literal["torn-tail", "damaged-record", "repaired", "incomplete-frame", "journal-error"]
    """The kind of damage."""
    detail: str
    """A one-line description for the user."""
    side_file: str | None = None
    """Where cut bytes were kept."""
    frame: int | None = None
    """The frame concerned, if any."""
    offset: int | None = None
    """Byte offset of the damage in the ledger file (damaged records and torn tails)."""
    lost_seqs: list[int] = Field(default_factory=list)
    """Sequence numbers of the records the damage cost (a damaged record costs only itself)."""


Entry = Annotated[
    SessionStart
    | FrameOpen
    | FramePreSnapshot
    | FrameClose
    | FileCheckpoint
    | MessageEntry
    | ToolIntent
    | ToolOutcome
    | ToolCommit
    | Quarantine
    | RestorableCall
    | CallWatch
    | CallRewound
    | CellEdit
    | CellRestore
    | ApprovalRequested
    | ApprovalResolved
    | RunEnd
    | VariablesCaptured
    | ProjectionItem
    | RewindPlanned
    | RewindProgress
    | Recovery,
    Field(discriminator="kind"),
]
ENTRY_ADAPTER: TypeAdapter[Entry] = TypeAdapter(Entry, config=ConfigDict(defer_build=True))
"""Built on first use: `read_entry` goes to a kind's own model, and here only for a record
no kind reads (whose error it then raises)."""
_KINDS: dict[str, type[BaseModel]] = {
    model.model_fields["kind"].default: model for model in get_args(get_args(Entry)[0])
}

_FIELD_SETS: dict[frozenset[str], set[str]] = {}
_RECENT: dict[Any, Any] = {}
"""Values and frozen models read lately, each kept once: a frame's post-states are the next
frame's pre-states, its path and evidence the same as the last frame's (bounded; cleared when
full, which only costs sharing across that moment)."""
_RECENT_MAX = 4096


FRAME_KINDS: tuple[type[BaseModel], ...] = (
    FrameOpen,
    FrameClose,
    VariablesCaptured,
    VariableRecord,
)
"""What every cell's frame appends: their validators are built off the first cell's path
(`build_validators`, from the thread that takes the first snapshot)."""


def build_validators(kinds: tuple[type[BaseModel], ...]) -> None:
    """Build these models' validators now rather than at their first use (`defer_build`);
    thread-safe (pydantic builds under its lock), a no-op for one already built."""
    for kind in kinds:
        kind.model_rebuild()


def read_entry(record: dict[str, Any]) -> Entry:
    """Validate one ledger record into its entry, as `ENTRY_ADAPTER` does, holding less.

    Every validated model carries its own set of the field names it was given (pydantic's
    `model_fields_set`, 728 bytes from five names up): the entry and each model inside it, two
    thirds of what a frame's entries take in memory, kept for the whole session. Entries and
    what they hold are frozen, so nothing adds to such a set in place (`model_copy` gives the
    copy a set of its own): models given the same fields share one. Equal strings and equal
    models inside entries read lately are shared too (a path state, a blob id, a path)."""
    entry = _validate(record)
    if len(_RECENT) > _RECENT_MAX:
        _RECENT.clear()
    _share(entry)
    return entry


def _validate(record: dict[str, Any]) -> Entry:
    """`ENTRY_ADAPTER.validate_python(record)`, through the kind's own model: the union's
    validator (every kind's) is built only when a record does not validate, for its error."""
    kind = record.get("kind") if isinstance(record, dict) else None
    model = _KINDS.get(kind) if isinstance(kind, str) else None
    if model is not None:
        try:
            return model.model_validate(record)  # type: ignore[return-value]
        except ValidationError:
            pass  # the union's error (its location names the kind), as before
    return ENTRY_ADAPTER.validate_python(record)


_FROZEN: dict[type, bool] = {}
"""Per model class, whether it is frozen: a mutable model adds to its field-name set on
assignment, so it keeps its own."""
_CLASS_SETS: dict[type, set[str]] = {}
"""Per model class, the field-name set its models were last given (the common case: one set
per class), compared before a `frozenset` of the names is made to look the shared one up."""

_VALUE_MODELS: frozenset[type] = frozenset({PathState, Fingerprint})
"""The models that recur equal from entry to entry (a frame's post-state is the next one's
pre-state): only these are looked up by value. Hashing every model (a change, an evidence
record) found next to no equal one and cost as much as validating the entry again."""


def _share(model: BaseModel) -> None:
    cls = type(model)
    frozen = _FROZEN.get(cls)
    if frozen is None:
        frozen = _FROZEN[cls] = bool(cls.model_config.get("frozen"))
    if not frozen:
        return
    names = model.__pydantic_fields_set__
    shared = _CLASS_SETS.get(cls)
    if shared is None or shared != names:
        shared = _CLASS_SETS[cls] = _FIELD_SETS.setdefault(frozenset(names), names)
    if shared is not names:
        object.__setattr__(model, "__pydantic_fields_set__", shared)
    fields = model.__dict__
    recent = _RECENT
    for name, value in fields.items():
        kind = type(value)
        if kind is str:
            fields[name] = recent.setdefault(value, value)
        elif kind is list:
            for i, item in enumerate(value):
                if type(item) is str:
                    value[i] = recent.setdefault(item, item)
                elif isinstance(item, BaseModel):
                    value[i] = _model(item)
        elif value is not None and isinstance(value, BaseModel):
            fields[name] = _model(value)


def _model(value: BaseModel) -> BaseModel:
    """`value` with what it holds shared, or an equal path state read lately."""
    _share(value)
    if type(value) in _VALUE_MODELS:
        return _RECENT.setdefault(value, value)  # type: ignore[no-any-return]
    return value
