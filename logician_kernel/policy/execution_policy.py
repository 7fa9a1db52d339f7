"""Acceptance checks: what must pass before a run may end as completed.

A check is a shell command (run like the `bash` tool: in the workspace, in its own process
group, killed with everything it started on timeout or cancellation) or a Python expression
(evaluated in the notebook's namespace through `ToolContext.run_python`, so it sees the
user's variables). It only reports; the run controller decides what a failure means.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
from dataclasses import dataclass

from ..tools import ToolContext, default_tools

PYTHON_PREFIX = "py:"
"""`--accept "py:len(df) > 0"` names a Python expression; anything else is a command."""


@dataclass(frozen=True)
class AcceptanceResult:
    """What one run of an acceptance check found."""

    passed: bool
    """Whether the check passed (exit code 0; a true expression)."""
    output: str
    """Its output, bounded to the check's `max_output_chars` (the tail is kept: that is
    where test runners put their summary)."""


@dataclass(frozen=True)
class AcceptanceCheck:
    """A command or a Python expression (exactly one) that must pass."""

    command: str | None = None
    """A bash command line; passes on exit code 0."""
    python_expr: str | None = None
    """A Python expression; passes when it evaluates true without raising."""
    timeout_seconds: float = 600.0
    """Longest one check may run; it fails when it takes longer."""
    max_output_chars: int = 4_000
    """Output kept for the model (the tail)."""

    def __post_init__(self) -> None:
        if (self.command is None) == (self.python_expr is None):
            raise ValueError("an acceptance check is a command or a Python expression, not both")
        text = self.command if self.command is not None else self.python_expr
        if not (text or "").strip():
            raise ValueError("the acceptance check is empty")
        if self.python_expr is not None:
            try:
                ast.parse(self.python_expr.strip(), mode="eval")
            except SyntaxError as exc:
                raise ValueError(
                    f"the acceptance expression {self.python_expr!r} is not a Python "
                    f"expression: {exc.msg}"
                ) from None

    @classmethod
    def parse(cls, spec: str, **options: float | int) -> AcceptanceCheck:
        """`py:<expression>` is a Python expression, anything else a command."""
        spec = spec.strip()
        if spec.startswith(PYTHON_PREFIX):
            return cls(python_expr=spec[len(PYTHON_PREFIX) :].strip(), **options)  # type: ignore[arg-type]
        return cls(command=spec, **options)  # type: ignore[arg-type]

    def describe(self) -> str:
        """`` `pytest -q` `` or `` the expression `len(df) > 0` ``."""
        if self.command is not None:
            return f"`{self.command.strip()}`"
        return f"the expression `{(self.python_expr or '').strip()}`"

    async def run(self, ctx: ToolContext, *, timeout: float | None = None) -> AcceptanceResult:
        """Run the check once; `timeout` (e.g. the run's remaining wall time) tightens the
        check's own. Never raises except `asyncio.CancelledError`."""
        limit = self.timeout_seconds if timeout is None else min(timeout, self.timeout_seconds)
        limit = max(limit, 0.001)
        if self.command is not None:
            bash = default_tools()["bash"]
            bounded = dataclasses.replace(ctx, bash_timeout_seconds=limit)
            result = await bash.run({"command": self.command}, bounded)
            return AcceptanceResult(not result.is_error, self._bounded(result.content))
        if ctx.run_python is None:
            return AcceptanceResult(
                False, "a Python acceptance expression needs a notebook kernel to run in"
            )
        expression = (self.python_expr or "").strip()
        code = f"assert (\n{expression}\n), {f'the expression is false: {expression}'!r}"
        try:
            result = await asyncio.wait_for(ctx.run_python(code), limit)
        except asyncio.TimeoutError:
            return AcceptanceResult(False, f"the expression did not finish within {limit:g} s")
        return AcceptanceResult(not result.is_error, self._bounded(result.content))

    def _bounded(self, text: str) -> str:
        text = text.rstrip()
        if len(text) <= self.max_output_chars:
            return text
        cut = len(text) - self.max_output_chars
        return f"[... {cut:,} earlier characters not shown]\n" + text[-self.max_output_chars :]
