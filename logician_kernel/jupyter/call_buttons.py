"""*Rewind this call* in an agent cell's own output: one control per tool call that changed
files, shown once the cell has ended and its frame has closed (only then has attribution
credited a `bash` or `python` call with what its processes wrote).

A plain cell makes no tool call, so it gets none. Which control, by frontend:

- The lab extension is connected (JupyterLab, Notebook 7): an output of the MIME type `MIME`
  (the call's id, frame, tool, words and files), which the extension renders as a button; a
  stored notebook keeps that data and the `text/plain` hint, never widget state.
- Widgets render but no extension listens (classic Notebook, VS Code): an ipywidgets
  `CallRewindButton`, disabled by the kernel while any cell runs.
- Neither (nbconvert, `jupyter console`, papermill): the `text/plain` hint naming
  `%logician rewind --call ID`.

Every path rewinds through `rewind_source.LedgerRewindSource.rewind_call` (the recorded,
undoable plan of `%logician rewind --call`), which refuses while a cell runs.

Must never: show a control for a call that changed nothing, or rewind while a cell runs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import ipywidgets as w
from IPython.display import display

from ..agent import AgentError
from ..workspace import CallRow, RewindError
from .answer import widgets_render
from .safe_html import inert, tag
from .widgets._plain import PlainText

if TYPE_CHECKING:
    from .rewind_source import LedgerRewindSource

logger = logging.getLogger(__name__)

MIME = "application/vnd.logician.call-rewind+json"
"""The in-cell control's data, rendered by the lab extension (`call_output.ts`)."""

BUSY = "A cell is running: rewind this call when it has finished (a rewind now would race it)"
"""The tooltip of a disabled control while a cell runs (the lab extension says the same)."""

MAX_KEPT = 200
"""Widget controls the kernel keeps to disable while cells run (the newest)."""


def hint(row: CallRow) -> str:
    """The control as plain text: what the call changed and the command that puts it back."""
    files = ", ".join(row.files[:5]) + (
        f" and {len(row.files) - 5} more" if len(row.files) > 5 else ""
    )
    return (
        f"↺ {row.tool} call {row.call_id} changed {files}: "
        f"`%logician rewind --call {row.call_id}` puts it back"
    )


def confirm_lines(row: CallRow) -> list[str]:
    """What a rewind of the call will restore: the sidebar dialog's words (`call_words.ts`)."""
    return [
        f"Rewind the {row.tool} call {row.call_id}?",
        f"Puts back the {len(row.files)} file(s) this call changed; the rest of the cell stays.",
        *(f"  {path}" for path in row.files),
        "Files changed again since are left alone and listed. `%logician undo` takes it back.",
    ]


def bundle(row: CallRow, frame: int) -> dict[str, Any]:
    """The output the lab extension renders as a button (`text/plain` everywhere else)."""
    data = {
        "call_id": row.call_id,
        "frame": frame,
        "tool": row.tool,
        "words": row.words,
        "files": row.files,
    }
    return {MIME: data, "text/plain": hint(row)}


class CallRewindButton(PlainText, w.VBox):
    """One call's control where widgets render: its line, a button (first click previews,
    the second rewinds) and the result in place."""

    def __init__(self, row: CallRow, frames: LedgerRewindSource) -> None:
        self.row = row
        self._frames = frames
        self.rewound = row.rewound
        self._asked = False
        self.button = w.Button(
            description="Rewound" if row.rewound else "Rewind this call",
            button_style="" if row.rewound else "warning",
            disabled=row.rewound,
            tooltip=self._tooltip(),
        )
        self.button.on_click(lambda _b: self.click())
        label = w.HTML(inert(tag("code", f"{row.tool}: {row.words}"), block="span"))
        self.result = w.HTML("")
        super().__init__([w.HBox([label, self.button]), self.result])

    def plain_text(self) -> str:
        return hint(self.row)

    def _tooltip(self) -> str:
        if self.rewound:
            return f"Call {self.row.call_id} was rewound; `%logician undo` takes that back"
        return f"Restore {', '.join(self.row.files[:5])} as before call {self.row.call_id}"

    def busy(self, running: bool) -> None:
        """Disabled while a cell runs (the kernel calls this at every cell's start and end)."""
        if self.rewound:
            return
        self.button.disabled = running
        self.button.tooltip = BUSY if running else self._tooltip()

    def click(self) -> None:
        """First click: what will be restored. Second: the rewind, reported in place."""
        if self.rewound:
            return
        if not self._asked:
            self._asked = True
            self.result.value = inert(tag("pre", "\n".join(confirm_lines(self.row))))
            self.button.description = "Confirm: rewind this call"
            return
        self.button.disabled = True
        try:
            done = self._frames.rewind_call(self.row.call_id, False)
        except (AgentError, RewindError, ValueError) as exc:
            already = "already rewound" in str(exc)
            self.result.value = inert(tag("pre", str(exc)))
            if already:
                self._mark_rewound()
            else:
                self.button.disabled = False
            return
        left = "".join(f"\n  left alone: {p['path']} ({p['detail']})" for p in done["left"])
        self.result.value = inert(tag("pre", done["headline"] + left))
        self._mark_rewound()

    def _mark_rewound(self) -> None:
        self.rewound = True
        self.button.description = "Rewound"
        self.button.button_style = ""
        self.button.disabled = True
        self.button.tooltip = self._tooltip()


class CallButtons:
    """The in-cell controls of one kernel: shown after each agent cell, and (the widget ones)
    disabled while any cell runs."""

    def __init__(self, kernel: Any, frames: LedgerRewindSource) -> None:
        self._kernel = kernel
        self._frames = frames
        self._widgets: list[CallRewindButton] = []

    def cell_started(self) -> None:
        self._busy(True)

    def cell_ended(self, frame: int | None) -> None:
        """After the frame closed: the controls of this cell's calls that changed files."""
        self._busy(False)
        if frame is None:
            return
        try:
            if not self._has_call_changes(frame):
                return
            for row in self._frames.workspace.calls(frame):
                if row.undoable:
                    self._show(row, frame)
        except Exception:  # noqa: BLE001 - a control that cannot be shown must not fail the cell
            logger.exception("showing the Rewind this call controls of frame %s failed", frame)

    def _has_call_changes(self, frame: int) -> bool:
        """Whether a tool call changed a file in `frame`: the folded frame says it cheaply, so a
        plain cell never pays for listing the calls (which reads the whole ledger)."""
        checkpoints = self._frames.workspace.checkpoints_if_on
        view = checkpoints.frames().get(frame) if checkpoints is not None else None
        return view is not None and any(c.call_id and c.by == "tool" for c in view.changes)

    def _show(self, row: CallRow, frame: int) -> None:
        if self._frames.comms.listening or not widgets_render(self._kernel):
            display(bundle(row, frame), raw=True)
            return
        control = CallRewindButton(row, self._frames)
        self._widgets = [*self._widgets[-(MAX_KEPT - 1) :], control]
        display(control)

    def _busy(self, running: bool) -> None:
        for control in list(self._widgets):
            try:
                control.busy(running)
            except Exception:  # noqa: BLE001 - a closed widget must not break a cell
                self._widgets.remove(control)
