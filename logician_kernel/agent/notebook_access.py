"""Where the agent reads the notebook from, and whether the notebook tools are offered.

Owns two answers. `notebook_tools_available(...)`: the tools that read and edit the live
notebook are offered only where a client that speaks the notebook protocol holds the
document (the lab extension over the `logician` comm, or `logician run` serving the notebook
it runs); elsewhere (papermill, VS Code, a console) they are not, and the reason says what
the agent reads instead. The read-only fallback: the cells of the
`.ipynb` as last saved on disk (`NotebookFile`: an outline, or one cell in full with its
outputs bounded and images as placeholders).

Must never: write a notebook file (a client that has it open owns it), read a file larger
than `MAX_NOTEBOOK_BYTES`, or raise for a missing or malformed file (it reads as no cells,
with the reason).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

MAX_NOTEBOOK_BYTES = 32 * 1024 * 1024
"""A saved notebook larger than this is not read (its outputs are what make it large)."""

Reads = Literal["frontend", "runner", "file", "none"]


@dataclass(frozen=True)
class NotebookAccess:
    """Whether the notebook tools are offered, why, and where cells are read from."""

    tools: bool
    """Whether `notebook_read` / `notebook_edit` are offered to the model."""
    reason: str
    """One sentence for `%logician status`."""
    reads: Reads
    """Where reading the cells goes: the live document, `logician run`'s notebook, the
    `.ipynb` on disk (read-only), or nowhere."""


def notebook_access(
    *, frontends: int, notebook: str | os.PathLike[str] | None, served: bool = False
) -> NotebookAccess:
    """The answer for a kernel with `frontends` connected clients that speak the notebook
    protocol, `notebook` the notebook's path when one reached it (absolute, or relative to
    the working directory), and `served` when `logician run` serves the notebook it runs."""
    if frontends > 1:
        return NotebookAccess(
            True,
            f"offered: {frontends} clients hold this notebook; edits go to the live document "
            "(each client sees them)",
            "frontend",
        )
    if frontends == 1:
        return NotebookAccess(
            True, "offered: JupyterLab's Logician extension holds this notebook", "frontend"
        )
    if served:
        return NotebookAccess(
            True, "offered: `logician run` serves the notebook it is running", "runner"
        )
    why = (
        "not offered: no client that speaks the notebook protocol is connected (JupyterLab "
        "with the Logician extension; papermill, VS Code and consoles do not)"
    )
    if notebook is None:
        return NotebookAccess(False, why + ", and no notebook path reached the kernel", "none")
    path = Path(notebook)
    if not path.is_file():
        return NotebookAccess(False, f"{why}; {path.name} is not saved on disk", "none")
    return NotebookAccess(
        False, f"{why}; cells are read from {path.name} as saved on disk, read-only", "file"
    )


def notebook_tools_available(
    *, frontends: int, notebook: str | os.PathLike[str] | None, served: bool = False
) -> tuple[bool, str]:
    """`(offered, reason)`: whether the notebook tools go to the model, and why (see
    `notebook_access`)."""
    access = notebook_access(frontends=frontends, notebook=notebook, served=served)
    return access.tools, access.reason


@dataclass(frozen=True)
class SavedCell:
    """One cell of the notebook as saved on disk."""

    index: int
    cell_id: str | None
    cell_type: str
    source: str
    execution_count: int | None
    outputs: tuple[str, ...]
    """The output kinds (`stream`, `error`, `display_data`, ...), in order."""
    output_texts: tuple[str, ...] = ()
    """Each output as text, bounded: a stream's text, an error's name, value and last
    traceback lines, a result's `text/plain`; an image as a one-line placeholder."""


