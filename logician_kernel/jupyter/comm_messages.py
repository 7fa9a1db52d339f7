"""The `logician` comm's messages, declared once: two closed unions of pydantic models.

`FrontendMessage` is what a frontend (the lab extension's sidebar, or any client) may send;
`KernelMessage` is what the kernel answers or announces. Every message is a JSON object
`{"v": 1, "type": ...}`; a request may carry an `id`, which its answer echoes as `re`. The
comm (`comm.py`) validates every incoming message against `FrontendMessage` (a malformed one is
answered with an `error` naming the field, and changes nothing) and builds every outgoing one
through `KernelMessage`. `comm_schema.json` is generated from these unions (`comm_schema.py`:
`python -m logician_kernel.jupyter.comm_schema --write`) and a test fails when the committed
file differs; the lab extension's `protocol.ts` is tested against that file. An approval
request is the gate's own `ApprovalPrompt` (the part of its `ApprovalRequest` that leaves the
kernel), never a copy re-keyed by hand.

Must never: do I/O or talk to a comm (the models are plain data; `comm.py` owns the wire).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import (
    MISSING,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    TypeAdapter,
    model_validator,
)

from ..agent.approvals import ApprovalPrompt
from ..agent.ui import McpState, Phase
from ..types.approvals import ApprovalChannel, ApprovalChoice
from ..types.field_docs import FIELD_DOCS
from .widgets.rewind import RewindMode  # one declaration, with the rewind control's buttons

Version = Literal[1]
"""The protocol's version: every message carries it as `v`."""

SCHEMA_VERSION: int = get_args(Version)[0]

TARGET = "logician"
"""The comm target a frontend opens."""

RequestId = StrictStr | StrictInt
"""A request's id: a string or an integer (never a boolean), echoed as `re`."""
Count = Annotated[int, Field(ge=0)]
NonEmpty = Annotated[str, Field(min_length=1)]


# -- frontend -> kernel ---------------------------------------------------------------------


class _Request(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, use_attribute_docstrings=FIELD_DOCS
    )

    v: Version
    """The schema version the frontend speaks."""
    id: RequestId | None = None
    """Echoed as `re` in the answer."""


class ApprovalsList(_Request):
    """Ask for the pending approval requests (answered by `approvals`)."""

    type: Literal["approvals.list"]


class ApprovalDecide(_Request):
    """Decide one pending approval request (answered by `approval.decided`)."""

    type: Literal["approval.decide"]
    request_id: str
    """The request decided (`ApprovalPrompt.request_id`)."""
    choice: ApprovalChoice
    note: str = ""
    """What the user said with it (the model reads it on a denial)."""


class StatusRequest(_Request):
    """Ask for the runtime status (answered by `status`)."""

    type: Literal["status"]


class FramesList(_Request):
    """Ask for a page of frames, newest first (answered by `frames`)."""

    type: Literal["frames.list"]
    offset: Count = 0
    """Frames to skip, newest first."""
    limit: Annotated[int, Field(ge=1, le=500)] = 100
    """Rows at most."""


class _FrameTarget(_Request):
    frame: Annotated[int, Field(ge=1)] | None = None
    """The frame's id; give this or `cell_id`."""
    cell_id: NonEmpty | None = None
    """A notebook cell's id: its latest active frame; give this or `frame`."""
    force: bool = False
    """Also overwrite paths changed since the frame (conflicts)."""
    include_external: bool = False
    """Also revert changes made outside this kernel (JupyterLab saves, other programs)."""
    keep_uncertain: bool = False
    """Leave alone the changes whose writer could not be established (made while a process of
    the kernel ran; another program may have made them)."""

    @model_validator(mode="after")
    def _one_target(self) -> _FrameTarget:
        if (self.frame is None) == (self.cell_id is None):
            raise ValueError("give exactly one of frame (an integer) or cell_id (a string)")
        return self


class FramesPreview(_FrameTarget):
    """What a rewind to the frame would do (answered by `frames.preview`)."""

    type: Literal["frames.preview"]


class FramesPreviewPage(_FrameTarget):
    """A page of the files of one group of a rewind's preview (answered by
    `frames.preview.page`)."""

    type: Literal["frames.preview.page"]
    group: str
    """The group's `directory`, as the preview sent it."""
    offset: Count = 0
    """Files of the group to skip."""
    limit: Annotated[int, Field(ge=1, le=500)] = 200
    """Files at most."""


