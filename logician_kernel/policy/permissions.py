"""Permission decisions: may this tool call run without asking?

`PermissionPolicy` turns the resolved `PermissionSettings` (mode + allow / ask / deny rules),
the rules the user allowed for this session and the call's arguments into one
`PermissionDecision` with a reason, the rule that decided and the configuration layer that
contributed that rule. It decides only: asking the user belongs to the gate, writing the
decision down to the audit log. No I/O beyond resolving paths (`_target.py`: symlinks must be
followed to know whether a path stays inside the workspace).

Order, first match wins:

1. a deny rule: deny;
2. `read-only` mode and a tool that is not read-only: deny;
3. an ask rule: ask;
4. a protected path (`_protected.py`: `.git/` anywhere, `.logician/`, the kernel's own
   files) written by `write` / `edit`, or named by a `bash` / `python` call: ask naming the
   risk, in every mode - or deny, for the top-level `.git/` and `.logician/` the file tools
   refuse anyway;
5. a path outside the workspace (`..`, absolute, a symlink that leads out): ask - whatever
   the mode and the allow rules, so it is never a routine allow;
6. an allow rule, or a rule allowed for this session: allow (a `bash` rule only for a plain
   command, see `_shell.py`);
7. the mode's default. An MCP tool (`server__tool`) asks in every mode but `full-auto`,
   its `readOnlyHint` only keeping it from step 2's deny; for ours: `ask`: read-only tools
   allow, others ask; `read-only`: read-only
   tools allow; `auto-edit`: read-only tools and `write`/`edit` inside the workspace allow,
   commands ask; `full-auto`: allow.

Every allow is routine (automatic, kept out of the transcript but audited); asks and denies
are not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from ..types.field_docs import FIELD_DOCS
from ._protected import Protection, protected_in_command, protected_write
from ._rules import (
    COMMAND_ARGUMENTS,
    MCP_RULE,
    PATH_ARGUMENTS,
    Rule,
    any_pattern,
    command_matches,
    command_segments,
    is_mcp_tool,
    parse_rule,
    path_matches,
    words_match,
)
from ._shell import narrowest_command_pattern, plain_command
from ._target import Target, call_target

PermissionMode = Literal["ask", "read-only", "auto-edit", "full-auto"]
"""The baseline a policy applies when no rule decides."""

MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)

PermissionAction = Literal["allow", "ask", "deny"]

DecisionBasis = Literal[
    "deny_rule",
    "read_only_mode",
    "ask_rule",
    "protected_path",
    "outside_workspace",
    "allow_rule",
    "session_rule",
    "mode",
    "hook",
]
"""Which step of the order decided (`hook`: a `pre_tool` hook, after the policy allowed)."""

RuleList = Literal["allow", "ask", "deny"]

EDIT_TOOLS = frozenset({"write", "edit", "notebook_edit"})
"""Tools `auto-edit` mode allows inside the workspace (a cell edit is a workspace edit)."""

SESSION_LAYER = "session"
"""The layer reported for rules allowed for this session only."""


class PermissionDecision(BaseModel):
    """What the policy says about one tool call, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)

    action: PermissionAction
    """`allow`: run it; `ask`: the user decides; `deny`: refuse it."""
    reason: str
    """A sentence for the user and the model, e.g. `denied by rule bash(rm -rf*) (user config)`."""
    rule: str | None = None
    """The rule that decided, as written; None when the mode or the workspace boundary did."""
    layer: str | None = None
    """The configuration layer that contributed `rule` (`default`, `user`, `project`, `env`,
    `session`), when known."""
    routine: bool = False
    """An automatic allow: audited, but kept out of the transcript and the cell output."""
    basis: DecisionBasis = "mode"
    """Which step of the decision order decided."""
    mode: PermissionMode = "ask"
    """The mode the decision was made under."""


def _no_layer(list_name: str, rule: str) -> str | None:
    del list_name, rule
    return None


