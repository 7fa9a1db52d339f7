"""What the kernel sends on the `logician` comm besides frames: the greeting, errors, the
runtime status, approvals, notices, models and profiles, configuration, a document's save,
and the notebook bridge's requests and answers.

Must never: do I/O or talk to a comm (the models are plain data; `comm.py` owns the wire).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import MISSING, ConfigDict, Field

from ..agent.approvals import ApprovalPrompt
from ..types.approvals import ApprovalChannel, ApprovalChoice
from ..types.status import McpState, Phase
from .comm_base import Count, NonEmpty, _Answer, _Kernel, _Part


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


class DocumentSaved(_Answer):
    type: Literal["document.saved"]
    path: str | None
    """Workspace-relative path; null when outside this kernel's workspace."""
    recorded: bool
    """Whether a running cell's frame attributed the save to the user."""


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
