"""Where a kernel starts, when a launcher (a kernel gateway) chose for it, and what the user is
told about the workspace that follows from it.

A local kernel starts in the notebook's directory. A kernel started by Jupyter Kernel Gateway
or Enterprise Gateway starts in the gateway's own directory instead; JupyterLab tells it the
notebook's directory in `KERNEL_WORKING_DIR`. Honouring that variable makes a gateway kernel
start where a local one would, so the workspace (its git top level, or the directory) and its
`.logician/` are the notebook's, not one shared by every notebook of the gateway.

Must never: raise for a bad `KERNEL_WORKING_DIR` (it is reported and the kernel stays where it
was started), import Jupyter, or read configuration itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

KERNEL_WORKING_DIR = "KERNEL_WORKING_DIR"
"""The variable Jupyter frontends and gateways use to ask for a kernel's working directory."""


@dataclass(frozen=True)
class StartingDirectory:
    """The directory the kernel runs in, and whether a launcher chose it."""

    path: Path
    """Absolute directory the kernel's workspace is resolved from (and its cwd)."""
    from_launcher: bool
    """True when `KERNEL_WORKING_DIR` named it and it differs from where the kernel started."""
    notice: str | None = None
    """A one-line problem with `KERNEL_WORKING_DIR` for the first cell, if there was one."""


def starting_directory(env: Mapping[str, str], cwd: Path) -> StartingDirectory:
    """The directory to start in: `KERNEL_WORKING_DIR` when it names one, else `cwd`."""
    cwd = Path(cwd).resolve()
    asked = env.get(KERNEL_WORKING_DIR, "").strip()
    if not asked:
        return StartingDirectory(cwd, False)
    path = Path(asked).expanduser()
    path = (cwd / path).resolve() if not path.is_absolute() else path.resolve()
    if not path.is_dir():
        return StartingDirectory(
            cwd,
            False,
            f"Logician: {KERNEL_WORKING_DIR}={asked!r} is not a directory on the machine this "
            f"kernel runs on, so the kernel stays in {cwd}. A gateway that runs kernels "
            "elsewhere must mount the notebook's volume at the same path.",
        )
    return StartingDirectory(path, path != cwd)


def enter(start: StartingDirectory) -> str | None:
    """chdir into the starting directory, as a local kernel starts there; a problem or None."""
    try:
        os.chdir(start.path)
    except OSError as exc:
        return f"Logician: cannot change into {start.path} ({exc.strerror}); the kernel stays in {Path.cwd()}."
    return None


def workspace_notice(
    workspace: Path, start: StartingDirectory, root_setting: Path | None
) -> str | None:
    """What the first cell says about the workspace when it did not come from where the
    kernel was started (a `workspace.root` setting, or a launcher's `KERNEL_WORKING_DIR`)."""
    if root_setting is not None:
        origin = "the workspace.root setting"
    elif start.from_launcher:
        origin = f"{KERNEL_WORKING_DIR}={start.path}, set by the kernel's launcher"
    else:
        return None
    return (
        f"Logician: the workspace is {workspace} (from {origin}); frames and .logician/ live there."
    )
