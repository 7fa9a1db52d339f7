"""What a frontend may send on the `logician` comm: one strict, frozen pydantic model per
request type, and their closed union `FrontendMessage` (re-exported by `comm_messages.py`).
A message that is not exactly one of them is answered with an `error` naming the field.

Must never: do I/O or talk to a comm (the models are plain data; `comm.py` owns the wire).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from ..types.approvals import ApprovalChoice
from ..types.field_docs import FIELD_DOCS
from ..types.rewind_scope import RewindMode
from .comm_base import Count, NonEmpty, _Request


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


FRONTEND: TypeAdapter[FrontendMessage] = TypeAdapter(
    FrontendMessage, config=ConfigDict(defer_build=True)
)
