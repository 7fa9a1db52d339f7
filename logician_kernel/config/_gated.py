"""Gated fields: settings a trusted project file may state but not apply on its own.

Trusting a workspace lets its project file tune the kernel; it must not let the file take it
over. Each row of `GATED_FIELDS` names a field that can send the API key elsewhere, write
outside the workspace, or loosen permissions and budgets. A project value for such a field
applies only when the user allowed *that field with that value* (`logician trust --allow
KEY`); otherwise it is held back with a notice naming it, its value and its risk.

The table is the one declaration: a new kind of setting that runs commands (hooks, MCP
server commands) joins it with one row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ._keys import KeyPath, mask, parse_key, value_at

Compare = Literal["value", "above_user", "selection"]


@dataclass(frozen=True)
class GatedField:
    """One field a project file may not apply without the user's allow."""

    key: str
    """The dotted key, e.g. `model.base_url`."""
    risk: str
    """What a hostile value could do, for the notice."""
    compare: Compare = "value"
    """`value`: any project value is gated; `above_user`: only a budget looser than the one
    the layers below the project give (unset means unlimited); `selection`: the value selects
    a profile, gated when that profile would turn on any gated field (issue 27, finding 6)."""
    path_inside: bool = False
    """The value names a file: even allowed, it must stay in the workspace or the user's
    data directory (only the user's own layers may point elsewhere)."""

    @property
    def path(self) -> KeyPath:
        return tuple(self.key.split(".")) if "*" in self.key else parse_key(self.key)

    def concrete(self, data: Mapping[str, Any]) -> list[GatedField]:
        """This row for each key of `data` its `*` stands for (itself when it has none)."""
        path = self.path
        if "*" not in path:
            return [self]
        star = path.index("*")
        present, node = value_at(data, path[:star])
        if not present or not isinstance(node, Mapping):
            return []
        return [
            GatedField(
                ".".join((*path[:star], str(name), *path[star + 1 :])),
                self.risk,
                self.compare,
                self.path_inside,
            )
            for name in sorted(node)
        ]

    def matches(self, key: str) -> bool:
        pattern, parts = self.path, tuple(key.split("."))
        return len(pattern) == len(parts) and all(
            p == "*" or p == k for p, k in zip(pattern, parts, strict=True)
        )


_BUDGET_RISK = "it loosens a budget beyond your own setting"
_HOOK_RISK = "it runs these commands on your machine during agent runs"
_MCP_RUN_RISK = "it chooses a program the kernel starts as an MCP server"

GATED_FIELDS: tuple[GatedField, ...] = (
    # A project selecting a profile applies whatever that profile sets, including a profile
    # of the user's own file (`[profiles.yolo] permissions = { mode = "full-auto" }`).
    GatedField("profile", "it applies that profile's settings", "selection"),
    GatedField("model.base_url", "your API key would be sent to this server"),
    GatedField("model.api_key_env", "it chooses which secret is sent as the API key"),
    GatedField("model.key_name", "it chooses which stored key is sent as the API key"),
    GatedField(
        "model.extra_body", "it adds fields to every model request (routing, sampling, cost)"
    ),
    GatedField("model.tool_choice", "it forces or forbids the agent's tool calls"),
    GatedField(
        "model.record_file", "model exchanges would be written to this file", path_inside=True
    ),
    GatedField(
        "model.replay_file", "the model's answers would come from this file", path_inside=True
    ),
    GatedField("permissions.mode", "it changes what the agent may do without asking"),
    GatedField("permissions.headless", "it answers approvals when nobody can be asked"),
    GatedField("permissions.allow", "its rules let commands run without asking"),
    GatedField("budget.prices", "wrong prices defeat the cost budget"),
    GatedField("budget.max_turns", _BUDGET_RISK, "above_user"),
    GatedField("budget.max_tool_calls", _BUDGET_RISK, "above_user"),
    GatedField("budget.max_input_tokens", _BUDGET_RISK, "above_user"),
    GatedField("budget.max_output_tokens", _BUDGET_RISK, "above_user"),
    GatedField("budget.max_cost_usd", _BUDGET_RISK, "above_user"),
    GatedField("budget.max_wall_seconds", _BUDGET_RISK, "above_user"),
    GatedField("hooks.pre_tool", _HOOK_RISK),
    GatedField("hooks.post_tool", _HOOK_RISK),
    GatedField("hooks.run_start", _HOOK_RISK),
    GatedField("hooks.run_end", _HOOK_RISK),
    # `*` stands for each configured MCP server: the rows gate `mcp.servers.NAME.command` etc.
    GatedField("mcp.servers.*.command", _MCP_RUN_RISK),
    GatedField("mcp.servers.*.args", _MCP_RUN_RISK),
    GatedField("mcp.servers.*.env", _MCP_RUN_RISK),
    GatedField("mcp.servers.*.url", "the agent would send tool calls to this server"),
    GatedField("mcp.servers.*.headers", "it chooses which secrets are sent to an MCP server"),
)
"""Every gated field, in the order notices name them."""

