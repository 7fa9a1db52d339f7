"""Policy for one agent run: the permission gate with its approval asker, the run controller.

The asker runs on the agent's worker loop: it opens a request in the session's approval broker,
hands it to whoever consumes the run (the kernel's main thread shows a card; a script calls its
`approve` callback) through the run's queue, and awaits the answer - a click on the card, a
`logician` comm message, a stdin answer, the callback, whichever comes first. "Always allow" persists exactly one
rule into the user configuration through its atomic single-field update. With no one to ask,
the gate follows `permissions.headless`.
"""

from __future__ import annotations

import asyncio
import queue
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import LogicianSettings
from ..config import commands as config_commands
from ..ledger.thread_ledger import (
    ApprovalRequested,
    ApprovalResolved,
    ProjectionItem,
    ThreadLedger,
)
from ..loop.compaction_policy import CompactionPolicy
from ..loop.prompt import system_prompt
from ..policy import (
    AcceptanceCheck,
    ApprovalRequest,
    ApprovalResolution,
    AuditLog,
    PermissionPolicy,
    PolicyGate,
    RunBudget,
    RunController,
)
from ..providers import resolve_context_window
from ..types.approvals import ApprovalChannel
from ..types.run import RunBudgetLimits
from ..workspace import Workspace
from .approvals import ApprovalBroker, Pending, preview


@dataclass(frozen=True)
class RunOptions:
    """What a run overrides of the configured budget and mode (a cell's options)."""

    max_turns: int | None = None
    """Model requests allowed in this run."""
    max_tool_calls: int | None = None
    """Tool calls allowed in this run."""
    budget_usd: float | None = None
    """Cost allowed in this run, in US dollars."""
    mode: str | None = None
    """The permission mode for this run."""
    accept: str | None = None
    """An acceptance check (a command, or `py:EXPRESSION`) that must pass before completion."""
    profile: str | None = None
    """A configuration profile (`[profiles.NAME]`) applied for this run only."""


@dataclass
class ApprovalItem:
    """Asks the run's consumer to get a decision on `pending`."""

    pending: Pending
    """The broker's open request: the gate's `ApprovalRequest` (the call, its arguments with
    secrets masked, why it asks, its preview) and the future its answer resolves."""

    @property
    def request(self) -> ApprovalRequest:
        """The request to decide."""
        return self.pending.request


def build_controller(runtime: Workspace, options: RunOptions) -> RunController:
    settings = runtime.config.settings
    limits = RunBudgetLimits.from_settings(
        settings.budget,
        max_turns=options.max_turns,
        max_tool_calls=options.max_tool_calls,
        max_cost_usd=options.budget_usd,
    )
    budget = RunBudget(limits, prices=settings.budget.prices, model=settings.model.name)
    acceptance = AcceptanceCheck.parse(options.accept) if options.accept else None
    return RunController(budget, acceptance)


def build_gate(
    runtime: Workspace,
    options: RunOptions,
    *,
    policy: PermissionPolicy,
    broker: ApprovalBroker,
    requests: queue.Queue[Any],
    frame: int | None,
    headless: bool,
    secrets: tuple[str, ...],
) -> PolicyGate:
    config = runtime.config
    workspace = config.workspace
    ledger = runtime.ledger
    channels: dict[str, ApprovalChannel] = {}

    async def ask(request: ApprovalRequest) -> ApprovalResolution:
        kind, text = preview(request.tool, request.arguments, policy.base_dir())
        pending = broker.open(request.model_copy(update={"preview_kind": kind, "preview": text}))
        # Durable before anyone is asked: a kernel killed while the card waits leaves a
        # record the restart can name ("this call was waiting for your decision").
        record_request(request)
        requests.put(ApprovalItem(pending))
        try:
            answer = await asyncio.wrap_future(pending.future)
        except asyncio.CancelledError:
            # An interrupt (or the wall-time budget) gave the call up unanswered: settled now,
            # so the next restart does not report it as waiting when the kernel stopped.
            if ledger is not None:
                ledger.append(
                    ApprovalResolved,
                    request_id=pending.id,
                    choice="deny",
                    via="interrupted",
                    note="the run stopped before anyone answered",
                    durable=True,
                )
            raise
        channels[request.call_id] = answer.via
        rule = request.suggested_rule
        if answer.choice == "always_allow" and rule:
            persist_rule(runtime, rule)
        return ApprovalResolution(
            call_id=request.call_id,
            choice=answer.choice,
            note=answer.note,
            rule=rule if answer.choice in ("allow_session", "always_allow") else None,
        )

    recorded: set[str] = set()

    def record_request(request: ApprovalRequest) -> None:
        if ledger is None or request.request_id in recorded:
            return
        recorded.add(request.request_id)
        ledger.append(
            ApprovalRequested,
            frame=frame,
            request_id=request.request_id,
            call_id=request.call_id,
            tool=request.tool,
            description=request.description,
            reason=request.reason,
            durable=True,
        )

    def record(request: ApprovalRequest, resolution: ApprovalResolution) -> None:
        if ledger is None:
            return
        record_request(request)  # a headless decision was never asked
        ledger.append(
            ApprovalResolved,
            request_id=request.request_id,
            choice=resolution.choice,
            via="headless"
            if resolution.by == "headless"
            else channels.get(request.call_id, "widget"),
            note=resolution.note,
            rule=resolution.rule,
            durable=True,
        )

    return PolicyGate(
        policy,
        AuditLog.for_workspace(workspace),
        ask=None if headless else ask,
        record=record,
        mode=options.mode,
        thread=runtime.thread_id,
        frame=frame,
        secrets=secrets,
        headless=config.settings.permissions.headless,
    )


def compaction_policy(settings: LogicianSettings, ledger: ThreadLedger) -> CompactionPolicy | None:
    """The thread's compaction settings, with how many summaries it has had since its last
    run checkpoint (a new harness is built per run; the count lives in the ledger)."""
    section = settings.compaction
    if not section.enabled:
        return None
    so_far = 0
    for entry in ledger.entries:
        if isinstance(entry, ProjectionItem) and entry.reason == "compaction":
            so_far = 0 if "run-checkpoint" in entry.note else so_far + 1
    return CompactionPolicy(
        context_window=resolve_context_window(settings.model).tokens,
        threshold_fraction=section.threshold_fraction,
        keep_recent_turns=section.keep_recent_turns,
        max_compactions_before_checkpoint=section.max_compactions_before_checkpoint,
        compactions_so_far=so_far,
    )


def persist_rule(runtime: Workspace, rule: str) -> None:
    """Add one allow rule to the user file (one field, atomically) and use the new snapshot."""
    config = runtime.config
    current = list(config.layer("user").data.get("permissions", {}).get("allow", []))
    if rule in current:
        return
    literal = "[" + ", ".join(_toml_string(r) for r in [*current, rule]) + "]"
    new, _ = config_commands.config_set(config, "permissions.allow", literal, persist="user")
    runtime.use_config(new)


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def current_directory() -> Path | None:
    """Where the user's cells run (the kernel's current directory: the notebook's folder, or
    where `%cd` went), or None when it is gone. The tools resolve relative paths there, as
    `!ls` and `open()` do in a cell; the workspace still bounds everything."""
    try:
        return Path.cwd()
    except OSError:  # the folder was deleted under the kernel
        return None


def prompt_for(policy: PermissionPolicy) -> str:
    """The system prompt, naming where relative paths resolve when that is not the top of the
    workspace."""
    return system_prompt(policy.base_dir().relative_to(policy.workspace).as_posix() or ".")
