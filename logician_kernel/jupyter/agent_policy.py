"""Policy for one agent cell: the permission gate with its approval asker, the run controller.

The asker runs on the agent's worker loop: it opens a request in the kernel's approval broker,
hands the card to the main thread through the run's queue, and awaits the answer - a click on
the card, a `logician` comm message, whichever comes first. "Always allow" persists exactly one
rule into the user configuration through its atomic single-field update. With no one to ask,
the gate follows `permissions.headless`.
"""

from __future__ import annotations

import asyncio
import queue
from dataclasses import dataclass
from typing import Any

from ..config import commands as config_commands
from ..policy import (
    AcceptanceCheck,
    ApprovalRequest,
    ApprovalResolution,
    AuditLog,
    PermissionPolicy,
    PolicyGate,
    RunBudget,
    RunController,
    config_layer_of,
)
from ..runtime import LogicianRuntime
from ..session.thread_ledger import ApprovalRequested, ApprovalResolved
from ..types.run import RunBudgetLimits
from .approvals import ApprovalBroker, Pending, preview


@dataclass(frozen=True)
class RunOptions:
    """What a `%%logician` cell's options override for its run."""

    max_turns: int | None = None
    max_tool_calls: int | None = None
    budget_usd: float | None = None
    mode: str | None = None
    accept: str | None = None


@dataclass
class ApprovalItem:
    """Asks the main thread to show an approval card for `pending`."""

    pending: Pending


def build_controller(runtime: LogicianRuntime, options: RunOptions) -> RunController:
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
    runtime: LogicianRuntime,
    options: RunOptions,
    *,
    broker: ApprovalBroker,
    requests: queue.Queue[Any],
    frame: int | None,
    headless: bool,
    secrets: tuple[str, ...],
) -> PolicyGate:
    config = runtime.config
    workspace = config.workspace
    ledger = runtime.session.ledger
    policy = runtime.permission_policy(
        lambda: PermissionPolicy(
            config.settings.permissions, workspace=workspace, layer_of=config_layer_of(config)
        )
    )
    request_ids: dict[str, str] = {}

    async def ask(request: ApprovalRequest) -> ApprovalResolution:
        kind, text = preview(request.tool, request.arguments, workspace)
        pending = broker.open(
            {
                "call_id": request.call_id,
                "tool": request.tool,
                "description": request.description,
                "reason": request.reason,
                "suggested_rule": request.suggested_rule or "",
                "preview_kind": kind,
                "preview": text,
            }
        )
        request_ids[request.call_id] = pending.id
        requests.put(ApprovalItem(pending))
        answer = await asyncio.wrap_future(pending.future)
        rule = request.suggested_rule
        if answer.choice == "always_allow" and rule:
            persist_rule(runtime, rule)
        return ApprovalResolution(
            call_id=request.call_id,
            choice=answer.choice,
            note=answer.note,
            rule=rule if answer.choice in ("allow_session", "always_allow") else None,
        )

    def record(request: ApprovalRequest, resolution: ApprovalResolution) -> None:
        if ledger is None:
            return
        request_id = request_ids.get(request.call_id, request.call_id)
        ledger.append(ApprovalRequested, frame=frame, request_id=request_id,
                      call_id=request.call_id, tool=request.tool,
                      description=request.description, reason=request.reason)  # fmt: skip
        ledger.append(ApprovalResolved, request_id=request_id, choice=resolution.choice,
                      via="headless" if resolution.by == "headless" else "user",
                      note=resolution.note, rule=resolution.rule, durable=True)  # fmt: skip

    return PolicyGate(
        policy,
        AuditLog.for_workspace(workspace),
        ask=None if headless else ask,
        record=record,
        mode=options.mode,
        thread=runtime.session.thread_id,
        frame=frame,
        secrets=secrets,
        headless=config.settings.permissions.headless,
    )


def persist_rule(runtime: LogicianRuntime, rule: str) -> None:
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
