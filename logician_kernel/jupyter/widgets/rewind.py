"""The rewind control: pick a checkpoint frame, see what rewinding to it would do, rewind.

A thin view over a `RewindSource`: stock `ipywidgets` controls composed in a `VBox`. The frame
list is bounded to the `MAX_FRAMES_SHOWN` newest frames (newest first), so `refresh()` stays
cheap with thousands of frames: it rebuilds only the list's options, keeping the selection when
the frame still exists. The kernel calls `refresh()` after every cell and after rewinds made by
magics. Every string from the source is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, get_args

import ipywidgets as w
from traitlets import Int, Unicode

from ...types.rewind_scope import RewindMode
from ..safe_html import Markup, inert, join, tag
from . import colours
from ._plain import PlainText
from .rewind_rows import FrameRow, RewindPreview

REWIND_MODES: tuple[RewindMode, ...] = get_args(RewindMode)
"""Every mode, in the order the control's buttons show them."""

MAX_FRAMES_SHOWN = 200
"""Frames listed, newest first; older frames are counted, not listed."""

MAX_PREVIEW_ITEMS = 40
"""File and conflict lines shown in the preview; the rest are counted."""

MAX_TEXT_FRAMES = 10
"""Frames the plain-text rendering lists (terminals, text exports); the rest are counted."""

MAX_LABEL_CHARS = 80
"""Characters shown of a frame's label in the list; longer labels end in "…"."""

_ERROR = colours.ERROR
_OK = colours.OK


class RewindSource(Protocol):
    """Where the control reads frames from and sends rewinds to (the kernel's checkpoints)."""

    def rows(self) -> list[FrameRow]:
        """Every frame, in any order."""
        ...

    def preview(
        self,
        frame: int,
        *,
        include_external: bool = False,
        force: bool = False,
        keep_uncertain: bool = False,
    ) -> RewindPreview:
        """What rewinding to `frame` would do (with the same options as `rewind`)."""
        ...

    def rewind(
        self,
        frame: int,
        mode: RewindMode,
        *,
        include_external: bool = False,
        force: bool = False,
        keep_uncertain: bool = False,
    ) -> str:
        """Rewind to `frame`; a one-line result. Raises ValueError (with a message) on failure.
        `include_external` also reverts changes made outside this kernel; `force` overwrites
        conflicts; `keep_uncertain` leaves changes whose writer is uncertain alone."""
        ...

    def undo(self) -> str:
        """Undo the most recent rewind; a one-line result. Raises ValueError on failure (nothing
        to undo, already undone)."""
        ...

    def resume(self) -> str:
        """Complete a rewind a crash interrupted; a one-line result. Raises ValueError."""
        ...

    def interrupted(self) -> str:
        """What an interrupted rewind left to do, in one line; empty when none was."""
        ...


def row_text(row: FrameRow) -> str:
    """One frame as one plain line of the list."""
    label = " ".join(row.label.split())
    if len(label) > MAX_LABEL_CHARS:
        label = label[:MAX_LABEL_CHARS] + "…"
    parts = [f"#{row.frame}", row.cell, row.time, label, row.outcome, row.files, row.tokens]
    return " · ".join(p for p in parts if p)


def dropped_text(count: int) -> str:
    """E.g. "1 conversation message dropped", "3 conversation messages dropped"."""
    noun = "message" if count == 1 else "messages"
    return f"{count} conversation {noun} dropped"


def preview_html(preview: RewindPreview) -> Markup:
    """`preview` as escaped, bounded HTML: files to restore, conflicts in red, messages dropped."""
    if preview.error:
        return inert(tag("div", preview.error, style=f"color: {_ERROR};"))
    parts: list[Markup] = []
    if preview.files:
        parts.append(join([tag("b", "Files to restore"), _list_html(preview.files, "")]))
    else:
        parts.append(tag("i", "No files to restore"))
    if preview.variables:
        parts.append(
            join(
                [tag("b", "Variables"), _list_html(preview.variables, "", cls="lk-rewind-variable")]
            )
        )
    if preview.conflicts:
        style = f"color: {_ERROR}; font-weight: bold;"
        heading = 'Conflicts (changed since; left alone unless "Overwrite conflicts too")'
        parts.append(
            join(
                [
                    tag("b", heading, style=f"color: {_ERROR};"),
                    _list_html(preview.conflicts, style, cls="lk-rewind-conflict"),
                ]
            )
        )
    parts.append(tag("div", dropped_text(preview.messages_dropped)))
    return inert(*parts, class_="lk-rewind-preview")