@dataclass(frozen=True)
class SavedNotebook:
    """The cells read from disk, or why there are none."""

    cells: tuple[SavedCell, ...]
    problem: str | None = None
    """Why nothing was read (missing, too large, not a notebook)."""

    def position(self, cell_id: str | None) -> tuple[int, int] | None:
        """The 0-based index of the cell `cell_id` and the cell count, if it is saved."""
        if not cell_id:
            return None
        for cell in self.cells:
            if cell.cell_id == cell_id:
                return cell.index, len(self.cells)
        return None

    def outline(self) -> str:
        """One line per cell: index, id, type, `In [n]`, first line, output kinds."""
        if not self.cells:
            return self.problem or "The saved notebook has no cells."
        lines = []
        for cell in self.cells:
            first = cell.source.strip().splitlines()[0][:100] if cell.source.strip() else ""
            count = f" In [{cell.execution_count}]" if cell.execution_count is not None else ""
            outputs = f" -> {', '.join(cell.outputs)}" if cell.outputs else ""
            lines.append(
                f"[{cell.index}] id={cell.cell_id or '-'} {cell.cell_type}{count}: {first}{outputs}"
            )
        return "\n".join(lines)

    def cell_text(self, cell_id: str) -> str | None:
        """One cell in full, its outputs bounded; None when no saved cell has `cell_id`."""
        cell = next((c for c in self.cells if c.cell_id == cell_id), None)
        if cell is None:
            return None
        count = f", In [{cell.execution_count}]" if cell.execution_count is not None else ""
        parts = [f"[{cell.index}] id={cell_id} {cell.cell_type}{count} (as saved on disk)"]
        parts.append(cell.source)
        parts.extend(
            f"--- {kind} ---\n{text}"
            for kind, text in zip(cell.outputs, cell.output_texts, strict=True)
        )
        return "\n".join(parts)


class NotebookFile:
    """The `.ipynb` at one path, read-only; read again only when it changed on disk."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._seen: tuple[tuple[int, int], SavedNotebook] | None = None

    def read(self) -> SavedNotebook:
        where = self.path
        try:
            stat = where.stat()
        except OSError as exc:
            return SavedNotebook((), f"{where.name} cannot be read ({exc.strerror or exc})")
        if stat.st_size > MAX_NOTEBOOK_BYTES:
            return SavedNotebook((), f"{where.name} is larger than {MAX_NOTEBOOK_BYTES:,} bytes")
        key = (stat.st_mtime_ns, stat.st_size)
        if self._seen is not None and self._seen[0] == key:
            return self._seen[1]
        try:
            data = json.loads(where.read_bytes())
        except (OSError, ValueError) as exc:
            return SavedNotebook((), f"{where.name} is not a readable notebook ({exc})")
        saved = _cells(data, where.name)
        self._seen = (key, saved)
        return saved


def _cells(data: Any, name: str) -> SavedNotebook:
    raw = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return SavedNotebook((), f"{name} has no list of cells")
    cells = []
    for index, cell in enumerate(raw):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        outputs = cell.get("outputs") or []
        count = cell.get("execution_count")
        cells.append(
            SavedCell(
                index=index,
                cell_id=cell.get("id") if isinstance(cell.get("id"), str) else None,
                cell_type=str(cell.get("cell_type", "code")),
                source="".join(source) if isinstance(source, list) else str(source),
                execution_count=count if isinstance(count, int) else None,
                outputs=tuple(
                    str(o.get("output_type", "?")) for o in outputs if isinstance(o, dict)
                ),
                output_texts=tuple(_output_text(o) for o in outputs if isinstance(o, dict)),
            )
        )
    return SavedNotebook(tuple(cells))


MAX_OUTPUT_CHARS = 2_000
"""One saved output's text is cut here (head and tail)."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _bounded(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    head, tail = MAX_OUTPUT_CHARS * 2 // 3, MAX_OUTPUT_CHARS // 3
    return f"{text[:head]}\n… [{len(text) - head - tail} characters left out] …\n{text[-tail:]}"


def _output_text(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _bounded(_joined(output.get("text")))
    if kind == "error":
        trace = [_ANSI.sub("", str(line)) for line in output.get("traceback") or []]
        head = f"{output.get('ename', '?')}: {output.get('evalue', '')}"
        return _bounded("\n".join([head, *trace[-3:]]))
    raw = output.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    shown = [_bounded(_joined(data["text/plain"]))] if "text/plain" in data else []
    for mime, value in data.items():
        if mime != "text/plain":
            shown.append(f"[{mime}, {len(_joined(value)):,} characters]")
    return "\n".join(shown)