class FramesFiles(_Request):
    """A page of the files one frame changed, with their kind and sizes (answered by
    `frames.files`)."""

    type: Literal["frames.files"]
    frame: Annotated[int, Field(ge=1)]
    offset: Count = 0
    """Files to skip, by path."""
    limit: Annotated[int, Field(ge=1, le=500)] = 200
    """Files at most."""


class FramesDiff(_Request):
    """Both sides of one path, a page at a time (answered by `frames.diff`): what the frame
    changed (before: as it opened; after: as it left), or with `preview`, what a rewind to the
    frame would change (before: on disk now; after: what the rewind puts back)."""

    type: Literal["frames.diff"]
    frame: Annotated[int, Field(ge=1)]
    path: NonEmpty
    """The workspace-relative path, as `frames.files` or the preview listed it."""
    page: Annotated[int, Field(ge=1)] = 1
    """Which page of lines (1-based); `pages` in the answer says how many there are."""
    preview: bool = False


class FramesRewind(_FrameTarget):
    """Rewind to just before the frame (answered by `frames.rewind`)."""

    type: Literal["frames.rewind"]
    mode: RewindMode = "both"


class FramesUndo(_Request):
    """Undo the most recent rewind (answered by `frames.undo`)."""

    type: Literal["frames.undo"]
    force: bool = False
    """Also overwrite paths changed since the rewind."""


class FramesResume(_Request):
    """Complete an interrupted rewind (answered by `frames.resume`)."""

    type: Literal["frames.resume"]
    force: bool = False
    """Also overwrite paths changed since the rewind began."""


class FramesCalls(_Request):
    """The tool calls of one frame, for the *Rewind this call* buttons (answered by
    `frames.calls`)."""

    type: Literal["frames.calls"]
    frame: Annotated[int, Field(ge=1)]
    """The frame's id."""


class FramesRewindCall(_Request):
    """Put back what one tool call changed, its frame staying: `%logician rewind --call ID`
    (answered by `frames.rewind_call`; recorded, resumable and undoable)."""

    type: Literal["frames.rewind_call"]
    call_id: NonEmpty
    """The call's id, as `frames.calls` listed it."""
    force: bool = False
    """Also overwrite the call's paths changed since (conflicts)."""


class DocumentSavedRequest(_Request):
    """JupyterLab saved a document: the running cell's frame attributes it to the user
    (answered by `document.saved`)."""

    type: Literal["document.saved"]
    path: NonEmpty
    """The saved document's server-relative path."""
    time: NonEmpty
    """When it was saved, ISO 8601."""
    notebook: str | None = None
    """Server-relative path of this connection's notebook (tells the kernel the offset to its
    workspace)."""
    server_root: str | None = None
    """The server's root directory, when the Lab knows it."""


class NoticesList(_Request):
    """Ask for this session's notices, newest first (answered by `notices`)."""

    type: Literal["notices.list"]


class NoticesRead(_Request):
    """The user has read the notices up to `up_to` (every one when absent): `%logician
    status` and the status bar stop counting them (answered by `notices.read`)."""

    type: Literal["notices.read"]
    up_to: Annotated[int, Field(ge=1)] | None = None
    """The newest notice id read."""


class NotebookCell(BaseModel):
    """One cell of the live notebook as the frontend reports it."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, use_attribute_docstrings=FIELD_DOCS
    )

    id: NonEmpty
    """The cell's id (nbformat 4.5)."""
    index: Count
    """Its position, 0 at the top."""
    cell_type: Literal["code", "markdown", "raw"]
    source: str
    """The whole source (an outline may send only its head: see `lines`)."""
    lines: Count | None = None
    """Lines of the whole source, when `source` is only its head."""
    execution_count: int | None = None
    output_kinds: list[str] = Field(default_factory=list)
    """`stream`, `error`, `image/png`, ... one per output."""
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    """A cell read in full: each output with `output_type`, its `text` (cut by the frontend
    to a bound, `cut` saying how much), `sizes` (bytes per MIME type), and an error's `ename`,
    `evalue`, `traceback`."""


class NotebookAttach(_Request):
    """This frontend holds the kernel's notebook and answers `notebook.request` (answered by
    `notebook.attached`); a rewind's cell part left pending is sent to it next."""

    type: Literal["notebook.attach"]
    path: str | None = None
    """The notebook's server-relative path."""