def _list_html(items: list[str], style: str, cls: str = "") -> Markup:
    shown = items[:MAX_PREVIEW_ITEMS]
    body = join(tag("li", item, class_=cls or None, style=style or None) for item in shown)
    more = len(items) - len(shown)
    tail = tag("li", f"… {more} more", style="opacity: 0.7; font-style: italic;") if more else ""
    return tag("ul", body, tail, style="margin: 2px 0;")


def _result(text: str, colour: str) -> Markup:
    return inert(tag("span", text, style=f"color: {colour};"), block="span")


class RewindControl(PlainText, w.VBox):
    """A bounded, newest-first frame list, a preview of the selected frame, the rewinds, "Undo
    rewind", and "Resume interrupted rewind" while a crash left one unfinished.

    Built once; `refresh()` re-reads the source's rows and rebuilds only the list's options.
    """

    selected_frame = Int(
        None, allow_none=True, help="The frame selected in the list; None when none is."
    )
    status = Unicode("", help="The last rewind's result message, or its error message.")
    status_kind = Unicode("", help="How `status` reads: 'ok', 'error', or '' before any rewind.")

    def __init__(self, source: RewindSource):
        self.source = source
        self._refreshing = False
        self.title = w.HTML(tag("b", "Rewind"))
        self.frames = w.Select(options=[], rows=10, layout=w.Layout(width="100%"))
        self.more = w.HTML("")
        self.preview = w.HTML(tag("i", "Select a frame to preview the rewind."))
        self.buttons: dict[RewindMode, w.Button] = {
            "both": w.Button(
                description="Rewind files, variables and conversation",
                button_style="warning",
                tooltip="Restore the files and variables; drop the conversation after this frame",
                layout=w.Layout(width="auto"),
            ),
            "files": w.Button(
                description="Files only",
                tooltip="Restore the files; keep the conversation",
                layout=w.Layout(width="auto"),
            ),
            "conversation": w.Button(
                description="Conversation only",
                tooltip="Drop the conversation after this frame; keep the files",
                layout=w.Layout(width="auto"),
            ),
            "variables": w.Button(
                description="Variables only",
                tooltip="Bring the notebook's variables back; keep files and conversation",
                layout=w.Layout(width="auto"),
            ),
        }
        for mode, button in self.buttons.items():
            button.on_click(self._clicked(mode))
        self.undo_button = w.Button(
            description="Undo rewind",
            tooltip="Take back the most recent rewind: files, variables and conversation as they were",
            layout=w.Layout(width="auto"),
        )
        self.undo_button.on_click(lambda _b: self._act("Undo", self.source.undo))
        self.resume_button = w.Button(
            description="Resume interrupted rewind",
            button_style="danger",
            tooltip="Complete the rewind the kernel was killed during",
            layout=w.Layout(width="auto", display="none"),
        )
        self.resume_button.on_click(lambda _b: self._act("Resume", self.source.resume))
        self.include_external = w.Checkbox(
            value=False,
            description="Also revert changes made outside this kernel",
            tooltip="Your saves in the Lab and other programs' writes are left alone unless this is on",
            indent=False,
            layout=w.Layout(width="auto"),
        )
        self.force = w.Checkbox(
            value=False,
            description="Overwrite conflicts too",
            tooltip="Paths changed since the frame (by you or another program) are left alone unless this is on",
            indent=False,
            layout=w.Layout(width="auto"),
        )
        self.keep_uncertain = w.Checkbox(
            value=False,
            description="Leave files whose writer is uncertain alone",
            tooltip="Files changed while a subprocess ran, that another program may have written",
            indent=False,
            layout=w.Layout(width="auto"),
        )
        for box in (self.include_external, self.force, self.keep_uncertain):
            box.observe(lambda _change: self._show_selection(self.selected_frame), names="value")
        self.result = w.HTML("")
        super().__init__(
            [
                self.title,
                self.frames,
                self.more,
                self.preview,
                w.HBox([self.include_external, self.force, self.keep_uncertain]),
                w.HBox(list(self.buttons.values())),
                w.HBox([self.undo_button, self.resume_button]),
                self.result,
            ],
            layout=w.Layout(border=f"1px solid {colours.BORDER}", padding="6px"),
        )
        self.add_class("lk-rewind-control")
        self.frames.observe(self._selection_changed, names="value")
        self.refresh()

    def refresh(self) -> None:
        """Re-read the rows; keep the selection if its frame is still listed, else clear it."""
        rows = self.source.rows()
        rows = sorted(rows, key=lambda r: r.frame, reverse=True)
        shown = rows[:MAX_FRAMES_SHOWN]
        keep = self.selected_frame
        self._refreshing = True
        try:
            self.frames.options = [(row_text(r), r.frame) for r in shown]
            listed = any(r.frame == keep for r in shown)
            self.frames.value = keep if listed else None
        finally:
            self._refreshing = False
        hidden = len(rows) - len(shown)
        self.more.value = (
            tag("small", f"… {hidden} older frames not listed", style="opacity: 0.7;")
            if hidden
            else ""
        )
        self._show_selection(self.frames.value)
        interrupted = self.source.interrupted()
        self.resume_button.layout.display = "" if interrupted else "none"
        if interrupted and not self.status:
            self.result.value = _result(interrupted, _ERROR)

    def plain_text(self) -> str:
        """The newest frames as lines, and the magics that do what the buttons do."""
        options = list(self.frames.options)
        if not options:
            return "Rewind: no frames yet; every cell that does work becomes one."
        lines = [f"Rewind: {len(options)} frame(s), newest first"]
        lines += [f"  {label}" for label, _frame in options[:MAX_TEXT_FRAMES]]
        hidden = len(options) - MAX_TEXT_FRAMES
        if hidden > 0:
            lines.append(f"  … {hidden} more")
        if self.status:
            lines.append(("" if self.status_kind == "ok" else "Rewind failed: ") + self.status)
        lines.append(
            "Without widgets: %logician rewind N [--dry-run] [--files-only | "
            "--conversation-only] [--include-external] [--force] [--keep-uncertain]; "
            "%logician undo; "
            "%logician rewind --resume"
        )
        return "\n".join(lines)

    def _selection_changed(self, change: dict) -> None:
        if not self._refreshing:
            self._show_selection(change["new"])

    def _show_selection(self, frame: int | None) -> None:
        self.selected_frame = frame
        for button in self.buttons.values():
            button.disabled = frame is None
        if frame is None:
            self.preview.value = tag("i", "Select a frame to preview the rewind.")
            return
        try:
            preview = self.source.preview(
                frame,
                include_external=self.include_external.value,
                force=self.force.value,
                keep_uncertain=self.keep_uncertain.value,
            )
        except ValueError as exc:
            preview = RewindPreview(error=str(exc))
        self.preview.value = preview_html(preview)

    def _clicked(self, mode: RewindMode):
        def clicked(_button: w.Button) -> None:
            self.rewind(mode)

        return clicked

    def rewind(self, mode: RewindMode) -> None:
        """What a button does: rewind the selected frame in `mode`, show the result, refresh."""
        frame = self.selected_frame
        if frame is None:
            return
        try:
            message = self.source.rewind(
                frame,
                mode,
                include_external=self.include_external.value,
                force=self.force.value,
                keep_uncertain=self.keep_uncertain.value,
            )
            kind = "ok"
        except ValueError as exc:
            message, kind = str(exc) or "rewind failed", "error"
        self.status, self.status_kind = message, kind
        colour = _OK if kind == "ok" else _ERROR
        prefix = "" if kind == "ok" else "Rewind failed: "
        self.result.value = _result(prefix + message, colour)
        self.refresh()

    def _act(self, what: str, action: Callable[[], str]) -> None:
        """What the undo and resume buttons do: act, show the result, refresh."""
        try:
            message, kind = action(), "ok"
        except ValueError as exc:
            message, kind = str(exc) or f"{what.lower()} failed", "error"
        self.status, self.status_kind = message, kind
        colour = _OK if kind == "ok" else _ERROR
        prefix = "" if kind == "ok" else f"{what} failed: "
        self.result.value = _result(prefix + message, colour)
        self.refresh()
