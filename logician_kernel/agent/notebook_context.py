"""The notebook context block: where the agent is, within a bounded budget.

Owns the block a prompt's message opens with (and `%logician context` shows): the notebook's
path, the prompting cell's id and position, the sources of the cells run just before it
(oldest first, as executed), the previous cell's error (name, value, its last frames) and a
summary of the user's variables (name, type, size, shape, dtype, a DataFrame's columns). It
is rendered from a `NotebookView` the presentation layer gathers from bounded projections;
everything here is pure: masking (`durable.redact`, the strictest masker), the token estimate
(`compaction.tokens`' characters-per-token) and the truncation order. Over budget, the
oldest cells go first, then the variables; the header and the error always stay (cut short
themselves only when the budget cannot hold them whole). The budget is `agent.context_tokens`,
capped at an eighth of a small model's context window (`context_budget.py`).

Must never: read the namespace, a file or the ledger; render a variable's value; let the
block exceed its budget; or let anything the masker hides through.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..durable import is_credential_name, redact
from .context_budget import BudgetCap

MAX_CELL_CHARS = 1_500
"""A cell's source longer than this is shown head and tail, the middle left out."""
MAX_EVALUE_CHARS = 400
"""An error's value (`str(exc)`) is cut here."""
MAX_FRAME_CHARS = 240
"""One traceback line is cut here."""
MAX_VARIABLE_CHARS = 240
"""One variable's line is cut here."""
MIN_BUDGET = 100
"""A smaller budget sends no block: the markers and the header alone would not fit."""
VARIABLE_SHARE = 0.35
"""At most this share of what the header and error leave goes to the variables while cells
still wait; what the cells leave unused goes to the variables too."""

Outcome = Literal["ok", "error", "interrupted"]


@dataclass(frozen=True)
class CellRecord:
    """A cell the kernel ran, as the context shows it."""

    source: str
    """The cell's source as typed."""
    execution_count: int | None
    """`In [n]`, when the cell stored history."""
    cell_id: str | None = None
    """The notebook cell id the frontend sent."""
    outcome: Outcome = "ok"
    """How the cell ended."""
    frame: int | None = None
    """The frame it ran in (a cell whose frame was rewound is left out)."""
    agent: bool = False
    """A `%%logician` cell: shown by its place only, its prompt being the conversation's
    (which `%logician clear` and a conversation rewind take back)."""


@dataclass(frozen=True)
class CellError:
    """A cell's error, taken when the cell ended (no exception object is kept)."""

    ename: str
    """The exception's class name, e.g. `KeyError`."""
    evalue: str
    """`str(exc)`, bounded."""
    frames: tuple[str, ...]
    """The last frames of the traceback, innermost last, one line each."""
    execution_count: int | None = None
    """The failing cell's `In [n]`."""
    cell_id: str | None = None
    """The failing cell's id."""
    source: str = ""
    """The failing cell's source."""


@dataclass(frozen=True)
class VariableSummary:
    """One user variable: its name and shape, never its value."""

    name: str
    kind: str
    """The type's name (`pandas.DataFrame`, `list`)."""
    detail: str = ""
    """Size, shape, dtype, columns: what can be told without the value."""


@dataclass(frozen=True)
class NotebookView:
    """What the presentation layer gathered for one prompt (each part already bounded)."""

    notebook: str | None = None
    """The notebook's path (workspace-relative where it lies inside), when known."""
    cell_id: str | None = None
    """The prompting cell's id, when the frontend sent one."""
    position: tuple[int, int] | None = None
    """The prompting cell's 0-based index and the notebook's cell count, where known."""
    execution_count: int | None = None
    """The prompting cell's `In [n]`."""
    cells: Sequence[CellRecord] = ()
    """The cells run before the prompting one, oldest first."""
    error: CellError | None = None
    """The previous cell's error, when it raised one."""
    variables: Sequence[VariableSummary] = ()
    """The user's variables, in the order to show them."""
    notes: Sequence[str] = ()
    """Lines said after the header (where the cells can be read, ...)."""