class NotebookReply(_Request):
    """The answer to a `notebook.request` (answered by `notebook.received`)."""

    type: Literal["notebook.reply"]
    request: NonEmpty
    """The `request` of the `notebook.request` answered."""
    error: str | None = None
    """Why the request failed (an unknown cell id, a notebook being closed); nothing changed."""
    path: str | None = None
    """The notebook's server-relative path."""
    cells: list[NotebookCell] | None = None
    """`outline`: every cell, its source cut to its head."""
    cell: NotebookCell | None = None
    """`cell`: the cell in full."""
    before: NotebookCell | None = None
    """`edit`: the cell before (None for an insert)."""
    after: NotebookCell | None = None
    """`edit`: the cell after (None for a delete)."""
    applied: list[str] = Field(default_factory=list)
    """`restore`: the cell ids changed. `run`: the cell ids whose execution started."""
    conflicts: list[str] = Field(default_factory=list)
    """`restore`: cell ids the user changed since: left alone (unless `force`). `run`: cells
    not run, their source changed since the agent asked."""
    missing: list[str] = Field(default_factory=list)
    """`restore`, `run`: cell ids no longer in the notebook."""


class ModelsList(_Request):
    """Ask for the models the picker offers (answered by `models`)."""

    type: Literal["models.list"]


class ModelUse(_Request):
    """Use this model for this kernel's session (answered by `model.use`)."""

    type: Literal["model.use"]
    model: NonEmpty
    """The model's name as the provider knows it."""


class ModelDefault(_Request):
    """*Make default*: persist this model (and the profile in use) to the user config file,
    as `%logician config set --persist user` does (answered by `model.default`)."""

    type: Literal["model.default"]
    model: NonEmpty
    """The model's name as the provider knows it."""


class ModelConnect(_Request):
    """*Connect a model*: check the server with one request and the key, store the key in the
    user's credentials file (never the workspace, a config file or the Lab's settings), write
    a profile naming it and use that profile this session (answered by `model.connect`)."""

    type: Literal["model.connect"]
    provider: Literal["openai", "anthropic"]
    """The wire format: `openai` (any OpenAI-compatible server) or `anthropic`."""
    base_url: str | None = None
    """The server's API URL (`http://localhost:11434/v1`); the provider's public API when
    absent."""
    api_key: Annotated[str, Field(max_length=4096)] | None = None
    """The key; absent for a server that needs none. Never echoed (an error does not repeat
    it)."""
    model: str | None = None
    """The model to use; the server's first listed model when absent."""
    name: Annotated[str, Field(max_length=64)] | None = None
    """The profile's (and the stored key's) name; from the server's host when absent."""


class ConfigShow(_Request):
    """Ask for the effective configuration, as `%logician config` shows it (answered by
    `config`)."""

    type: Literal["config.show"]


class ConfigSet(_Request):
    """`%logician config set KEY VALUE [--persist user]` (answered by `config.set`)."""

    type: Literal["config.set"]
    key: NonEmpty
    """The dotted key, e.g. `budget.max_turns`."""
    value: str
    """A TOML literal, else taken as a bare string (as `config set` reads it)."""
    persist: Literal["session", "user"] = "session"
    """`session`: this kernel only; `user`: also written to the user config file."""


FrontendMessage = Annotated[
    ApprovalsList
    | ApprovalDecide
    | StatusRequest
    | FramesList
    | FramesPreview
    | FramesPreviewPage
    | FramesFiles
    | FramesDiff
    | FramesRewind
    | FramesUndo
    | FramesResume
    | FramesCalls
    | FramesRewindCall
    | DocumentSavedRequest
    | NoticesList
    | NoticesRead
    | NotebookAttach
    | NotebookReply
    | ModelsList
    | ModelUse
    | ModelDefault
    | ModelConnect
    | ConfigShow
    | ConfigSet,
    Field(discriminator="type"),
]
"""Everything a frontend may send."""

FRONTEND: TypeAdapter[FrontendMessage] = TypeAdapter(FrontendMessage)


# -- kernel -> frontend: the parts ----------------------------------------------------------


class _Part(BaseModel):
    # Extra keys pass: a newer kernel may add a field an older frontend ignores.
    model_config = ConfigDict(extra="allow", use_attribute_docstrings=FIELD_DOCS)


