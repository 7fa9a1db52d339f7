"""The tool contract: what a tool declares (spec, recovery, read-only), what it is given
(`ToolContext`) and what it returns (`ToolResult`).

A tool only *executes*. Recording the call's intent, its result and its commit as separate
states belongs to the harness; the tool declares how a call whose result was never recorded
may be recovered (`recovery`). `Tool.run` is the one entry point: it validates arguments
against the declared JSON schema and turns every failure into an error result, so a tool
never raises into the turn (cancellation excepted).
"""

from __future__ import annotations

import asyncio
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..durable import mask_values
from ..types import ToolSpec
from ._output import bound_output

if TYPE_CHECKING:
    from ._notebook import NotebookAccess, RecordCellEdit

Recovery = Literal["pure", "restorable", "external"]
"""How a call whose intent was recorded but whose result was not is recovered after a crash.

`pure`: no side effects, may be run again. `restorable`: its file effects are checkpointed
(captured before writing), so the frame can restore them. `external`: unknown effects; the
call is quarantined and reported, never repeated automatically (unless its writes were
recorded exactly as it ran, `ToolContext.watch_call`: then it is offered for rewind)."""

_DESCRIBE_LIMIT = 200

MAX_OUTPUT_BYTES = 30_000
"""What one tool call may return to the model, and print into the cell (head and tail kept)."""


@dataclass(frozen=True)
class ToolResult:
    """What one tool call produced."""

    content: str
    """What the model sees; bounded by `ToolContext.max_output_bytes`."""
    is_error: bool = False
    """Whether the call failed or was refused; `content` then says why."""
    display: str = ""
    """A compact one-line summary for the notebook, e.g. `wrote 120 B to a.txt`."""
    changed_paths: tuple[str, ...] = ()
    """Workspace-relative paths the tool knows it changed (write/edit)."""


class ToolError(Exception):
    """Raised inside a tool; `Tool.run` turns it into an error result with this message."""


@dataclass
class ToolContext:
    """What the kernel lends a tool for one call."""

    workspace: Path
    """Absolute workspace root; every path argument resolves against it."""
    capture: Callable[[str], None]
    """Called with a workspace-relative path before the tool writes it, so the current frame
    records the path's pre-state. If it raises, the tool must not write."""
    run_python: Callable[[str], Awaitable[ToolResult]] | None = None
    """Runs code in the notebook's namespace; supplied by the kernel, absent elsewhere."""
    max_output_bytes: int = MAX_OUTPUT_BYTES
    """Bound on any tool's `content`, in UTF-8 bytes."""
    bash_timeout_seconds: float = 120.0
    """Wall-clock limit of one `bash` call; its whole process group is killed after it."""
    secrets: tuple[str, ...] = ()
    """Values the model must never see in a tool result (the configured API key); masked,
    with the credential-named environment variables' values, before the result leaves."""
    capture_for_call: Callable[[str, str], None] | None = None
    """Like `capture`, also given the id of the call that captures (so the frame records which
    call's pre-image it holds); used instead of `capture` inside a call when set."""
    call_id: str | None = None
    """The tool call this context is lent to (the harness sets it per call)."""
    cwd: Path | None = None
    """Where the user's cells run (the kernel's current directory: the notebook's folder, or
    where `%cd` went). Relative paths resolve against it and results name paths relative to it,
    as `!ls` and `open()` in a cell do; the workspace still bounds what is allowed, captured
    and rewound. None, or a directory outside the workspace: the workspace root."""
    notebook: NotebookAccess | None = None
    """The live notebook the kernel runs in (its frontend), for `notebook_read` and
    `notebook_edit`; None where no frontend that speaks the notebook protocol is connected."""
    record_cell_edit: RecordCellEdit | None = None
    """Records an applied cell edit in the current frame, so a rewind can take it back."""
    watch_call: Callable[[str], AbstractContextManager[object]] | None = None
    """Given a call id: records the writes of the processes the call starts while the block
    runs (`bash`), so a call a dead kernel cut off can still be rewound."""

    def checkpoint(self, path: str) -> None:
        """Record `path`'s pre-state before writing it, naming this context's call if known."""
        if self.capture_for_call is not None and self.call_id is not None:
            self.capture_for_call(path, self.call_id)
        else:
            self.capture(path)