@dataclass(frozen=True)
class ContextBlock:
    """The rendered block and what it holds."""

    text: str
    """The block with its markers, or "" when the budget is 0."""
    tokens: int
    """Its estimated size in tokens (never above `budget`)."""
    budget: int
    cells_shown: int = 0
    cells_left_out: int = 0
    variables_shown: int = 0
    variables_left_out: int = 0
    cap: BudgetCap | None = None
    """Set when `budget` is under `agent.context_tokens`: a small context window capped it."""


def estimate(text: str) -> int:
    """Tokens by the compaction heuristic (characters / 4, rounded up)."""
    from ..compaction.tokens import CHARS_PER_TOKEN  # the models load at a prompt, not start

    return -(-len(text) // CHARS_PER_TOKEN)


def _cut(text: str, limit: int) -> str:
    """`text` within `limit` characters: head and tail, the middle said to be left out."""
    if len(text) <= limit:
        return text
    if limit < 40:
        return text[: max(0, limit)]
    keep = limit - 30
    head, tail = text[: keep * 2 // 3], text[len(text) - keep // 3 :]
    return f"{head}\n… [{len(text) - keep} characters left out] …\n{tail}"


def _where(count: int | None, cell_id: str | None) -> str:
    parts = [f"In [{count}]" if count is not None else "a cell"]
    if cell_id:
        parts.append(f"(id {cell_id})")
    return " ".join(parts)


def _header(view: NotebookView, secrets: Iterable[str]) -> list[str]:
    lines = [
        "The notebook as the kernel sees it now (sources and names only; values are never "
        "shown; secrets masked). Tools may read more."
    ]
    lines.append(f"Notebook: {view.notebook}" if view.notebook else "Notebook: path unknown")
    if view.execution_count is None and view.cell_id is None:
        where = "This prompt's cell: its number and id are known once it runs"
    else:
        where = "This prompt is " + _where(view.execution_count, view.cell_id)
    if view.position is not None:
        index, total = view.position
        where += f", cell {index + 1} of {total} in the saved notebook"
    lines.append(where + ".")
    lines.extend(view.notes)
    return [redact(line, secrets) for line in lines]


def error_lines(
    error: CellError, secrets: Iterable[str] = (), subject: str = "The previous cell"
) -> list[str]:
    """The error as the context and `%logician fix` say it, masked and bounded."""
    secrets = tuple(secrets)
    value = _cut(redact(error.evalue, secrets), MAX_EVALUE_CHARS).replace("\n", " ")
    lines = [
        f"{subject}, {_where(error.execution_count, error.cell_id)}, raised {error.ename}: {value}"
    ]
    if error.frames:
        lines.append("Traceback (last frames, innermost last):")
        lines.extend("  " + _cut(redact(f, secrets), MAX_FRAME_CHARS) for f in error.frames)
    return lines


def _cell_text(cell: CellRecord, limit: int, secrets: Iterable[str]) -> str:
    said = {"ok": "", "error": ", raised an error", "interrupted": ", interrupted"}[cell.outcome]
    if cell.agent:
        where = _where(cell.execution_count, cell.cell_id)
        return f"{where}{said}: a %%logician cell (its prompt is in the conversation)"
    source = _cut(redact(cell.source.rstrip(), secrets), max(0, limit))
    return f"{_where(cell.execution_count, cell.cell_id)}{said}:\n```\n{source}\n```"


def _variable_text(variable: VariableSummary, secrets: Iterable[str]) -> str:
    # `name (type): detail`, never `name: type`: the masker reads `password: str` as a secret
    text = f"- {variable.name} ({variable.kind})"
    if variable.detail:
        text += f": {variable.detail}"
    return _cut(redact(text, secrets), MAX_VARIABLE_CHARS).replace("\n", " ")


def render_block(
    view: NotebookView,
    budget_tokens: int,
    secrets: Iterable[str] = (),
    *,
    cap: BudgetCap | None = None,
) -> ContextBlock:
    """The block for `view` within `budget_tokens` (estimated), every part masked; `cap` when
    the budget is under `agent.context_tokens` (`context_budget`)."""
    block = _render(view, budget_tokens, tuple(secrets))
    return replace(block, cap=cap) if cap is not None else block


def _render(view: NotebookView, budget_tokens: int, secrets: tuple[str, ...]) -> ContextBlock:
    if budget_tokens < MIN_BUDGET:
        return ContextBlock("", 0, budget_tokens)
    from ..compaction.tokens import CHARS_PER_TOKEN
    from ..types.messages import NOTEBOOK_CONTEXT_CLOSE, NOTEBOOK_CONTEXT_OPEN

    room = budget_tokens * CHARS_PER_TOKEN - len(NOTEBOOK_CONTEXT_OPEN + NOTEBOOK_CONTEXT_CLOSE)
    head = "\n".join(_header(view, secrets))
    error = "\n".join(error_lines(view.error, secrets)) if view.error is not None else ""
    footnote_room = 160  # "[N older cells and M variables left out ...]"
    fixed = head + ("\n" + error if error else "")
    if len(fixed) + footnote_room > room:  # a tiny budget: the header and error, cut
        text = _cut(fixed, max(0, room))
        return _block(text, budget_tokens, secrets, 0, len(view.cells), 0, len(view.variables))
    left = room - len(fixed) - footnote_room
    variables = [_variable_text(v, secrets) for v in view.variables]
    wanted = sum(len(v) + 1 for v in variables) + (40 if variables else 0)
    cells_room = left - min(wanted, int(left * VARIABLE_SHARE))
    shown: list[str] = []
    used = len("Cells run before this prompt (oldest first):\n") if view.cells else 0
    for cell in reversed(view.cells):  # the most recent first
        text = _cell_text(cell, MAX_CELL_CHARS, secrets)
        if used + len(text) + 1 > cells_room:
            spare = cells_room - used - len(_cell_text(cell, 0, secrets)) - 1
            if shown or spare < 80:
                break
            text = _cut(_cell_text(cell, spare, secrets), cells_room - used - 1)
        shown.append(text)
        used += len(text) + 1
    var_room = left - (used if shown else 0)
    var_shown: list[str] = []
    var_used = len("Variables (no values):\n")
    for line in variables:
        if var_used + len(line) + 1 > var_room:
            break
        var_shown.append(line)
        var_used += len(line) + 1
    parts = [head]
    if shown:
        parts.append("Cells run before this prompt (oldest first):\n" + "\n".join(reversed(shown)))
    if error:
        parts.append(error)
    if var_shown:
        parts.append("Variables (no values):\n" + "\n".join(var_shown))
    cells_out, vars_out = len(view.cells) - len(shown), len(variables) - len(var_shown)
    if cells_out or vars_out:
        parts.append(
            f"[{cells_out} older cell(s) and {vars_out} variable(s) left out to stay within "
            f"{budget_tokens:,} tokens]"
        )
    text = _cut("\n".join(parts), max(0, room))
    return _block(text, budget_tokens, secrets, len(shown), cells_out, len(var_shown), vars_out)


def _block(
    body: str,
    budget: int,
    secrets: tuple[str, ...],
    cells: int,
    cells_out: int,
    variables: int,
    variables_out: int,
) -> ContextBlock:
    from ..types.messages import NOTEBOOK_CONTEXT_CLOSE, NOTEBOOK_CONTEXT_OPEN

    text = NOTEBOOK_CONTEXT_OPEN + body + NOTEBOOK_CONTEXT_CLOSE
    return ContextBlock(text, estimate(text), budget, cells, cells_out, variables, variables_out)


def fix_prompt(error: CellError, note: str = "", secrets: Iterable[str] = ()) -> str:
    """What `%logician fix` asks: explain and fix `error`, with its cell's source."""
    secrets = tuple(secrets)
    where = _where(error.execution_count, error.cell_id)
    lines = [f"Explain and fix the error that {where} raised."]
    if error.source:
        source = _cut(redact(error.source.rstrip(), secrets), MAX_CELL_CHARS * 2)
        lines += ["", "The cell:", "```", source, "```"]
    lines += ["", *error_lines(error, secrets, subject="The cell")]
    lines += [
        "",
        "Say briefly what went wrong, then fix it: change what needs changing (files, or the "
        "cell itself when a notebook tool can edit it; otherwise give the corrected cell for "
        "the user to run), and check the fix where you can.",
    ]
    if note.strip():
        lines += ["", note.strip()]
    return "\n".join(lines)


def left_out_line(block: ContextBlock) -> str:
    """One line on what the budget left out, or ""."""
    if not (block.cells_left_out or block.variables_left_out):
        return ""
    why = "the cap above" if block.cap else f"agent.context_tokens = {block.budget:,}"
    return (
        f"{block.cells_left_out} older cell(s) and {block.variables_left_out} variable(s) "
        f"left out by the budget ({why})"
    )


_SIZED = (list, tuple, set, frozenset, dict, str, bytes, bytearray)
MAX_COLUMNS = 24
"""A DataFrame's columns named at most (the rest counted)."""
MAX_KEYS = 12
"""A dict's keys named at most (the rest counted)."""


def summarize(name: str, value: object) -> VariableSummary:
    """`value` described without its value: builtin containers by `len` (a dict by its
    keys), numpy and pandas objects by shape, dtype and columns; anything else by its type.
    No method of a user's class is called; a credential-named variable shows its type only."""
    kind = type(value)
    type_name = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    if is_credential_name(name):
        return VariableSummary(name, type_name, "a credential's name: nothing more shown")
    try:
        detail = _detail(value, kind)
    except Exception:  # noqa: BLE001 - a library object that cannot say its shape is shown by type
        detail = ""
    return VariableSummary(name, _short_type(type_name), detail)


def _short_type(name: str) -> str:
    for long, short in (("pandas.core.frame.", "pandas."), ("pandas.core.series.", "pandas.")):
        if name.startswith(long):
            return short + name[len(long) :]
    return name


def _detail(value: object, kind: type) -> str:
    if kind in _SIZED:
        size = len(value)  # type: ignore[arg-type]
        if kind is dict and size:
            keys = [repr(k) for k in list(value)[:MAX_KEYS]]  # type: ignore[call-overload]
            more = f", +{size - MAX_KEYS} more" if size > MAX_KEYS else ""
            return f"len {size}, keys {', '.join(k[:40] for k in keys)}{more}"
        return f"len {size}"
    root = kind.__module__.split(".", 1)[0]
    if root == "numpy":
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        return f"shape {tuple(shape)}, dtype {dtype}" if shape is not None else f"dtype {dtype}"
    if root != "pandas":
        return ""
    shape = tuple(getattr(value, "shape", ()))
    columns = getattr(value, "columns", None)
    if columns is not None:
        dtypes = getattr(value, "dtypes", None)
        named = [
            f"{c} ({dtypes.iloc[i] if dtypes is not None else '?'})"
            for i, c in enumerate(list(columns[:MAX_COLUMNS]))
        ]
        more = f", +{len(columns) - MAX_COLUMNS} more" if len(columns) > MAX_COLUMNS else ""
        return f"shape {shape}, columns: {', '.join(named)}{more}"
    dtype = getattr(value, "dtype", None)
    label = getattr(value, "name", None)
    return f"shape {shape}, dtype {dtype}" + (f", name {label!r}" if label is not None else "")