class McpServer(_Part):
    """One MCP server as the status shows it."""

    name: str
    state: McpState
    tools: Count
    """Tools it offers."""
    stale: bool | MISSING = MISSING
    """Whether its tool list may be out of date."""
    error: str | None | MISSING = MISSING


StatusPhase = Phase | Literal["rewinding"]
"""The agent's phase, or `rewinding` while a rewind, undo or resume restores paths."""


class Status(_Part):
    """The runtime status the sidebar and the status bar show."""

    thread: str | None
    phase: StatusPhase
    model: str
    frames: Count
    """Active frames."""
    running_cell: bool | MISSING = MISSING
    turn: int | MISSING = MISSING
    tool_calls: int | MISSING = MISSING
    input_tokens: Count
    output_tokens: Count
    cost_usd: float | None | MISSING = MISSING
    budget: dict[str, int | float] | MISSING = MISSING
    """The run budget's limits in force, by name."""
    pending_approvals: Count | MISSING = MISSING
    last_outcome: str | None | MISSING = MISSING
    audit_problems: Count | MISSING = MISSING
    """Records of .logician/audit.jsonl that fail their checksum or carry none; 0 when intact."""
    mcp: list[McpServer] | MISSING = MISSING
    """The MCP servers."""
    unread_notices: Count | MISSING = MISSING
    """Notices not read yet (in the sidebar or with `%logician notices`)."""
    undo_refused: str | None | MISSING = MISSING
    """Why *Undo rewind* is off now (null: there is a rewind to undo)."""


class NoticeRow(_Part):
    """One notice: something Logician says unasked, kept out of the cells' outputs."""

    id: Annotated[int, Field(ge=1)]
    """1, 2, ... in the order said this session."""
    text: str
    time: str
    """When it was said, ISO 8601 UTC."""
    frame: int | None
    """The frame it is about; null when said between cells (at the kernel's start)."""
    execution_count: int | None
    """The cell (`In [n]`) running when it was said."""
    cell_id: str | None
    critical: bool
    """It says Logician stopped recording something (frames off, capture failed)."""
    read: bool


class FrameRow(_Part):
    """One frame in the sidebar's list."""

    frame: Annotated[int, Field(ge=1)]
    execution_count: int | None
    cell_id: str | None
    code: Annotated[str, Field(max_length=240)]
    """The cell's code, cut short."""
    time: str
    """When the frame opened, ISO 8601."""
    outcome: str | None
    status: Literal["open", "active", "rewound"]
    rewound_at: str | None | MISSING = MISSING
    rewound_by: int | None | MISSING = MISSING
    """The ledger entry of the rewind that popped it."""
    files: Count
    """Paths it changed."""
    skipped: Count | MISSING = MISSING
    evicted: Annotated[list[str], Field(max_length=20)] | MISSING = MISSING
    """Paths whose large pre-image the disk budget evicted (absent when none was)."""
    incomplete: str | MISSING = MISSING
    """"rewind incomplete: N path(s) failed" while a rewind of it left paths failed."""
    input_tokens: Count
    output_tokens: Count


class PathDetail(_Part):
    """A path and what about it."""

    path: str
    detail: str


class CallLine(_Part):
    """One tool call of a frame, as its *Rewind this call* button shows it."""

    id: str
    tool: str
    words: str
    """A few words: the bash command, the path written, the code's first line."""
    files: list[str]
    """The files attribution credited to the call."""
    undoable: bool
    """Whether `rewind --call` can take it back now."""
    why_not: str
    """Why not, when it cannot ("it changed no file", "already rewound ...")."""
    rewound: bool
    """A call rewind took it back (and was not undone)."""


class PreviewFile(_Part):
    """What a rewind would do to one path."""

    path: str
    action: Literal["restore", "delete", "recreate"]
    """`delete`: a popped cell created it; `recreate`: a popped cell deleted it (absent now);
    `restore`: its bytes are put back."""


class CellStep(_Part):
    """What a rewind would do to one cell the agent edited."""

    id: str
    """The cell's id."""
    action: Literal["remove", "restore", "re-insert"]
    detail: str
    """In words, e.g. `inserted by the agent → removed`."""


