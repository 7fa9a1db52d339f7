"""The permission gate: the harness asks it before every tool call may run.

`PermissionGate` is the protocol the harness depends on; `PolicyGate` is the implementation
over a `PermissionPolicy` and an `AuditLog`: it decides, asks the user when the policy says
`ask` (through an `ask` callable the kernel supplies - the approval widget; without one, as in
a headless run, nobody can be asked and the call is denied), audits every decision durably
before the call may run (a cell edit that also runs the cell is decided as `notebook_run`:
`decided_as`), and hands each action-required decision to `record` as a typed
`ApprovalRequest` and its `ApprovalResolution`, for the ledger. Routine allows are only
audited: they never reach `record`, the transcript or the cell.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..durable.redact import redact
from ..tools import Tool
from ..types.approvals import ApprovalChoice, PreviewKind
from ..types.field_docs import FIELD_DOCS
from ..types.messages import ToolCall
from ..types.run import RunOutcome
from .audit import AuditEntry, AuditLog, Resolution, mask_arguments
from .permissions import PermissionDecision, PermissionPolicy


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict on one call."""

    allowed: bool
    """Whether the call may run."""
    note: str = ""
    """For a refused call: why, in words for the model (it goes into the error result)."""
    outcome: RunOutcome | None = None
    """Set when the run must stop now with this outcome (e.g. the user chose deny-and-stop)."""


class PermissionGate(Protocol):
    """What the harness asks before each tool call (after planning, before its intent)."""

    async def check(self, call: ToolCall, tool: Tool) -> GateResult:
        """Decide `call`, asking the user if need be, and audit the decision. An exception
        fails the run (a decision that cannot be audited must not let the call run)."""
        ...


_CONFIG = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


def _request_id() -> str:
    return uuid.uuid4().hex[:12]


class ApprovalPrompt(BaseModel):
    """What every view of an approval request shows: the card, the stdin prompt, a `logician`
    comm client (the comm's approval messages are this model). The part of an
    `ApprovalRequest` that leaves the kernel: the arguments never do, the preview shows them."""

    # Sent whole: every field is on the wire, the id and the preview included.
    model_config = ConfigDict(**_CONFIG, json_schema_serialization_defaults_required=True)

    request_id: str = Field(default_factory=_request_id)
    """The id a view answers by (`ApprovalBroker.resolve`); unique per request."""
    call_id: str
    """The call awaiting the decision."""
    tool: str
    """The tool's name."""
    description: str
    """The tool's one-line description of the call, e.g. the command."""
    reason: str
    """Why the policy asks, e.g. `no rule allows this bash command`."""
    suggested_rule: str | None
    """The rule "Always allow" would add; None when it would contain a secret (then only
    "Allow once" makes sense)."""
    preview_kind: PreviewKind = "text"
    """How `preview` reads: a shell command, a unified diff, source code, or prose."""
    preview: str = ""
    """The call in readable form, bounded (the agent fills it in before anyone is asked)."""


class ApprovalRequest(ApprovalPrompt):
    """A tool call the policy wants the user to decide: a ledger entry, never chat text. The
    broker holds it while it waits; every view shows its `ApprovalPrompt` part."""

    kind: Literal["approval_request"] = "approval_request"
    """Discriminator."""
    arguments: dict[str, Any]
    """The call's arguments, secrets masked."""
    mode: str
    """The permission mode in force."""


class ApprovalResolution(BaseModel):
    """How an approval request was settled."""

    model_config = _CONFIG

    kind: Literal["approval_resolution"] = "approval_resolution"
    """Discriminator."""
    call_id: str
    """The call decided."""
    choice: ApprovalChoice
    """What was chosen."""
    by: Literal["user", "headless"] = "user"
    """`user`: answered in the notebook; `headless`: nobody could be asked, so denied."""
    rule: str | None = None
    """For `allow_session` / `always_allow`: the rule allowed (the suggestion unless the user
    edited it; filled in by the gate)."""
    note: str = ""
    """What the user said, if anything; passed to the model on a denial."""


Asker = Callable[[ApprovalRequest], Awaitable[ApprovalResolution]]
Recorder = Callable[[ApprovalRequest, ApprovalResolution], None]


