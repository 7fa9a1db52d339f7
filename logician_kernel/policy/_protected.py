"""Protected paths: places a tool may not write without the user saying so, in any mode.

A `.git/` directory anywhere in the workspace (nested repositories, submodules) holds config
and hooks that git runs: writing there is running code. `.logician/` holds the kernel's own
state (ledger, audit log, object store), and the kernel's own package files decide what the
kernel does. So `write` / `edit` there asks naming the risk - or, for the workspace's own
top-level `.git/` and `.logician/`, which the file tools refuse anyway, is denied at once.
`bash` and `python` calls that name such a place ask too: a guard rail (a program can
always reach a path it does not name), never a sandbox.

Pure functions over paths and strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_GIT_RISK = "git runs the hooks and config there, so writing it can run any command"
_STATE_RISK = "it holds the kernel's ledger, audit log and checkpoints"

KERNEL_PACKAGE = Path(__file__).resolve().parent.parent
"""The running kernel's own package directory."""

_NAMED_IN_COMMAND = re.compile(r"(?:^|[\s/'\"=:])\.(git|logician)(?=/|\s|['\"]|$)", re.M)


@dataclass(frozen=True)
class Protection:
    """Why a path is protected, and whether tools refuse it outright."""

    reason: str
    """A sentence naming the place and the risk."""
    refuse: bool = False
    """True where the file tools refuse the write whatever the answer: asking is pointless."""


def protected_write(relative: str | None, absolute: str) -> Protection | None:
    """The protection of a write to this path (workspace-relative POSIX, or None when
    outside), or None when it is an ordinary path."""
    resolved = Path(absolute)
    if resolved == KERNEL_PACKAGE or resolved.is_relative_to(KERNEL_PACKAGE):
        return Protection(f"`{absolute}` is one of the kernel's own files")
    if relative is None or relative == ".":
        return None
    parts = PurePosixPath(relative).parts
    for depth, part in enumerate(parts):
        if part == ".git":
            where = "/".join(parts[: depth + 1])
            if depth == 0:
                return Protection(f"`{relative}` is inside `.git/`: {_GIT_RISK}", refuse=True)
            return Protection(
                f"`{relative}` is inside `{where}/`, a nested repository's internals: {_GIT_RISK}"
            )
        if part == ".logician":
            return Protection(
                f"`{relative}` is inside `.logician/`: {_STATE_RISK}", refuse=depth == 0
            )
    return None


def protected_in_command(command: str) -> Protection | None:
    """Whether a command or code names a `.git/` or `.logician/` directory."""
    match = _NAMED_IN_COMMAND.search(command)
    if match is None:
        return None
    place = f".{match.group(1)}/"
    risk = _GIT_RISK if match.group(1) == "git" else _STATE_RISK
    return Protection(f"it names `{place}`: {risk}")