class PreviewGroup(_Part):
    """The files of one directory a rewind would touch, counted."""

    directory: str
    """`data/parts/`; `` for the workspace's top level."""
    below: bool
    """It also holds the files of its subdirectories (folded to keep the groups few)."""
    delete: Count
    """Files the rewind deletes (the popped cells created them)."""
    restore: Count
    """Files it brings back as they were (changed or deleted by the popped cells)."""
    recreate: Count
    """Of `restore`, the files the popped cells deleted (the rewind recreates them)."""


class PreviewCell(_Part):
    """A cell whose frame the rewind pops."""

    frame: int
    execution_count: int | None
    """Its `In [n]`; null when unknown."""


class VariableStep(_Part):
    """What a rewind would do to one user variable."""

    name: str
    action: Literal["restore", "delete", "not-restorable", "not-live"]
    detail: str | MISSING = MISSING


# -- kernel -> frontend: the messages -------------------------------------------------------


class _Kernel(_Part):
    v: Version
    """The schema version the kernel speaks."""


class _Answer(_Kernel):
    re: RequestId | MISSING = MISSING
    """The `id` of the request answered, when it had one."""


class Hello(_Kernel):
    """Sent when the comm opens."""

    type: Literal["hello"]
    pending: list[ApprovalPrompt]
    status: Status | MISSING = MISSING
    """Absent when the status could not be read."""
    notices: Annotated[list[NoticeRow], Field(max_length=200)] | MISSING = MISSING
    """This session's notices so far, newest first (the latest 200)."""


class Error(_Answer):
    """A request that was unknown, malformed, or failed."""

    type: Literal["error"]
    error: NonEmpty
    """What is wrong, naming the field."""


class Approvals(_Answer):
    type: Literal["approvals"]
    pending: list[ApprovalPrompt]


class ApprovalDecided(_Answer):
    type: Literal["approval.decided"]
    ok: bool
    """False when the request was unknown or already decided (the first answer wins)."""
    request_id: str


class StatusMessage(_Answer, Status):
    """The status: asked for, or pushed while it changes (at most `STATUS_PUSH_HZ` a second)."""

    type: Literal["status"]


class Frames(_Answer):
    type: Literal["frames"]
    rows: Annotated[list[FrameRow], Field(max_length=500)]
    """Newest first."""
    total: Count
    offset: Count


class FramesPreviewed(_Answer):
    type: Literal["frames.preview"]
    frame: int
    frames: list[int]
    """Every frame the rewind would pop."""
    files: list[PreviewFile]
    """The files (the first `FILES_PAGE` when `files_total` is sent; the rest in pages)."""
    files_total: Count | MISSING = MISSING
    """Files in all."""
    groups: list[PreviewGroup] | MISSING = MISSING
    """The files by directory, with counts (`frames.preview.page` lists a group's files)."""
    cells: list[PreviewCell] | MISSING = MISSING
    """The cells whose frames the rewind pops, oldest first."""
    skipped: list[PathDetail]
    skipped_total: Count | MISSING = MISSING
    conflicts: list[PathDetail]
    conflicts_total: Count | MISSING = MISSING
    external: list[PathDetail] | MISSING = MISSING
    """Paths changed outside this kernel only: left alone unless include_external."""
    external_total: Count | MISSING = MISSING
    messages_dropped: Count
    variables: list[VariableStep] | MISSING = MISSING
    cell_edits: list[CellStep] | MISSING = MISSING
    """The agent's cell edits the rewind would take back, newest first (a cell the user
    edited since is a conflict the notebook finds when it applies them)."""
    error: str | MISSING = MISSING
    """Why no rewind is possible (the lists are then empty)."""


class FramesPreviewPaged(_Answer):
    type: Literal["frames.preview.page"]
    frame: int
    group: str
    rows: Annotated[list[PreviewFile], Field(max_length=500)]
    total: Count
    """Files of the group in all."""
    offset: Count


class FileRow(_Part):
    """One file a frame changed."""

    path: str
    action: str
    kind: Literal["text", "csv", "image", "notebook", "binary"]
    before_size: Count | None
    after_size: Count | None


class FramesFilesListed(_Answer):
    type: Literal["frames.files"]
    frame: int
    rows: Annotated[list[FileRow], Field(max_length=500)]
    total: Count
    """Files the frame changed in all."""
    offset: Count


class DiffCell(_Part):
    """One notebook cell of a side."""

    cell_type: str
    source: str


