"""`CommandHooks`: the user's `[hooks]` commands, run at the harness's hook points.

Each command gets one JSON object on stdin: `event` (the hook point), `workspace`, `thread`,
and per point the tool call (`tool`, `arguments`, `call_id`), its `result` (`post_tool`), the
`prompt` and `model` (`run_start`) or the `outcome` (`run_end`). Secrets are masked by the
one redactor (`session.redact`) before anything leaves the kernel. Commands of one point run
one after another, in configuration order.

A `pre_tool` command exiting 2 denies the call: its stderr is the reason the model is told,
and the denial is an action-required record in the audit log. Any other failure - a non-zero
exit, a timeout, a program that is not there - is reported in the cell (`HookReported`) and
the audit log and changes nothing else: the run goes on. The last result of every command is
kept in a `HookLog` for `%logician hooks`.

Must never: raise into the harness, block past `hooks.timeout_seconds` per command, or leave
a process behind (see `tools/_hook_process.py`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ..config._hooks_schema import HookSettings
from ..durable.redact import redact, redact_data
from ..events.events import HarnessEvent, HookReported
from ..policy.audit import AuditEntry, AuditLog, AuditLogError
from ..policy.permissions import PermissionDecision
from ..tools import ToolResult, bound_output
from ..tools._hook_process import MISSING_PROGRAM, HookProcess, run_hook_command
from ..types.messages import ToolCall
from ..types.run import RunOutcome
from .hooks import Hooks

logger = logging.getLogger("logician_kernel.loop")

HookPoint = Literal["pre_tool", "post_tool", "run_start", "run_end"]
Status = Literal["ok", "denied", "failed", "timed_out", "not_started"]

DENY_EXIT = 2
"""A `pre_tool` command's exit status that denies the call."""

_DETAIL_CHARS = 500


@dataclass(frozen=True)
class HookResult:
    """The last run of one hook command."""

    status: Status
    """`ok`, `denied` (pre_tool exit 2), `failed`, `timed_out` or `not_started`."""
    detail: str
    """The exit status and the start of stderr, or the reason."""
    time: str
    """When it ended, UTC ISO 8601."""
    seconds: float
    """How long it ran."""


@dataclass
class HookLog:
    """The last result of each (hook point, command): what `%logician hooks` shows."""

    last: dict[tuple[str, str], HookResult] = field(default_factory=dict)