GATED_KEYS = frozenset(field.key for field in GATED_FIELDS)


def gated_field(key: str) -> GatedField | None:
    """The gated field `key` names; `profiles.NAME.KEY` names KEY inside a profile."""
    try:
        path = parse_key(key)
    except ValueError:
        return None
    if len(path) > 2 and path[0] == "profiles":
        key = ".".join(path[2:])
    return next((field for field in GATED_FIELDS if field.matches(key)), None)


def _drop(data: dict[str, Any], path: KeyPath) -> None:
    node = data
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]


def _looser(project: Any, base: Any) -> bool:
    if project is None:
        return base is not None
    if base is None or not isinstance(project, (int, float)) or not isinstance(base, (int, float)):
        return False
    return project > base


def _inside(value: Any, roots: tuple[Path, ...], workspace: Path) -> bool:
    if value in (None, ""):
        return True
    try:
        candidate = Path(str(value)).expanduser()
        resolved = (candidate if candidate.is_absolute() else workspace / candidate).resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return any(resolved == root or resolved.is_relative_to(root) for root in roots)


def hold_back(
    data: dict[str, Any],
    *,
    base: Mapping[str, Any],
    allows: Callable[[str, Any], bool],
    where: Callable[[KeyPath], str],
    workspace: Path,
    data_dir: Path,
    prefix: KeyPath = (),
    turns_on: Callable[[Any], list[str]] | None = None,
) -> tuple[list[str], list[str]]:
    """Remove from a project layer's `data` (in place) every gated value the user has not
    allowed; returns (notices, keys held back). `base` is the merge of the layers below
    the project; `allows(key, value)` asks the trust record. With `prefix` (a profile's
    `("profiles", NAME)`), `data` is that table: keys, notices and allows carry the prefix.
    `turns_on(name)` lists the gated keys profile `name` would set; without it a project's
    profile selection is always held back (fail closed)."""
    notices: list[str] = []
    held: list[str] = []
    dropped: list[KeyPath] = []
    roots = (workspace.resolve(), data_dir.expanduser().resolve())
    for field in (one for row in GATED_FIELDS for one in row.concrete(data)):
        present, value = value_at(data, field.path)
        if not present:
            continue
        key = ".".join(prefix + field.path)
        shown = f"{key} = {mask(field.path, value)!r}"
        if field.path_inside and not _inside(value, roots, workspace):
            reason = (
                f"{shown} held back: it names a file outside the workspace and the user data "
                f"directory {roots[1]}; only your user config may point there"
            )
        elif field.compare == "above_user" and not _looser(value, value_at(base, field.path)[1]):
            continue
        elif allows(key, value):
            continue
        elif field.compare == "selection":
            turned = turns_on(value) if turns_on is not None else ["(not checked)"]
            if not turned:
                continue  # the profile sets nothing a project could not set itself
            reason = (
                f"{shown} held back: {field.risk}, which turns on {', '.join(turned)}. If you "
                f"trust this profile, run `logician trust --allow {key}` (or `%logician trust "
                f"--allow {key}`)"
            )
        else:
            reason = (
                f"{shown} held back: {field.risk}. If you trust this value, run "
                f"`logician trust --allow {key}` (or `%logician trust --allow {key}`)"
            )
        _drop(data, field.path)
        held.append(key)
        dropped.append(field.path)
        notices.append(f"{where(prefix + field.path)}: {reason}.")
    _drop_unstartable_servers(data, base, dropped)
    return notices, held


def _drop_unstartable_servers(
    data: dict[str, Any], base: Mapping[str, Any], dropped: list[KeyPath]
) -> None:
    """A project MCP server left with neither `command` nor `url` (both held back, and no
    lower layer sets one) is dropped whole: it could not start, and must not fail the load."""
    servers = data.get("mcp", {}).get("servers", {}) if isinstance(data.get("mcp"), dict) else {}
    below = value_at(base, ("mcp", "servers"))[1] or {}
    for parts in dropped:
        if tuple(parts[:2]) != ("mcp", "servers") or parts[2] not in servers:
            continue
        name = parts[2]
        entry, lower = servers[name], below.get(name, {}) if isinstance(below, Mapping) else {}
        if not any(k in entry or k in lower for k in ("command", "url")):
            del servers[name]


def format_allowed(allowed: Mapping[str, str]) -> list[str]:
    """The `config show` lines for the fields a workspace's trust allows."""
    return [f"  {key} (allowed for the value it had when allowed)" for key in sorted(allowed)]


__all__ = ["GATED_FIELDS", "GATED_KEYS", "GatedField", "format_allowed", "gated_field", "hold_back"]