class DiffSide(_Part):
    """One side of a file's diff."""

    state: Literal["absent", "file", "uncaptured", "refused"]
    """`refused`: a symlink or a non-file on the way (`note` names it), not followed."""
    size: Count | None
    sha256: str | None
    pages: Count
    """Pages of lines this side has (text and CSV)."""
    page: Count | MISSING = MISSING
    first_line: Count | MISSING = MISSING
    """The line number the page's text starts at."""
    text: str | MISSING = MISSING
    """The page's lines (text and CSV)."""
    mime: str | MISSING = MISSING
    data: str | MISSING = MISSING
    """An image's bytes, base64 (bounded; absent above the bound, `note` says so)."""
    cells: list[DiffCell] | MISSING = MISSING
    """A notebook's cells."""
    note: str | MISSING = MISSING


class CellMatch(_Part):
    """One row of a notebook's diff as nbdime matched it: a cell of before, of after, or of
    both."""

    before: Count | None
    """Its index among the before side's cells (None: added)."""
    after: Count | None
    """Its index among the after side's cells (None: removed)."""
    status: Literal["same", "changed", "added", "removed", "moved"]
    """`changed`: its source changed; `moved`: the same cell elsewhere (`before` is where it
    was)."""
    changed: list[str]
    """What changed in the cell: `source`, `outputs`, `execution_count`, `metadata`, ..."""


class FramesDiffed(_Answer):
    type: Literal["frames.diff"]
    frame: int
    path: str
    kind: Literal["text", "csv", "image", "notebook", "binary"]
    preview: bool
    page: Count
    pages: Count
    """Pages of the longer side."""
    before: DiffSide
    after: DiffSide
    cell_matches: list[CellMatch] | MISSING = MISSING
    """A notebook's cells matched by nbdime, in order (sent only where nbdime is importable
    in the kernel; without it the view diffs the cells' sources)."""


class FramesRewound(_Answer):
    type: Literal["frames.rewind"]
    ok: Literal[True]
    frame: int
    frames: list[int]
    conflicts: list[str]
    external: list[str] | MISSING = MISSING
    """Paths left alone because they were changed outside this kernel."""
    summary: str
    headline: str | MISSING = MISSING
    """One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast."""


class FramesCallsListed(_Answer):
    type: Literal["frames.calls"]
    frame: int
    calls: Annotated[list[CallLine], Field(max_length=500)]
    """In the order they ran."""


class FramesCallRewound(_Answer):
    type: Literal["frames.rewind_call"]
    ok: Literal[True]
    call_id: str
    frame: int | None
    """The frame whose call it was (it stays)."""
    restored: list[str]
    """Paths put back (restored, deleted or recreated)."""
    left: list[PathDetail]
    """Paths left alone (conflicts, skips), with why."""
    summary: str
    headline: str
    """One line in the user's words, for a toast."""


class DocumentSaved(_Answer):
    type: Literal["document.saved"]
    path: str | None
    """Workspace-relative path; null when outside this kernel's workspace."""
    recorded: bool
    """Whether a running cell's frame attributed the save to the user."""


class FramesUndoDone(_Answer):
    type: Literal["frames.undo"]
    ok: Literal[True]
    frames: list[int]
    undoes: int
    """The ledger entry of the rewind undone."""
    conflicts: list[str]
    summary: str
    headline: str | MISSING = MISSING
    """One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast."""


class FramesResumed(_Answer):
    type: Literal["frames.resume"]
    ok: Literal[True]
    frames: list[int]
    conflicts: list[str]
    summary: str
    headline: str | MISSING = MISSING
    """One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast."""


class Notices(_Answer):
    type: Literal["notices"]
    rows: Annotated[list[NoticeRow], Field(max_length=200)]
    """Newest first (the latest 200)."""
    unread: Count


class NoticesReadDone(_Answer):
    type: Literal["notices.read"]
    unread: Count
    """Notices still unread."""


class ProfileModel(_Part):
    """A configured profile and the model it names."""

    name: str
    model: str | None
    """Its `model.name`; null when it names none."""


