"""The thread-ledger kinds of a session and its conversation: the session's start, messages,
the agent's tool calls (intent, outcome, commit, quarantine, what a call may restore and
what watched it), approvals, a run's end, and a recovery from damage.

Must never: do I/O, or grow a kind without a docstring on each field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..types.approvals import ApprovalChoice
from .entry_base import _Entry


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
