"""Parsing and rendering helpers of `%logician`, split out of `magics.py`: the argument parser whose errors are one-line usage errors, a
`%%logician` cell's run options, the branches table, and what an agent cell awaits."""

from __future__ import annotations

import shlex
from typing import Any

from IPython.core.error import UsageError

from ..agent import RunOptions
from ..agent.ui import MODES
from ..workspace import Branch
from . import display as render
from .agent_errors import positive
from .magic_words import ASK, ArgParser, classify, loaded_magics, unknown_command

__all__ = ["ASK", "ArgParser", "classify", "run_agent_cell", "run_options", "unknown_command"]


async def run_agent_cell(shell: Any, options: str, prompt: str) -> None:
    """What a `%%logician` cell awaits (see `protect_prompt_lines`), in our kernel or in any
    IPython with the extension loaded."""
    magics = loaded_magics(shell)
    if magics is None:
        raise UsageError(
            "%%logician: the logician extension is not loaded (`%load_ext logician_kernel`)"
        )
    await magics.run_agent_async(options, prompt)


def run_options(options: str) -> RunOptions:
    """The options on a `%%logician` line (`--max-turns N` ...)."""
    parser = ArgParser(prog="%%logician", add_help=False)
    parser.add_argument("--max-turns", type=positive(int), metavar="N")
    parser.add_argument("--max-tool-calls", type=positive(int), metavar="N")
    parser.add_argument("--budget-usd", type=positive(float), metavar="USD")
    parser.add_argument("--mode", choices=list(MODES))
    parser.add_argument(
        "--accept",
        metavar="CHECK",
        help="a command, or py:EXPRESSION, that must pass before completion",
    )
    parser.add_argument("--profile", metavar="NAME", help="a [profiles.NAME] for this cell")
    try:
        opts = parser.parse_args(shlex.split(options))
    except ValueError as exc:
        raise UsageError(f"%%logician: cannot parse the options ({exc})") from None
    return RunOptions(
        max_turns=opts.max_turns,
        max_tool_calls=opts.max_tool_calls,
        budget_usd=opts.budget_usd,
        mode=opts.mode,
        accept=opts.accept,
        profile=opts.profile,
    )


def branches_table(found: list[Branch]) -> render.Rendered:
    if not found:
        return render.preformatted("No branches: a rewind that drops messages or frames makes one.")
    lines = [f"{'branch':<8} {'status':<10} {'frames':<12} messages  created"]
    for b in found:
        span = ", ".join(map(str, b.frames)) or "-"
        lines.append(
            f"{b.id:<8} {b.status:<10} {span:<12} {len(b.messages):>8}  {b.created_at[:19]}"
        )
    return render.preformatted("\n".join(lines))
