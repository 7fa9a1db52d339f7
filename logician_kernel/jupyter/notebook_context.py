"""What the agent knows of the notebook it lives in: the kernel's side of the context block.

Owns the bounded projections the block is built from, kept as cells run: IPython's
`pre_run_cell` / `post_run_cell` events record each top-level cell (its source, id, `In [n]`,
outcome and frame) in a ring of `KEEP_CELLS`, and a failing cell's error as plain strings
(name, value, the last frames), never the exception. At a prompt (`block`), on the main
thread, it reads the notebook's path (the frontend's, VS Code's `__vsc_ipynb_file__`, the
server's `JPY_SESSION_NAME`), the prompting cell's position in the saved `.ipynb`, and a
summary of at most `MAX_VARIABLES` user variables, and hands them to the core's
`render_block` (budget `agent.context_tokens`, capped at 1/8 of a small model's context
window: `context_budget`; secrets masked). Also `%logician context`,
`%logician fix`, and the notebook rows of `%logician status`.

Must never: make a cell wait on more than appending to the ring (and, for a failing cell,
formatting its last three frames): nothing is summarised or rendered on the input path;
keep an exception or a value alive; or let a failure here reach the user's cell or stop a
run (the run goes without a block, and the log says why).
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
import traceback
import types
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import IPython
from IPython.core.error import UsageError

from ..agent.context_budget import BudgetCap, context_budget
from ..agent.notebook_context import (
    CellError,
    CellRecord,
    ContextBlock,
    NotebookView,
    Outcome,
    VariableSummary,
    fix_prompt,
    left_out_line,
    render_block,
    summarize,
)
from ..workspace import VSCODE_NOTEBOOK
from .magic_words import loaded_magics

if TYPE_CHECKING:
    from ..agent.notebook_access import NotebookAccess, NotebookFile, SavedNotebook
    from ..config import LogicianSettings
    from ..workspace import Workspace
    from . import display as render

logger = logging.getLogger(__name__)

KEEP_CELLS = 24
"""Cells kept for the context (the budget shows fewer, the most recent)."""
MAX_VARIABLES = 400
"""User variables looked at, at most, per prompt."""
MAX_KEPT_CHARS = 20_000
"""A cell's source is kept up to this many characters (head and tail)."""
TRACEBACK_FRAMES = 3
"""Frames of a traceback kept (the innermost)."""
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_COUNTED_BEFORE_PRE_RUN_CELL = IPython.version_info >= (9, 8)
"""IPython 9.8 counts a cell before `pre_run_cell` (as `extension.py` says)."""