class Models(_Answer):
    type: Literal["models"]
    current: str
    """The model this session uses now."""
    provider: str
    profiles: list[ProfileModel]
    served: Annotated[list[str], Field(max_length=1000)]
    """The models the configured server lists (empty without a `base_url`)."""
    served_error: str | None
    """Why the server's list could not be read; null when it answered (or was not asked)."""
    profile: str | None | MISSING = MISSING
    """The profile in use; null when none is selected."""
    configured: dict[str, dict[str, int | float]] | MISSING = MISSING
    """Model -> the `context_window`, `input_per_mtok`, `output_per_mtok` the configuration
    sets for it (`model.context_window`, `budget.prices`, a profile's own)."""
    served_facts: dict[str, dict[str, Any]] | MISSING = MISSING
    """Model -> what the server's `/v1/models` entry says of it, as sent: OpenRouter's
    `context_length` and `pricing`, vLLM's `max_model_len`, llama.cpp's `meta`."""
    known: dict[str, dict[str, int | float]] | MISSING = MISSING
    """Model -> the built-in table's `context_window`, `input_per_mtok`, `output_per_mtok`
    (the figures the budget prices by), for each listed model the table knows."""


class ModelUsed(_Answer):
    type: Literal["model.use"]
    model: str
    """The model this session uses from the next request on."""
    said: str
    """What `%logician config set` says of it."""


class ModelDefaulted(_Answer):
    type: Literal["model.default"]
    model: str
    """The model in use (and now the default)."""
    said: str
    """What was written where, as `%logician config set --persist user` says it."""
    file: str
    """The user config file written."""


class ModelConnected(_Answer):
    type: Literal["model.connect"]
    ok: bool
    """False: nothing was stored or written (see `field` and `error`)."""
    field: str | None | MISSING = MISSING
    """The form field to fix (`base_url`, `api_key`, `model`, `name`, `provider`); null when
    the problem is not one field's."""
    error: str | MISSING = MISSING
    """Why not, never repeating the key."""
    profile: str | MISSING = MISSING
    """The profile written (and in use this session)."""
    provider: str | MISSING = MISSING
    base_url: str | MISSING = MISSING
    """The server's URL as the provider uses it."""
    model: str | MISSING = MISSING
    """The model in use now."""
    models: Annotated[list[str], Field(max_length=1000)] | MISSING = MISSING
    """The models the server lists."""
    key: str | None | MISSING = MISSING
    """The key stored, masked (`sk-…abcd`); null when none was given."""
    key_file: str | None | MISSING = MISSING
    """The credentials file holding it (mode 0600, outside the workspace)."""
    config_file: str | MISSING = MISSING
    """The user config file the profile was written to."""
    said: str | MISSING = MISSING


class ConfigLayerRow(_Part):
    """One layer of the configuration and whether it applies."""

    name: str
    source: str
    status: str


class ConfigRow(_Part):
    """One effective key."""

    key: str
    value: Any
    """Its value (secrets masked)."""
    text: str
    """The value as `config set` reads it back (a TOML literal; `(unset)`)."""
    layer: str
    """The layer that set it: default, user, project, profile, env or session."""
    where: str
    """Where in that layer (a file and line, an environment variable)."""
    restart_required: bool


class ConfigShown(_Answer):
    """The effective configuration, as `%logician config` shows it."""

    type: Literal["config"]
    workspace: str
    trusted: bool
    layers: list[ConfigLayerRow]
    notices: list[str]
    """The problems `%logician config` lists (a layer left out, a key dropped)."""
    dropped: list[str]
    held_back: list[str]
    """Gated project fields not applied."""
    model_refusal: str | None
    """Why model calls are refused; null when they may go."""
    api_key: str | None
    """Where the key comes from and whether it is there (never the key)."""
    rows: Annotated[list[ConfigRow], Field(max_length=2000)]


class ConfigSetDone(_Answer):
    type: Literal["config.set"]
    ok: bool
    key: str
    said: str | MISSING = MISSING
    """What `config set` says (the new value, the file written)."""
    error: str | MISSING = MISSING
    """Why the value was refused, naming the key; nothing changed."""


class NoticeSaid(_Kernel):
    """Announced when Logician says a notice (under `ui.notices = "sidebar"`)."""

    type: Literal["notice"]
    notice: NoticeRow
    unread: Count


class FramesUndone(_Kernel):
    """Announced after an undo made frames active again."""

    type: Literal["frames.undone"]
    frames: list[int]
    cell_ids: list[str]
    at: str
    by: int
    undoes: int


class FramesChanged(_Kernel):
    """Announced after every cell."""

    type: Literal["frames.changed"]
    total: Count