class PermissionPolicy:
    """Decides tool calls for one workspace under one `PermissionSettings` snapshot."""

    def __init__(
        self,
        settings: Any,
        *,
        workspace: Path,
        layer_of: Callable[[str, str], str | None] = _no_layer,
    ) -> None:
        """`settings` is a `config.PermissionSettings` (read by attribute: `mode`, `allow`,
        `ask`, `deny`); `layer_of(list_name, rule)` names the configuration layer that
        contributed `rule` to `permissions.<list_name>` (see `config_layer_of`)."""
        self.settings = settings
        self.workspace = Path(workspace).expanduser().resolve()
        self.cwd: Path | None = None
        """Where the tools run (the kernel's current directory); relative paths in a call
        resolve there. None, or a directory outside the workspace: the workspace."""
        self._layer_of = layer_of
        self._rules: dict[RuleList, tuple[Rule, ...]] = {
            name: tuple(parse_rule(text) for text in getattr(settings, name, ()))
            for name in ("allow", "ask", "deny")
        }
        self._session: list[Rule] = []
        self.default_mode = self._checked_mode(getattr(settings, "mode", "ask"))

    # -- session rules ----------------------------------------------------------------------

    def allow_for_session(self, rule: str) -> None:
        """Allow calls matching `rule` until this policy is dropped (the kernel keeps one per
        session). Raises `ValueError` for a malformed rule."""
        parsed = parse_rule(rule)
        if all(existing.text != parsed.text for existing in self._session):
            self._session.append(parsed)

    @property
    def session_rules(self) -> tuple[str, ...]:
        return tuple(rule.text for rule in self._session)

    # -- deciding ---------------------------------------------------------------------------

    def decide(
        self,
        tool_name: str,
        read_only: bool,
        arguments: Mapping[str, Any],
        *,
        mode: str | None = None,
    ) -> PermissionDecision:
        """Decide one call (see the module docstring for the order). `mode` overrides the
        configured mode for this decision (a cell's `--mode`)."""
        active = self._checked_mode(mode) if mode is not None else self.default_mode
        target = self._target(tool_name, arguments)

        def decision(action: PermissionAction, reason: str, basis: DecisionBasis, **kw: Any):
            return PermissionDecision(
                action=action,
                reason=reason,
                basis=basis,
                mode=active,
                routine=action == "allow",
                **kw,
            )

        hit = self._first("deny", tool_name, target)
        if hit is not None:
            rule, layer = hit
            return decision(
                "deny",
                f"denied by rule `{rule}`{_from(layer)}",
                "deny_rule",
                rule=rule,
                layer=layer,
            )
        if active == "read-only" and not read_only:
            what = (
                "is an MCP tool its server does not declare read-only (`readOnlyHint`)"
                if is_mcp_tool(tool_name)
                else "may change the workspace or run code"
            )
            return decision(
                "deny", f"`{tool_name}` {what}, and the mode is read-only", "read_only_mode"
            )
        hit = self._first("ask", tool_name, target)
        if hit is not None:
            rule, layer = hit
            return decision(
                "ask", f"rule `{rule}`{_from(layer)} asks first", "ask_rule", rule=rule, layer=layer
            )
        protection = self._protection(tool_name, target)
        if protection is not None:
            return decision(
                "deny" if protection.refuse else "ask",
                ("refused: " if protection.refuse else "asking first: ") + protection.reason,
                "protected_path",
            )
        if target.outside:
            where = ", ".join(f"`{p}`" for p in target.outside)
            return decision(
                "ask", f"{where} is outside the workspace {self.workspace}", "outside_workspace"
            )
        matched = self._allowing(tool_name, target)
        if matched:
            rules = ", ".join(dict.fromkeys(f"`{rule.text}`" for rule, _ in matched))
            layers = [layer for _, layer in matched]
            session = all(layer == SESSION_LAYER for layer in layers)
            known = [layer for layer in dict.fromkeys(layers) if layer is not None]
            layer = ", ".join(known) if known else None
            reason = (
                f"allowed for this session by {rules}"
                if session
                else f"allowed by rule {rules}{_from(layer)}"
            )
            return decision(
                "allow",
                reason,
                "session_rule" if session else "allow_rule",
                rule=", ".join(dict.fromkeys(rule.text for rule, _ in matched)),
                layer=layer,
            )
        problem = None
        if tool_name == "bash" and target.command is not None:
            problem = plain_command(target.command, self.workspace, cwd=self.base_dir()).problem
        return self._mode_default(decision, active, tool_name, read_only, problem)

    @staticmethod
    def _protection(tool: str, target: Target) -> Protection | None:
        if tool in EDIT_TOOLS:
            for relative, absolute in target.paths:
                found = protected_write(relative, absolute)
                if found is not None:
                    return found
            return None
        if tool in COMMAND_ARGUMENTS and target.command is not None:
            return protected_in_command(target.command)
        return None

    def _mode_default(
        self,
        decision: Callable[..., PermissionDecision],
        mode: str,
        tool: str,
        read_only: bool,
        problem: str | None = None,
    ) -> PermissionDecision:
        if is_mcp_tool(tool) and mode != "full-auto":
            # A server's own `readOnlyHint` is a claim, not a guarantee: ask, unless a rule
            # (`mcp(server__*)`) says otherwise.
            return decision("ask", f"`{tool}` is an MCP tool; {mode} mode asks", "mode")
        if read_only:
            return decision("allow", f"`{tool}` is read-only", "mode")
        if mode == "full-auto":
            return decision("allow", "full-auto mode allows it", "mode")
        if mode == "auto-edit" and tool in EDIT_TOOLS:
            return decision("allow", "auto-edit mode allows workspace edits", "mode")
        if tool == "bash" and problem:
            return decision("ask", f"no rule may allow this command: it has {problem}", "mode")
        if tool in COMMAND_ARGUMENTS:
            return decision("ask", f"no rule allows this `{tool}` command", "mode")
        return decision("ask", f"`{tool}` may change the workspace; {mode} mode asks", "mode")

    # -- "Always allow" -----------------------------------------------------------------------

    def suggest_rule(self, tool_name: str, arguments: Mapping[str, Any]) -> str | None:
        """The narrowest rule an "Always allow" answer would add for this call, or None when
        no rule could allow it. For `bash`: a plain command (see `_shell.py`) gets exactly
        that command (`bash(git grep foo)`, never `git grep *`, which would admit options the
        call did not have); anything else (a chain, an expansion, a `*`) None.
        For `python` the exact code (None when it holds a `*`, which a rule would read as a
        wildcard). For a file tool the exact path at the top level, else its directory and
        `/**`; otherwise the bare tool name. A path outside the workspace gets its exact path,
        which never allows it without asking (see the order), so "Always allow" cannot open
        the workspace boundary."""
        if is_mcp_tool(tool_name):
            return f"{MCP_RULE}({tool_name})"
        argument = COMMAND_ARGUMENTS.get(tool_name)
        if argument is not None:
            value = arguments.get(argument)
            if not isinstance(value, str) or not value.strip():
                return None
            if tool_name == "bash":
                stem = narrowest_command_pattern(value, self.workspace, cwd=self.base_dir())
                return f"bash({stem})" if stem else None
            code = value.strip()
            return None if "*" in code else f"{tool_name}({code})"
        if tool_name in PATH_ARGUMENTS:
            target = self._target(tool_name, arguments)
            if target.paths:
                relative, absolute = target.paths[0]
                if relative is None:
                    return f"{tool_name}({absolute})"
                if relative == ".":
                    return f"{tool_name}(**)"
                head = relative.rsplit("/", 1)
                if len(head) == 1:
                    return f"{tool_name}({relative})"
                return f"{tool_name}({head[0]}/**)"
        return tool_name

    # -- matching ---------------------------------------------------------------------------

    def _first(
        self, list_name: RuleList, tool: str, target: Target
    ) -> tuple[str, str | None] | None:
        for rule in self._rules[list_name]:
            if self._matches(rule, tool, target, allow=False):
                return rule.text, self._layer_of(list_name, rule.text)
        return None

    def _allowing(self, tool: str, target: Target) -> list[tuple[Rule, str | None]]:
        """The allow rules (configured first, then the session's) that together allow the
        call, with their layers; empty when they do not. A command's segments may each be
        allowed by a different rule."""
        candidates = [
            (rule, self._layer_of("allow", rule.text)) for rule in self._rules["allow"]
        ] + [(rule, SESSION_LAYER) for rule in self._session]
        candidates = [(rule, layer) for rule, layer in candidates if rule.names(tool)]
        bare = next(((r, layer) for r, layer in candidates if r.pattern is None), None)
        if bare is not None:
            return [bare]
        if tool != "bash":
            for rule, layer in candidates:
                if self._matches(rule, tool, target, allow=True):
                    return [(rule, layer)]
            return []
        if target.command is None:
            return []
        check = plain_command(target.command, self.workspace, cwd=self.base_dir())
        if not check.plain:
            return []
        for rule, layer in candidates:
            if words_match(rule.pattern or "", check.words):
                return [(rule, layer)]
        return []

    def _matches(self, rule: Rule, tool: str, target: Target, *, allow: bool) -> bool:
        if not rule.names(tool):
            return False
        pattern = rule.pattern
        if pattern is None or rule.tool == MCP_RULE:
            return True  # an `mcp(...)` pattern names tools, matched by `Rule.names`
        if tool in COMMAND_ARGUMENTS:
            command = target.command
            if command is None:
                return False
            if tool != "bash":
                return command_matches(pattern, command)
            # Deny and ask rules (allow rules on commands are matched by `_allowing`).
            return command_matches(pattern, command) or any(
                command_matches(pattern, segment) for segment in command_segments(command)
            )
        if tool in PATH_ARGUMENTS:
            if not target.paths:
                return False
            hits = [path_matches(pattern, rel, absolute) for rel, absolute in target.paths]
            return all(hits) if allow else any(hits)
        return any_pattern(pattern)

    def _target(self, tool: str, arguments: Mapping[str, Any]) -> Target:
        return call_target(tool, arguments, self.workspace, cwd=self.base_dir())

    def base_dir(self) -> Path:
        """`cwd` resolved when it lies inside the workspace, else the workspace (as the tools'
        `base_dir` decides)."""
        if self.cwd is None:
            return self.workspace
        try:
            cwd = Path(self.cwd).resolve()
        except (OSError, RuntimeError):
            return self.workspace
        return (
            cwd if cwd == self.workspace or cwd.is_relative_to(self.workspace) else self.workspace
        )

    @staticmethod
    def _checked_mode(mode: str) -> PermissionMode:
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; the modes are {', '.join(MODES)}")
        return mode  # type: ignore[return-value]


def _from(layer: str | None) -> str:
    return f" ({layer} config)" if layer and layer != SESSION_LAYER else ""