class Session(Protocol):
    """What the context needs of the agent's session (`AgentSession`, or the kernel's
    `KernelParts`, which loads it on first use): the workspace as cells are recorded, the
    settings and the secrets at a prompt."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def settings(self) -> LogicianSettings: ...

    def secrets(self) -> tuple[str, ...]: ...


class NotebookContext:
    """The recorded cells and errors of one shell, and the block built from them."""

    def __init__(self, shell: Any, agent: Session) -> None:
        self.shell = shell
        self.agent = agent
        self.cells: deque[tuple[CellRecord, CellError | None]] = deque(maxlen=KEEP_CELLS)
        self.last_error: CellError | None = None
        """The most recent cell's error, kept after it leaves the ring (`%logician fix`)."""
        self.frontend_notebook: str | None = None
        """The notebook's path as a connected frontend names it (preferred when set)."""
        self.frontends = lambda: 0
        """How many connected clients speak the notebook protocol (set by the comm side)."""
        self.served = False
        """Whether `logician run` serves the notebook this kernel runs."""
        self.last_tokens: int | None = None
        self.last_cap: BudgetCap | None = None
        """Set when the last prompt's block was capped under `agent.context_tokens`."""
        """The size of the block the last prompt carried (None before the first)."""
        self._depth = 0
        self._current: tuple[str, str | None, int | None] | None = None
        self._file: NotebookFile | None = None
        shell.events.register("pre_run_cell", self._pre)
        shell.events.register("post_run_cell", self._post)

    def close(self) -> None:
        """Stop recording (`%unload_ext`)."""
        for event, hook in (("pre_run_cell", self._pre), ("post_run_cell", self._post)):
            try:
                self.shell.events.unregister(event, hook)
            except ValueError:
                pass  # already gone

    # -- recording (the input path: appends only) -------------------------------------------

    def _pre(self, info: Any) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # a subshell's cell: not the notebook's sequence of cells
        self._depth += 1
        if self._depth > 1 or getattr(info, "silent", False):
            return  # the python tool's nested cell, or a frontend's background request
        code = getattr(info, "raw_cell", "") or ""
        if len(code) > MAX_KEPT_CHARS:  # the ring holds sources, bounded, never a huge paste
            code = code[: MAX_KEPT_CHARS // 2] + "\n…\n" + code[-MAX_KEPT_CHARS // 2 :]
        self._current = (code, getattr(info, "cell_id", None), self._count(info))

    def _post(self, result: Any) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self._depth = max(0, self._depth - 1)
        if self._depth > 0:
            return  # a nested cell (the python tool's) ended; the prompting cell runs on
        current, self._current = self._current, None
        if current is None or _only_commands(current[0]):
            return
        try:
            self._record(current, result)
        except Exception:  # noqa: BLE001 - recording must never fail the user's cell
            logger.exception("recording the cell for the notebook context failed")

    def _count(self, info: Any) -> int | None:
        """The running cell's `In [n]` (None when it stores no history)."""
        count = self.shell.execution_count
        if not getattr(info, "store_history", True) or not isinstance(count, int):
            return None
        return count - 1 if _COUNTED_BEFORE_PRE_RUN_CELL else count

    def _record(self, current: tuple[str, str | None, int | None], result: Any) -> None:
        code, cell_id, count = current
        counted = getattr(result, "execution_count", None)
        count = counted if isinstance(counted, int) else count
        exc = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        outcome: Outcome = (
            "ok"
            if exc is None
            else "interrupted"
            if isinstance(exc, KeyboardInterrupt)
            else "error"
        )
        checkpoints = self.agent.workspace.checkpoints_if_on
        frame = checkpoints.current_frame if checkpoints is not None else None
        agent = _is_agent_cell(code)
        record = CellRecord("" if agent else code, count, cell_id, outcome, frame, agent)
        error = None
        if outcome == "error" and exc is not None:
            error = CellError(
                type(exc).__name__, _evalue(exc), self._frames(exc), count, cell_id, code
            )
            self.last_error = error
        self.cells.append((record, error))

    def _frames(self, exc: BaseException) -> tuple[str, ...]:
        frames = [
            f
            for f in traceback.extract_tb(exc.__traceback__)
            if f"{os.sep}IPython{os.sep}core{os.sep}" not in f.filename
        ][-TRACEBACK_FRAMES:]
        lines = []
        for f in frames:
            where = self._cell_name(f.filename)
            line = (f.line or "").strip()
            lines.append(f"{where}, line {f.lineno}, in {f.name}" + (f": {line}" if line else ""))
        if isinstance(exc, SyntaxError) and exc.text:
            lines.append(f"line {exc.lineno}: {exc.text.strip()}")
        return tuple(lines)

    def _cell_name(self, filename: str) -> str:
        try:
            named = self.shell.compile.format_code_name(filename)
        except Exception:  # noqa: BLE001 - an IPython without the cell names: the file's own
            named = None
        if named:
            return str(named[1])
        return _short_path(filename)

    # -- at a prompt (main thread) ---------------------------------------------------------

    def notebook_path(self) -> Path | None:
        """The notebook's path, from the best source that named one."""
        named = (
            self.frontend_notebook
            or self.shell.user_ns.get(VSCODE_NOTEBOOK)
            or os.environ.get("JPY_SESSION_NAME", "").strip()
        )
        if not isinstance(named, str) or not named:
            return None
        path = Path(named).expanduser()
        return path if path.is_absolute() else Path.cwd() / path

    def access(self) -> NotebookAccess:
        """Whether the notebook tools are offered, why, and where cells are read from."""
        from ..agent.notebook_access import notebook_access  # loaded when first asked

        return notebook_access(
            frontends=self.frontends(), notebook=self.notebook_path(), served=self.served
        )

    def saved(self) -> SavedNotebook | None:
        """The notebook as saved on disk (read-only), or None without a path."""
        path = self.notebook_path()
        if path is None:
            return None
        from ..agent.notebook_access import NotebookFile

        if self._file is None or self._file.path != path:
            self._file = NotebookFile(path)
        return self._file.read()

    def view(self, *, next_prompt: bool = False) -> NotebookView:
        """What the block is built from now: the prompting cell is the one running, or with
        `next_prompt` (`%logician context`) one not run yet, whose id and place are not known."""
        workspace = self.agent.workspace
        path = self.notebook_path()
        shown = None
        if path is not None:
            try:
                shown = path.relative_to(workspace.root).as_posix()
            except ValueError:
                shown = str(path)
        _, cell_id, count = self._current or ("", None, None)
        if next_prompt:
            cell_id = count = None
        saved = self.saved()
        frames = self._frames_view()
        kept = [
            (c, e)
            for c, e in self.cells
            if c.frame is None or getattr(frames.get(c.frame), "status", "") != "rewound"
        ]
        previous_error = kept[-1][1] if kept else None
        return NotebookView(
            notebook=shown,
            cell_id=cell_id,
            position=saved.position(cell_id) if saved is not None else None,
            execution_count=count,
            cells=self._earlier(frames, kept) + [c for c, _ in kept],
            error=previous_error,
            variables=self.variables(),
            notes=[f"Notebook tools: {self.access().reason}."],
        )

    def _frames_view(self) -> dict[int, Any]:
        checkpoints = self.agent.workspace.checkpoints_if_on
        return checkpoints.frames() if checkpoints is not None else {}

    def _earlier(
        self, frames: dict[int, Any], kept: list[tuple[CellRecord, CellError | None]]
    ) -> list[CellRecord]:
        """Cells this kernel has no record of (run before it started, or out of the ring):
        their first lines from the thread's frames, the oldest dropped first by the budget."""
        room = KEEP_CELLS - len(kept)
        known = [c.frame for c, _ in kept if c.frame is not None]
        first = min(known) if known else None
        if room <= 0:
            return []
        earlier = [
            f
            for f in frames.values()
            if f.status == "active"
            and (first is None or f.frame < first)
            and f.frame not in known
            and not _only_commands(f.code)
        ][-room:]
        return [
            CellRecord(
                "" if _is_agent_cell(f.code) else f"{f.code}  # first line only (frame record)",
                f.execution_count,
                f.cell_id,
                "error" if f.outcome == "error" else "ok",
                f.frame,
                _is_agent_cell(f.code),
            )
            for f in earlier
        ]

    def variables(self) -> list[VariableSummary]:
        """The user's variables, data first (newest first), then functions and classes."""
        ns = self.shell.user_ns
        hidden = getattr(self.shell, "user_ns_hidden", {})
        data: list[VariableSummary] = []
        code: list[VariableSummary] = []
        for name in list(reversed(ns))[:MAX_VARIABLES]:
            if name.startswith("_") or name in _IPYTHON_NAMES:
                continue
            value = ns.get(name)
            if name in hidden and hidden[name] is value:
                continue
            if isinstance(value, types.ModuleType):
                continue  # modules: the cells' imports say them
            summary = summarize(name, value)
            (code if inspect.isroutine(value) or isinstance(value, type) else data).append(summary)
        return data + code

    def block(self, *, next_prompt: bool = False) -> ContextBlock:
        """The block the running prompt (or with `next_prompt`, the next one) carries; empty
        when `agent.context_tokens` is under the minimum."""
        settings = self.agent.settings
        from ..agent.model_choice import context_window  # the providers: at a prompt only

        budget, cap = context_budget(settings.agent.context_tokens, context_window(settings.model))
        view = self.view(next_prompt=next_prompt)
        return render_block(view, budget, self.agent.secrets(), cap=cap)

    def safe_block(self) -> ContextBlock | None:
        """`block()`, or None (logged) if gathering it failed: a run goes on without it."""
        try:
            block = self.block()
            self.last_tokens = block.tokens
            self.last_cap = block.cap
            return block
        except Exception:  # noqa: BLE001 - a broken projection must not stop the agent's run
            logger.exception("building the notebook context failed; the run goes without it")
            return None

    # -- commands ----------------------------------------------------------------------------

    def handle_context(self, args: list[str]) -> render.Rendered:
        """`%logician context`: exactly what the next prompt's message opens with."""
        from . import display as render  # noqa: F811 - the renderer loads with the magics

        if args:
            raise UsageError("%logician context: takes no arguments")
        block = self.block(next_prompt=True)
        if not block.text:
            return render.preformatted(
                f"No notebook context is sent (agent.context_tokens = {block.budget}; "
                "`%logician config set agent.context_tokens 2000` turns it on)."
            )
        why = str(block.cap) if block.cap else "agent.context_tokens"
        foot = f"~{block.tokens:,} of {block.budget:,} tokens ({why})"
        left = left_out_line(block)
        return render.preformatted(
            block.text.rstrip() + "\n\n" + foot + (f"; {left}" if left else "")
        )

    def fix_prompt(self, note: str) -> str:
        """The prompt of `%logician fix`: the most recent error, with its cell."""
        error = next((e for _, e in reversed(self.cells) if e is not None), self.last_error)
        if error is None:
            raise UsageError(
                "%logician fix: no cell has raised an error in this kernel yet "
                "(run the failing cell, then `%logician fix`)"
            )
        return fix_prompt(error, note, self.agent.secrets())

    def status_rows(self) -> list[list[str]]:
        """The notebook rows of `%logician status`."""
        path = self.notebook_path()
        budget = self.agent.settings.agent.context_tokens
        sent = "no prompt yet" if self.last_tokens is None else f"~{self.last_tokens:,} tokens"
        if self.last_cap:
            sent += f" ({self.last_cap})"
        return [
            ["notebook", str(path) if path is not None else "unknown"],
            ["notebook tools", self.access().reason],
            ["notebook context", f"{sent} last prompt (agent.context_tokens = {budget:,})"],
        ]


def _evalue(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails is named by its type
        return ""
    return text[:2_000]


def _short_path(filename: str) -> str:
    marker = f"{os.sep}site-packages{os.sep}"
    return filename.split(marker, 1)[1] if marker in filename else filename


def _is_agent_cell(code: str) -> bool:
    first = code.lstrip().split("\n", 1)[0].strip()
    return first == "%%logician" or first.startswith(("%%logician ", "%%logician\t"))


def _only_commands(code: str) -> bool:
    """A cell made only of `%logician` lines (commands and prompts are in the conversation)."""
    lines = [
        ln.strip() for ln in code.splitlines() if ln.strip() and not ln.strip().startswith("#")
    ]
    return bool(lines) and all(ln.startswith("%logician") for ln in lines)


async def run_fix_cell(shell: Any, note: str) -> None:
    """What a top-level `%logician fix [NOTE]` line awaits (see `magics.protect_prompt_lines`):
    an agent run on the last error, with the kernel's loop turning (approval clicks arrive)."""
    magics = loaded_magics(shell)
    if magics is None:
        raise UsageError("%logician fix: the logician extension is not loaded")
    await magics.run_agent_async("", magics.notebook.fix_prompt(note))