class FramesRewoundNotice(_Kernel):
    """Announced after every rewind (a frontend greys out the cells of rewound frames)."""

    type: Literal["frames.rewound"]
    frames: list[int]
    cell_ids: list[str]
    at: str
    by: int


class RestoreProgressMessage(_Kernel):
    """Announced while a rewind, undo or resume restores paths, or a full scan reads them
    (`first_snapshot`; `capture`: a later scan reading a cell's thousands of new files):
    before the first, then at most `PROGRESS_HZ` times a second, and once `finished`; sent
    again to a frontend that opens its comm mid-work."""

    type: Literal["progress"]
    operation: Literal["rewind", "undo", "resume", "first_snapshot", "capture", "large_capture"]
    done: Count
    """Paths restored (the first snapshot: files read) so far."""
    total: Count
    """Paths to restore (files to read) in all (0: nothing to restore, e.g. the conversation
    only)."""
    finished: bool
    """The operation has ended (done or failed): a frontend hides its bar."""
    path: str | MISSING = MISSING
    """`large_capture`: the big file being copied after a cell (`done`/`total` its bytes)."""


class ApprovalRequested(_Kernel, ApprovalPrompt):
    """Announced when the agent asks: the gate's request, as every view shows it."""

    model_config = ConfigDict(extra="allow", frozen=False)

    type: Literal["approval.requested"]


class ApprovalResolved(_Kernel):
    """Announced when a request was decided, wherever that was."""

    type: Literal["approval.resolved"]
    request_id: str
    choice: ApprovalChoice
    note: str | MISSING = MISSING
    via: ApprovalChannel | MISSING = MISSING


class NotebookAttached(_Answer):
    type: Literal["notebook.attached"]
    pending: Count
    """Cell parts of rewinds waiting for this frontend (sent next as `restore` requests)."""


class NotebookReceived(_Answer):
    type: Literal["notebook.received"]
    known: bool
    """False when no request of that id was waiting (it timed out, or was answered)."""


class NotebookRequest(_Kernel):
    """The kernel asks the frontend holding its notebook (answer with `notebook.reply`)."""

    type: Literal["notebook.request"]
    request: NonEmpty
    """Echo it as the reply's `request`."""
    op: Literal["outline", "cell", "edit", "restore", "run"]
    """`outline`: every cell (sources cut to `head_chars`). `cell`: `cell_id` in full
    (outputs cut to `output_chars`). `edit`: `mode` insert (`source`, `cell_type`, `after_id`
    or `index`), replace (`cell_id`, `source`, optional `cell_type`) or delete (`cell_id`).
    `restore`: `steps` of a rewind or undo, each `{op, id, expect?, source?, cell_type?,
    index?}`, a step whose cell no longer holds `expect` being a conflict unless `force`.
    `run` (sent when the agent's cell ended): `cells`, each `{id, expect}`, to execute in order
    as ordinary cells; one that no longer holds `expect` is a conflict, not run."""
    args: dict[str, Any]
    """The operation's arguments (above)."""


KernelMessage = Annotated[
    Hello
    | Error
    | Approvals
    | ApprovalDecided
    | StatusMessage
    | Frames
    | FramesPreviewed
    | FramesPreviewPaged
    | FramesFilesListed
    | FramesDiffed
    | FramesRewound
    | DocumentSaved
    | FramesUndoDone
    | FramesResumed
    | FramesCallsListed
    | FramesCallRewound
    | Notices
    | NoticesReadDone
    | Models
    | ModelUsed
    | ModelDefaulted
    | ModelConnected
    | ConfigShown
    | ConfigSetDone
    | NoticeSaid
    | FramesUndone
    | FramesChanged
    | FramesRewoundNotice
    | RestoreProgressMessage
    | ApprovalRequested
    | ApprovalResolved
    | NotebookAttached
    | NotebookReceived
    | NotebookRequest,
    Field(discriminator="type"),
]
"""Everything the kernel sends: answers (with `re`) and announcements."""

KERNEL: TypeAdapter[KernelMessage] = TypeAdapter(KernelMessage)


def types_of(union: Any) -> tuple[str, ...]:
    """The `type` tags of a message union, in declaration order."""
    members = get_args(get_args(union)[0])
    return tuple(get_args(m.model_fields["type"].annotation)[0] for m in members)


FRONTEND_TYPES = types_of(FrontendMessage)
KERNEL_TYPES = types_of(KernelMessage)
