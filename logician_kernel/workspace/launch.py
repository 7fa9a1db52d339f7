"""Where a kernel starts, when a launcher (a kernel gateway) chose for it, and what the user is
told about the workspace that follows from it.

A local kernel starts in the notebook's directory. A kernel started by Jupyter Kernel Gateway
or Enterprise Gateway starts in the gateway's own directory instead; JupyterLab tells it the
notebook's directory in `KERNEL_WORKING_DIR`. Honouring that variable makes a gateway kernel
start where a local one would, so the workspace (its git top level, or the directory) and its
`.logician/` are the notebook's, not one shared by every notebook of the gateway.

A gateway kernel without a usable `KERNEL_WORKING_DIR` starts wherever the gateway runs, often
its account's home (an SSH process proxy's remote account) or `/`: taking that as the workspace
would snapshot, and let a rewind change, everything in it (a team folder mounted there too).
Such a kernel uses its launch directory only when that is neither a home directory nor `/`,
and otherwise runs with frames off and says how to set the directory (`unsafe_workspace`).

Must never: raise for a bad `KERNEL_WORKING_DIR` (it is reported and the kernel stays where it
was started), import Jupyter, or read configuration itself.
"""

from __future__ import annotations

import os
import pwd
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
    gateway: bool = False
    """A gateway launched the kernel (`KERNEL_GATEWAY`, `KERNEL_ID`, or a `KERNEL_WORKING_DIR`
    it passed) and `path` is where it happened to start it, not a directory it asked for."""


def starting_directory(env: Mapping[str, str], cwd: Path) -> StartingDirectory:
    """The directory to start in: `KERNEL_WORKING_DIR` when it names one, else `cwd`."""
    cwd = Path(cwd).resolve()
    asked = env.get(KERNEL_WORKING_DIR, "").strip()
    gateway = bool(asked) or env.get("KERNEL_GATEWAY") == "1" or bool(env.get("KERNEL_ID"))
    if not asked:
        return StartingDirectory(cwd, False, gateway=gateway)
    path = Path(asked).expanduser()
    path = (cwd / path).resolve() if not path.is_absolute() else path.resolve()
    if not path.is_dir():
        return StartingDirectory(
            cwd,
            False,
            f"Logician: {KERNEL_WORKING_DIR}={asked!r} is not a directory on the machine this "
            f"kernel runs on, so the kernel stays in {cwd}. A gateway that runs kernels "
            "elsewhere must mount the notebook's volume at the same path.",
            gateway=True,
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


def home_directories(env: Mapping[str, str]) -> set[Path]:
    """`/`, `$HOME` and every account's home directory, resolved."""
    homes = {Path("/")}
    candidates = [env.get("HOME", "")]
    try:
        candidates += [entry.pw_dir for entry in pwd.getpwall()]
    except OSError:
        pass  # no account database: `$HOME` and `/` still count
    for home in candidates:
        if home:
            try:
                homes.add(Path(home).resolve())
            except (OSError, RuntimeError):
                continue  # an unreadable or looping home is no workspace of ours either way
    return homes


def unsafe_workspace(
    workspace: Path,
    start: StartingDirectory | None,
    root_setting: Path | None,
    env: Mapping[str, str],
) -> str | None:
    """Why a gateway kernel must not take `workspace` (a home directory or `/` it fell back
    to), as the first cell says it; None when the workspace is fine."""
    if start is None or not start.gateway or root_setting is not None:
        return None
    if Path(workspace).resolve() not in home_directories(env):
        return None
    asked = env.get(KERNEL_WORKING_DIR, "").strip()
    why = (
        f"{KERNEL_WORKING_DIR}={asked!r} does not exist on this host"
        if asked
        else f"no {KERNEL_WORKING_DIR} reached it"
    )
    place = "the root directory" if Path(workspace) == Path("/") else "a home directory"
    return (
        f"Logician: frames are off for this session: a gateway started this kernel in {workspace}, "
        f"{place}, and {why}; recording (and rewinding) all of it is not what a notebook asks "
        "for. Cells run normally. To get frames, have the gateway pass the notebook's directory "
        f"in {KERNEL_WORKING_DIR} (a Jupyter server sends it with each kernel request it makes "
        "of a gateway, and gateways pass KERNEL_ variables on; the directory must exist at the "
        "same path on the kernel's host), or set `workspace.root` (the user's config, or "
        "LOGICIAN_WORKSPACE__ROOT forwarded by the gateway), then restart the kernel."
    )
