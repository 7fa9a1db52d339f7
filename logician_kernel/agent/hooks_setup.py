"""The run's `[hooks]`: building `CommandHooks` for a run, and the `%logician hooks` report.

The report lists every configured command with the layer that set it, every project command
held back by trust (and why), and each command's last result (kept in the session's
`HookLog`, in memory: it is a status, not a record - the audit log has the failures).
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

from ..config import EffectiveConfig
from ..config._hooks_schema import HOOK_EVENTS
from ..durable.redact import redact
from ..loop.command_hooks import CommandHooks, HookLog
from ..policy import AuditLog
from ..workspace import Workspace

__all__ = ["build_hooks", "hooks_report"]


def hook_layers(config: EffectiveConfig) -> dict[tuple[str, str], str]:
    """(hook point, command) -> the layer that contributed it."""
    out: dict[tuple[str, str], str] = {}
    for point in HOOK_EVENTS:
        commands = getattr(config.settings.hooks, point)
        for command, layer in zip(commands, config.elements(("hooks", point)), strict=False):
            out[(point, command)] = layer
    return out


def build_hooks(
    runtime: Workspace,
    *,
    requests: queue.Queue[Any],
    frame: int | None,
    log: HookLog,
    secrets: tuple[str, ...],
) -> CommandHooks | None:
    """The run's command hooks, or None when no command is configured."""
    config = runtime.config
    settings = config.settings.hooks
    if not any(getattr(settings, point) for point in HOOK_EVENTS):
        return None
    return CommandHooks(
        settings,
        workspace=config.workspace,
        thread=runtime.thread_id,
        frame=frame,
        audit=AuditLog.for_workspace(config.workspace),
        emit=requests.put,
        log=log,
        layers=hook_layers(config),
        secrets=secrets,
    )


def _held(config: EffectiveConfig) -> Iterator[tuple[str, str, str]]:
    """(key, command, why) for each project hook command that is not applied."""
    project = config.layer("project")
    if not project.exists:
        return
    tables: list[tuple[str, Any]] = [("", project.data.get("hooks"))]
    profiles = project.data.get("profiles")
    if isinstance(profiles, dict):
        tables += [
            (f"profiles.{n}.", t.get("hooks")) for n, t in profiles.items() if isinstance(t, dict)
        ]
    for prefix, table in tables:
        if not isinstance(table, dict):
            continue
        for point in HOOK_EVENTS:
            key = f"{prefix}hooks.{point}"
            commands = table.get(point)
            if not isinstance(commands, list) or not commands:
                continue
            if not config.trusted:
                why = "the workspace is not trusted (`%logician trust`)"
            elif key in config.held_back:
                why = f"not allowed yet (`%logician trust --allow {key}`)"
            else:
                continue
            for command in commands:
                yield key, str(command), why


def hooks_report(config: EffectiveConfig, log: HookLog) -> str:
    """What `%logician hooks` shows."""
    lines: list[str] = []
    layers = hook_layers(config)
    settings = config.settings.hooks
    for point in HOOK_EVENTS:
        for command in getattr(settings, point):
            last = log.last.get((point, command))
            result = (
                "not run yet"
                if last is None
                else (f"last: {last.status} ({last.detail}) at {last.time}, {last.seconds:.2f} s")
            )
            layer = layers.get((point, command), "?")
            lines.append(f"  {point:<10} {redact(command)}  [{layer}]  {result}")
    held = list(_held(config))
    out = [f"hooks (timeout {settings.timeout_seconds:g} s each):"]
    out += lines or ["  none configured (set [hooks] pre_tool / post_tool / run_start / run_end)"]
    if held:
        out.append("held back from the project file:")
        out += [f"  {key:<10} {redact(command)}  - {why}" for key, command, why in held]
    return "\n".join(out)
