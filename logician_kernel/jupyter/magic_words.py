"""The words of `%logician`, cheap to import: what the kernel needs at start to tell a
management cell from a prompt and to register the magic's name, before the implementation
(`magics.py`, the agent, the comm handler) is loaded on the magic's first call.

Owns the subcommand names (`MANAGEMENT_COMMANDS`; `magics.COMMANDS` must declare exactly
these, which `magics.py` checks as it loads), telling commands from prompts and typos
(`classify`), the input transformer of agent prompts (`protect_prompt_lines`), and finding
the loaded magics from a cell (`loaded_magics`).

Must never: import the agent, IPython's display machinery, pydantic models or the comm: the
kernel imports this module at start.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Collection
from typing import Any, Literal, NoReturn

from IPython.core.error import UsageError

MANAGEMENT_COMMANDS = frozenset(
    {
        "",
        "help",
        "frames",
        "diff",
        "rewind",
        "undo",
        "config",
        "trust",
        "clear",
        "status",
        "notices",
        "audit",
        "branches",
        "branch",
        "compact",
        "storage",
        "gc",
        "vars",
        "ledger",
        "threads",
        "thread",
        "hooks",
        "mcp",
        "context",
    }
)
"""Subcommands that manage the session (`""` is `%logician` alone, the rewind control); a cell
made only of these is not a frame. `magics.COMMANDS` maps each to its handler."""

FRAME_COMMANDS = frozenset({"frames", "diff", "vars", "storage", "gc", "rewind", "undo"})
"""The subcommands that need only the workspace (`frame_magics.FrameCommands`): before the agent
is loaded, the kernel runs them without loading it (`frame_light.py`), except a rewind's
`--call` (an agent call's rewind) and `--skip-cells` (the notebook bridge's pending parts)."""
FRAME_OPTIONS_THAT_LOAD = ("--call", "--skip-cells")

ASK = "ask"
"""`%logician ask PROMPT`: a prompt of any length, even one word or one that starts with a
command's name."""


def classify(
    rest: str, commands: Collection[str]
) -> tuple[Literal["command", "prompt", "unknown"], str]:
    """What `%logician REST` is: a management command, a prompt (and its text), or an
    unknown command. One word that is not a command is never a prompt (a typo must not
    become a model request); neither are several words whose first is close to a command.
    `ask` makes anything a prompt."""
    word, _, tail = rest.strip().partition(" ")
    if word in commands or word.startswith("-"):
        return "command", rest
    if word == ASK:
        return "prompt", tail.strip()
    if not tail.strip() or (word.lower() not in _TOOL_VERBS and _close_to_command(word, commands)):
        return "unknown", rest
    return "prompt", rest


_TOOL_VERBS = frozenset({"read", "write", "edit", "bash", "python", "ls", "glob", "grep"})
"""The agent's tool names: `%logician read the data` is an instruction, never a typo of a
command (`read` is close to `thread`)."""


def _close_to_command(word: str, commands: Collection[str]) -> list[str]:
    names = sorted(c for c in commands if c)
    import difflib  # 7 ms to import: loaded when first used

    return difflib.get_close_matches(word.lower(), [*names, ASK], n=2, cutoff=0.75)


def unknown_command(word: str, commands: Collection[str]) -> UsageError:
    close = _close_to_command(word, commands)
    hint = (
        f"did you mean {' or '.join(close)}?"
        if close
        else ("commands: " + ", ".join(sorted(c for c in commands if c)) + ".")
    )
    return UsageError(
        f"%logician: unknown command {word!r} — {hint} A prompt goes in a %%logician cell "
        "or `%logician ask PROMPT`."
    )


_LINE_MAGIC = re.compile(r"^(\s*)%logician(?:\s+(.*))?$")
_AGENT_CALL = (
    "await __import__('logician_kernel.jupyter.magic_parts', fromlist=['_']).run_agent_cell("
    "get_ipython(), {options!r}, {prompt!r})\n"
)
_FIX_CALL = (
    "await __import__('logician_kernel.jupyter.notebook_context', fromlist=['_']).run_fix_cell("
    "get_ipython(), {note!r})\n"
)
FIX = "fix"
"""`%logician fix [NOTE]`: an agent run on the last error (a frame, not a management command)."""


def protect_prompt_lines(lines: list[str]) -> list[str]:
    """Input transformer for agent prompts, applied before IPython's own.

    A `%%logician` cell, and a top-level `%logician PROMPT` line, become an awaited call:
    the kernel's event loop keeps turning while the agent runs, so an approval click (a comm
    message) reaches the running cell. It also keeps a prompt's trailing `?` a question, not
    IPython's "inspect this object". Management commands stay ordinary line magics.
    """
    if not lines:
        return lines
    first = lines[0].strip()
    if first.startswith("%%logician") and (first == "%%logician" or first[10:11].isspace()):
        return [_AGENT_CALL.format(options=first[10:].strip(), prompt="".join(lines[1:]))]
    if first.startswith("%%"):
        return lines  # another cell magic: its body is not ours to transform
    out = []
    for line in lines:
        match = _LINE_MAGIC.match(line.rstrip("\n"))
        if match is None:
            out.append(line)
            continue
        indent, rest = match.group(1), (match.group(2) or "").strip()
        word, _, note = rest.partition(" ")
        if word == FIX and not indent:
            out.append(_FIX_CALL.format(note=note.strip()))
            continue
        kind, text = classify(rest, MANAGEMENT_COMMANDS) if rest else ("command", rest)
        if indent or kind != "prompt":
            out.append(f"{indent}get_ipython().run_line_magic('logician', {rest!r})\n")
        else:
            out.append(_AGENT_CALL.format(options="", prompt=text))
    return out


def is_management_cell(code: str) -> bool:
    """True when every statement of the cell is a `%logician` management command."""
    lines = [ln for ln in code.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return False
    for line in lines:
        match = _MANAGEMENT_LINE.match(line)
        if match is None or line.lstrip().startswith("%%"):
            return False
        if (match.group(1) or "") not in MANAGEMENT_COMMANDS:
            return False
    return True


_MANAGEMENT_LINE = re.compile(r"^\s*%logician(?:\s+(\S+))?")


def loaded_magics(shell: Any) -> Any:
    """The shell's `LogicianMagics`, loading them if only their name is registered yet (the
    kernel's `LogicianStartMagics`); None when neither is (the extension is not loaded)."""
    registry = shell.magics_manager.registry
    magics = registry.get("LogicianMagics")
    if magics is None and "LogicianStartMagics" in registry:
        magics = registry["LogicianStartMagics"].load()
    return magics


class ArgParser(argparse.ArgumentParser):
    """argparse whose errors are a one-line `UsageError` naming the subcommand."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"%logician {self.prog}: {message}")