_JSON_TYPES: dict[str, str] = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
}


class Tool(ABC):
    """One tool the model may call. Subclasses declare the class attributes and `_execute`."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    """JSON schema of the arguments object: `properties` (each with `type`, `description`,
    optionally `default` and `minimum`) and `required`. `run` validates against it."""
    recovery: ClassVar[Recovery]
    read_only: ClassVar[bool]

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def describe(self, arguments: dict[str, Any]) -> str:
        """A readable one-liner of a call for the UI. Never raises, whatever the arguments."""
        try:
            text = self._describe(arguments if isinstance(arguments, dict) else {})
        except Exception:  # describe() never raises: bad arguments get the name
            text = self.name
        return _one_line(text, _DESCRIBE_LIMIT)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate and execute one call. Never raises except `asyncio.CancelledError`."""
        try:
            result = await self._execute(self._validate(arguments), ctx)
        except asyncio.CancelledError:
            raise
        except ToolError as exc:
            message = str(exc) or f"{self.name}: failed"
            result = ToolResult(content=message, is_error=True, display=_one_line(message, 120))
        except Exception as exc:  # a bug or an odd OS error must reach the model, not the turn
            message = f"{self.name}: unexpected {type(exc).__name__}: {exc}"
            result = ToolResult(content=message, is_error=True, display=_one_line(message, 120))
        masked = mask_values(result.content, ctx.secrets)
        if masked != result.content:
            result = dataclasses.replace(
                result, content=masked, display=mask_values(result.display, ctx.secrets)
            )
        if len(result.content) > ctx.max_output_bytes // 4:  # cheap pre-check before encoding
            bounded = bound_output(result.content, ctx.max_output_bytes)
            if bounded is not result.content:
                result = dataclasses.replace(result, content=bounded)
        return result

    @abstractmethod
    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work with validated arguments (defaults filled in); raise `ToolError`."""

    def _describe(self, arguments: dict[str, Any]) -> str:
        return self.name

    # -- argument validation -----------------------------------------------------------------

    def _validate(self, arguments: Any) -> dict[str, Any]:
        if not isinstance(arguments, dict):
            raise ToolError(f"{self.name}: arguments must be a JSON object")
        props: dict[str, dict[str, Any]] = self.parameters.get("properties", {})
        unknown = sorted(set(arguments) - set(props))
        if unknown:
            raise ToolError(
                f"{self.name}: unknown argument {unknown[0]!r}; "
                f"the arguments are: {', '.join(props) or '(none)'}"
            )
        values: dict[str, Any] = {}
        for key, schema in props.items():
            value = arguments.get(key)
            if value is None:
                if key in self.parameters.get("required", ()):
                    raise ToolError(
                        f"{self.name}: missing required argument {key!r} "
                        f"({schema.get('description', schema.get('type', ''))})"
                    )
                values[key] = schema.get("default")
                continue
            values[key] = self._check_value(key, value, schema)
        return values

    def _check_value(self, key: str, value: Any, schema: dict[str, Any]) -> Any:
        kind = str(schema.get("type", ""))
        ok = True
        if kind == "string":
            ok = isinstance(value, str)
        elif kind == "boolean":
            ok = isinstance(value, bool)
        elif kind == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind == "number":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok:
            raise ToolError(
                f"{self.name}: argument {key!r} must be {_JSON_TYPES.get(kind, kind)}, "
                f"got {_short_repr(value)} ({type(value).__name__})"
            )
        minimum = schema.get("minimum")
        if minimum is not None and value < minimum:
            raise ToolError(
                f"{self.name}: argument {key!r} must be at least {minimum}, got {value}"
            )
        return value


def format_size(n: int) -> str:
    """`120 B`, `4.0 KiB`, `2.5 MiB`."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def first_line(text: str) -> str:
    """The first non-blank line, with ` …` when more lines follow."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[0].strip() + (" …" if len(lines) > 1 else "")


def _one_line(text: str, limit: int) -> str:
    text = first_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
