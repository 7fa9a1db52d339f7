"""What a tool call's permission rules are matched against: its command, or its paths.

`call_target` reads a call's arguments (by the tool's declared command or path arguments,
`_rules.py`) and resolves each path against the workspace, following symlinks, so the policy
can tell a workspace path from one that leads out. Pure apart from resolving paths.

Must never: expand `~` (the tools take `~/x` as a workspace-relative name), or call a path
inside the workspace when it cannot tell (a symlink loop is outside).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._rules import COMMAND_ARGUMENTS, PATH_ARGUMENTS, PATH_DEFAULTS


@dataclass(frozen=True)
class Target:
    """What a call's rules are matched against."""

    command: str | None = None
    paths: tuple[tuple[str | None, str], ...] = ()
    """(workspace-relative POSIX path or None when outside, absolute POSIX path)."""
    outside: tuple[str, ...] = ()
    """Path arguments, as given, that resolve outside the workspace."""


def call_target(
    tool: str, arguments: Mapping[str, Any], workspace: Path, *, cwd: Path | None = None
) -> Target:
    """The command or the resolved paths `tool` would act on with `arguments`; relative paths
    resolve against `cwd` (where the tools run; default: the workspace)."""
    if not isinstance(arguments, Mapping):
        return Target()
    argument = COMMAND_ARGUMENTS.get(tool)
    if argument is not None:
        value = arguments.get(argument)
        return Target(command=value if isinstance(value, str) else None)
    names = PATH_ARGUMENTS.get(tool)
    if names is None:
        return Target()
    paths: list[tuple[str | None, str]] = []
    outside: list[str] = []
    raw_paths = [arguments.get(name, PATH_DEFAULTS.get(tool)) for name in names]
    for raw in raw_paths:
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            continue
        relative, absolute = locate(raw, workspace, cwd=cwd)
        paths.append((relative, absolute))
        if relative is None:
            outside.append(raw)
    if tool == "glob":
        pattern = arguments.get("pattern")
        if isinstance(pattern, str) and (os.path.isabs(pattern) or ".." in Path(pattern).parts):
            outside.append(pattern)
    return Target(paths=tuple(paths), outside=tuple(outside))


def locate(raw: str, workspace: Path, *, cwd: Path | None = None) -> tuple[str | None, str]:
    """(workspace-relative POSIX path, or None when `raw` resolves outside; absolute path).
    A relative `raw` resolves against `cwd` (default: the workspace)."""
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = (cwd or workspace) / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):  # a symlink loop: cannot tell, so treat as outside
        return None, candidate.as_posix()
    if resolved == workspace:
        return ".", resolved.as_posix()
    if resolved.is_relative_to(workspace):
        return resolved.relative_to(workspace).as_posix(), resolved.as_posix()
    return None, resolved.as_posix()