class CommandHooks(Hooks):
    """Runs the `[hooks]` commands of one run's settings."""

    def __init__(
        self,
        settings: HookSettings,
        *,
        workspace: Path,
        thread: str | None,
        frame: int | None = None,
        audit: AuditLog | None = None,
        emit: Callable[[HarnessEvent], None] | None = None,
        log: HookLog | None = None,
        layers: Mapping[tuple[str, str], str] | None = None,
        secrets: tuple[str, ...] = (),
        max_result_bytes: int = 32_000,
    ) -> None:
        """`emit` puts a `HookReported` into the run's event stream; `layers` maps (point,
        command) to the configuration layer that set it, for the audit log."""
        self.settings = settings
        self.workspace = workspace
        self.thread = thread
        self.frame = frame
        self.audit = audit
        self.emit = emit
        self.log = log if log is not None else HookLog()
        self.layers = dict(layers or {})
        self.secrets = secrets
        self.max_result_bytes = max_result_bytes

    # -- the hook points ---------------------------------------------------------------------

    async def on_run_start(self, prompt: str, model: str) -> None:
        await self._all("run_start", {"prompt": prompt, "model": model})

    async def on_run_end(self, outcome: RunOutcome, turns: int, tool_calls: int) -> None:
        event = {
            "outcome": outcome.model_dump(mode="json"),
            "turns": turns,
            "tool_calls": tool_calls,
        }
        await self._all("run_end", event)

    async def check_tool(self, call: ToolCall) -> str | None:
        for command in self.settings.pre_tool:
            done = await self._one("pre_tool", command, self._call_event(call), call)
            if done.returncode == DENY_EXIT and not done.timed_out:
                reason = redact(done.stderr.strip(), self.secrets) or (
                    f"the hook `{command}` exited 2 without a reason on stderr"
                )
                self._denied(command, call, reason, done)
                return reason
            self._settle("pre_tool", command, done, call)
        return None

    async def on_after_tool(self, call: ToolCall, result: ToolResult) -> None:
        event = self._call_event(call)
        event["result"] = {
            "content": bound_output(redact(result.content, self.secrets), self.max_result_bytes),
            "is_error": result.is_error,
        }
        for command in self.settings.post_tool:
            done = await self._one("post_tool", command, event, call)
            self._settle("post_tool", command, done, call)

    # -- running -----------------------------------------------------------------------------

    async def _all(self, point: HookPoint, event: dict[str, Any]) -> None:
        for command in getattr(self.settings, point):
            self._settle(point, command, await self._one(point, command, event, None), None)

    def _call_event(self, call: ToolCall) -> dict[str, Any]:
        return {"tool": call.name, "arguments": call.arguments, "call_id": call.id}

    async def _one(
        self, point: HookPoint, command: str, event: dict[str, Any], call: ToolCall | None
    ) -> HookProcess:
        payload = {"event": point, "workspace": str(self.workspace), "thread": self.thread, **event}
        data = json.dumps(redact_data(payload, self.secrets), ensure_ascii=False, default=str)
        return await run_hook_command(
            command,
            data.encode("utf-8", "surrogateescape"),
            cwd=self.workspace,
            timeout=self.settings.timeout_seconds,
            limit=self.settings.max_output_bytes,
            guard_in=self.workspace,
        )

    def _settle(
        self, point: HookPoint, command: str, done: HookProcess, call: ToolCall | None
    ) -> None:
        status, detail = _verdict(done, self.settings.timeout_seconds)
        detail = redact(detail, self.secrets)
        self._remember(point, command, status, detail, done)
        if status == "ok":
            return
        self._report(
            HookReported(
                hook=point,
                command=self._shown(command),
                status=status,
                detail=detail,
                call_id=call.id if call else "",
            )
        )
        self._audit(
            point, command, call, allowed=True, resolution="hook:failed", note=f"{status}: {detail}"
        )

    def _denied(self, command: str, call: ToolCall, reason: str, done: HookProcess) -> None:
        self._remember("pre_tool", command, "denied", reason, done)
        self._report(
            HookReported(
                hook="pre_tool",
                command=self._shown(command),
                status="denied",
                detail=reason,
                call_id=call.id,
            )
        )
        self._audit("pre_tool", command, call, allowed=False, resolution="hook:deny", note=reason)

    def _remember(
        self, point: str, command: str, status: Status, detail: str, done: HookProcess
    ) -> None:
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.log.last[(point, command)] = HookResult(status, detail, now, done.seconds)

    def _shown(self, command: str) -> str:
        # A command line may carry a token (`curl -H "Authorization: Bearer ..."`).
        return redact(command, self.secrets)

    def _report(self, event: HookReported) -> None:
        if self.emit is not None:
            self.emit(event)

    def _audit(
        self,
        point: HookPoint,
        command: str,
        call: ToolCall | None,
        *,
        allowed: bool,
        resolution: Literal["hook:deny", "hook:failed"],
        note: str,
    ) -> None:
        if self.audit is None:
            return
        decision = PermissionDecision(
            action="allow" if allowed else "deny",
            reason=note,
            basis="hook",
            rule=self._shown(command),
            layer=self.layers.get((point, command)),
        )
        entry = AuditEntry.of(
            decision,
            tool=call.name if call else f"({point} hook)",
            arguments=call.arguments if call else {},
            allowed=allowed,
            resolution=resolution,
            call_id=call.id if call else "",
            thread=self.thread,
            frame=self.frame,
            note=note,
            secrets=self.secrets,
        )
        try:
            self.audit.record(entry)
        except AuditLogError:
            logger.exception("the audit log could not record a hook result")


def _verdict(done: HookProcess, timeout: float) -> tuple[Status, str]:
    """How one command went, in words for the cell and the audit log."""
    err = done.stderr.strip()
    tail = f": {err[:_DETAIL_CHARS]}" if err else ""
    if done.start_error is not None:
        return "not_started", f"could not start: {done.start_error}"
    if done.timed_out:
        return "timed_out", f"still running after {timeout:g} s; its processes were killed"
    if done.returncode == 0:
        return "ok", "exit 0"
    if done.returncode == MISSING_PROGRAM:
        return "failed", f"exit 127 (program not found){tail}"
    if done.returncode is not None and done.returncode < 0:
        return "failed", f"killed by signal {-done.returncode}{tail}"
    return "failed", f"exit {done.returncode}{tail}"