class PolicyGate:
    """`PermissionGate` over a policy and an audit log, for one run."""

    def __init__(
        self,
        policy: PermissionPolicy,
        audit: AuditLog,
        *,
        ask: Asker | None = None,
        record: Recorder | None = None,
        mode: str | None = None,
        thread: str | None = None,
        frame: int | None = None,
        secrets: Iterable[str] = (),
        headless: Literal["deny", "allow"] = "deny",
    ) -> None:
        """`mode` overrides the configured mode for this run (a cell's `--mode`); `ask`
        None means nobody can be asked: every ask then follows `headless` (the configured
        `permissions.headless`, deny by default); `secrets` are masked in everything written."""
        self.policy = policy
        self.audit = audit
        self.ask = ask
        self.record = record
        self.mode = mode
        self.thread = thread
        self.frame = frame
        self.secrets = tuple(s for s in secrets if s)
        self.headless = headless

    async def check(self, call: ToolCall, tool: Tool) -> GateResult:
        name = decided_as(call)
        decision = self.policy.decide(name, tool.read_only, call.arguments, mode=self.mode)
        if decision.action == "allow":
            resolution: Resolution = _automatic(decision)
            self._audit(call, decision, allowed=True, resolution=resolution)
            return GateResult(True)
        if decision.action == "deny":
            self._audit(call, decision, allowed=False, resolution=_automatic(decision))
            return GateResult(False, note=f"denied by the permission policy: {decision.reason}")
        return await self._ask(call, tool, decision)

    async def _ask(self, call: ToolCall, tool: Tool, decision: PermissionDecision) -> GateResult:
        suggested: str | None = self.policy.suggest_rule(decided_as(call), call.arguments)
        if suggested is not None and redact(suggested, self.secrets) != suggested:
            suggested = None
        request = ApprovalRequest(
            call_id=call.id,
            tool=call.name,
            description=redact(tool.describe(call.arguments), self.secrets),
            arguments=mask_arguments(call.arguments, self.secrets),
            reason=decision.reason,
            suggested_rule=suggested,
            mode=decision.mode,
        )
        if self.ask is None:
            allow = self.headless == "allow"
            answer = ApprovalResolution(
                call_id=call.id,
                choice="allow_once" if allow else "deny",
                by="headless",
                note=(
                    f"{decision.reason}; nobody can be asked in this run, and "
                    f"permissions.headless = {self.headless!r}"
                ),
            )
        else:
            answer = await self.ask(request)
        if answer.choice in ("allow_session", "always_allow"):
            rule = self._allow_for_session(answer.rule, request.suggested_rule)
            answer = answer.model_copy(update={"rule": rule})
        if self.record is not None:
            self.record(request, answer)
        allowed = answer.choice in ("allow_once", "allow_session", "always_allow")
        resolution: Resolution = (
            (f"headless:{'allow' if allowed else 'deny'}")  # type: ignore[assignment]
            if answer.by == "headless"
            else f"user:{answer.choice}"
        )
        self._audit(call, decision, allowed=allowed, resolution=resolution, note=answer.note)
        if allowed:
            return GateResult(True)
        if answer.by == "headless":
            return GateResult(False, note=f"denied: {answer.note}")
        said = f": {answer.note}" if answer.note else ""
        outcome = None
        if answer.choice == "deny_and_stop":
            outcome = RunOutcome(
                status="denied", detail=f"the user denied `{request.description}` and stopped"
            )
        return GateResult(False, note=f"denied by the user{said}", outcome=outcome)

    def _allow_for_session(self, chosen: str | None, suggested: str | None) -> str | None:
        """Add the user's rule (or the suggestion, if theirs is malformed) for the session."""
        for rule in (chosen, suggested):
            if rule:
                try:
                    self.policy.allow_for_session(rule)
                except ValueError:
                    continue
                return rule
        return None

    def _audit(
        self,
        call: ToolCall,
        decision: PermissionDecision,
        *,
        allowed: bool,
        resolution: Resolution,
        note: str = "",
    ) -> None:
        self.audit.record(
            AuditEntry.of(
                decision,
                tool=call.name,
                arguments=call.arguments,
                allowed=allowed,
                resolution=resolution,
                call_id=call.id,
                thread=self.thread,
                frame=self.frame,
                note=note,
                secrets=self.secrets,
            )
        )


RUN_CELL_RULE = "notebook_run"
"""The name a `notebook_edit` call with `run: true` is decided under: it writes a cell and
runs its code, so it is decided as `python` is, over the cell's `source` (asking in `ask` and
`auto-edit`, asking when the code names a protected path, rules such as
`notebook_run(print*)` or a bare `notebook_run`; "Always allow" suggests the exact code)."""


def decided_as(call: ToolCall) -> str:
    """The tool name the policy decides `call` under (see `RUN_CELL_RULE`)."""
    if call.name == "notebook_edit" and call.arguments.get("run") is True:
        return RUN_CELL_RULE
    return call.name


def _automatic(decision: PermissionDecision) -> Resolution:
    if decision.basis == "session_rule":
        return "session"
    return "rule" if decision.rule is not None else "mode"
