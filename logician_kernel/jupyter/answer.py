"""How a `%%logician` cell's streamed answer reaches the frontend, and which way to choose.

Two outputs behind one call shape, `show(text, handle) -> handle` with an optional
`end(handle)` when the answer's block is over (a tool call or the outcome line follows):

- `markdown_answer`: the answer's Markdown rendered to inert HTML in the kernel
  (`markdown_html`; never `text/markdown`, whose raw HTML a trusting frontend would run), one
  output re-rendered in place (`update_display_data`) as the text grows. Notebooks (JupyterLab,
  nbclient, papermill) keep only the last version, and its `text/plain` is the answer itself,
  so text exports and logs read it.
- `StdoutAnswer`: the text as `stream` messages, each piece once, for terminal frontends.
  `jupyter_console` 6.6 prints a `display_data`'s `text/plain` and ignores
  `update_display_data`, so a re-rendered Markdown answer shows there as its first
  coalesced fragment only (and a client that printed every update would repeat the
  growing answer once per update).

Must never: decide anything about the run; it only shows text.
"""

from __future__ import annotations

import sys
from typing import Any

from IPython.display import display

from . import display as render

WIDGET_CONTROL_TARGET = "jupyter.widget.control"
"""The comm ipywidgets' frontends (JupyterLab, Notebook 7) open when they connect."""


def markdown_answer(text: str, handle: Any) -> Any:
    """Show (first call, handle None) or update the cell's Markdown answer; returns the handle."""
    if handle is None:
        return display(render.answer_bundle(text), raw=True, display_id=True)
    handle.update(render.answer_bundle(text), raw=True)
    return handle


class StdoutAnswer:
    """The answer as plain stdout text: each call writes only what is new since the last."""

    def __call__(self, text: str, handle: str | None) -> str:
        shown = handle or ""
        if text.startswith(shown) and len(text) > len(shown):
            sys.stdout.write(text[len(shown) :])
            sys.stdout.flush()
        return text

    def end(self, handle: str | None) -> None:
        """The block is over: what follows (a tool line, the outcome) starts on its own line."""
        if handle and not handle.endswith("\n"):
            sys.stdout.write("\n")
            sys.stdout.flush()


def widgets_render(kernel: Any) -> bool:
    """Whether a connected frontend has shown it renders widgets (its widget manager's comm)."""
    manager = getattr(kernel, "comm_manager", None)
    comms = getattr(manager, "comms", {}) if manager is not None else {}
    return any(getattr(c, "target_name", "") == WIDGET_CONTROL_TARGET for c in comms.values())


def is_terminal(kernel: Any, *, can_read_stdin: bool, sidebar: bool) -> bool:
    """A frontend that can read stdin yet renders neither widgets nor the lab extension's
    comm: a terminal (`jupyter console`). nbclient and papermill never allow stdin, so
    executed notebooks are not terminals and keep their Markdown answers."""
    return can_read_stdin and not sidebar and not widgets_render(kernel)


def answer_output(setting: str, *, terminal: bool) -> Any:
    """The `show` for `RunView`, by `ui.answer`: `stream` or `markdown`, or `auto`: stream
    in a terminal, Markdown everywhere else."""
    stream = setting == "stream" or (setting == "auto" and terminal)
    if stream:
        return StdoutAnswer()
    # The renderer (markdown-it) loads now, as the run starts, not in the first render: its
    # load would count as that render's cost and hold the next re-render back three times as
    # long (`RunView.RENDER_SHARE`), so at load an answer showed only at its end.
    from . import markdown_html  # noqa: F401

    return markdown_answer
