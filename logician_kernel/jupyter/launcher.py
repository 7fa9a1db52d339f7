"""Who started this kernel: a headless runner (history in memory) or an interactive frontend.

ipykernel's history database is kept in memory under nbclient, papermill and nbconvert because
those runners pass `--HistoryManager.hist_file=:memory:`, and only to kernels named `python`,
`python2` or `python3` (jupyter_client's `KernelManager.ipykernel`). The Logician kernel has its
own name, so it decides at launch, from what the launch itself shows (docs/drop-in.md):

1. a `--HistoryManager.hist_file` on the command line or in an IPython config file wins;
2. the nearest recognised process above the kernel: a headless runner (papermill, nbconvert,
   `jupyter execute`, `python -m nbclient`, `logician run`) means memory, an interactive
   frontend (JupyterLab and the other Jupyter servers, jupyter console and qtconsole, the kernel
   gateways) means disk;
3. else a notebook session name (`JPY_SESSION_NAME`, which Jupyter servers pass) or VS Code's
   environment means disk;
4. else memory: a program started the kernel with no notebook session and no console, as
   nbclient used as a library (and nbval, testbook, plain jupyter_client scripts) does.

`place_history` applies it to the kernel app's config before the shell exists.

Must never: fail a kernel's start (anything unreadable counts as not recognised), or decide
from anything the user's code could have changed after the start.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HEADLESS = frozenset(
    {"papermill", "jupyter-nbconvert", "nbconvert", "jupyter-execute", "nbclient", "logician-run"}
)
"""Headless runners, as `program` names them: papermill, nbconvert, `jupyter execute`,
`python -m nbclient`, `logician run`."""

INTERACTIVE = frozenset(
    {
        "jupyter-lab",
        "jupyterlab",
        "jupyter-notebook",
        "notebook",
        "jupyter-server",
        "jupyter_server",
        "jupyter-console",
        "jupyter_console",
        "jupyter-qtconsole",
        "qtconsole",
        "jupyter-kernelgateway",
        "kernel_gateway",
        "jupyter-enterprisegateway",
        "enterprise_gateway",
    }
)
"""Frontends a person types into: the Jupyter servers (Lab, Notebook), consoles, gateways."""

VSCODE_ENV = ("VSCODE_PID", "VSCODE_CWD", "VSCODE_IPC_HOOK_CLI", "VSCODE_IPC_HOOK")
ANCESTORS = 4
"""How far up to look: the launcher, and a wrapper or two (a shell script, `conda run`)."""

_PYTHON = re.compile(r"python[\d.]*$")
_SUBCOMMANDS = ("jupyter", "logician")


def program(argv: Sequence[str]) -> str:
    """What a command line runs: `jupyter-lab` for `jupyter lab` and `jupyter-lab`, `nbclient`
    for `python -m nbclient`, `papermill` for `python .../bin/papermill`."""
    words = [Path(a).name.removesuffix(".exe").removesuffix(".py") for a in argv]
    if words and _PYTHON.match(words[0]):
        words = words[1:]
        while words and words[0].startswith("-") and words[0] != "-m":
            words = words[1:]
        if words[:1] == ["-m"]:
            words = words[1:]
    if not words:
        return ""
    if words[0] in _SUBCOMMANDS and len(words) > 1 and not words[1].startswith("-"):
        return f"{words[0]}-{words[1]}"
    return words[0]


def classify(argv: Sequence[str]) -> str | None:
    """ "headless", "interactive" or None (not recognised) for a process's command line."""
    name = program(argv)
    if name in HEADLESS:
        return "headless"
    if name in INTERACTIVE:
        return "interactive"
    return None


def history_in_memory(
    ancestors: Sequence[Sequence[str]], env: Mapping[str, str]
) -> tuple[bool, str]:
    """Whether IPython's history should stay in memory, and why (for the kernel log)."""
    for argv in ancestors:
        kind = classify(argv)
        if kind is not None:
            return kind == "headless", f"started by {program(argv)} ({kind})"
    if env.get("JPY_SESSION_NAME", "").strip():
        return False, "a notebook session name (JPY_SESSION_NAME) reached the kernel"
    if any(env.get(k) for k in VSCODE_ENV):
        return False, "started inside VS Code"
    return True, "no notebook session and no interactive frontend started the kernel"


def ancestor_command_lines(limit: int = ANCESTORS) -> list[list[str]]:
    """The command lines of the processes above this one, nearest first; [] where unreadable."""
    found: list[list[str]] = []
    pid = os.getppid()
    for _ in range(limit):
        if pid <= 1:
            break
        read = _read_proc(pid) if sys.platform.startswith("linux") else _read_ps(pid)
        if read is None:
            break
        argv, parent = read
        found.append(argv)
        pid = parent
    return found


def _read_proc(pid: int) -> tuple[list[str], int] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        stat = Path(f"/proc/{pid}/stat").read_text()
        parent = int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a], parent


def _read_ps(pid: int) -> tuple[list[str], int] | None:
    try:
        out = subprocess.run(
            ["ps", "-o", "ppid=", "-o", "args=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        parent, _, args = out.partition(" ")
        return args.split(), int(parent)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


MEMORY = ":memory:"


def place_history(config: Any, log: Any) -> None:
    """Keep IPython's history in memory under a headless runner: sets
    `HistoryManager.hist_file` in the launching app's `config` (before the shell exists),
    unless the command line or a config file already set it."""
    history = config.HistoryManager
    if "hist_file" in history:
        return
    memory, why = history_in_memory(ancestor_command_lines(), os.environ)
    if memory:
        history.hist_file = MEMORY
    log.info("IPython history %s: %s", "in memory" if memory else "on disk", why)
