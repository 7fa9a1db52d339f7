"""The view that renders a run's events into the cell (coalesced Markdown, one line per tool).

Used by `agent.py` on the kernel's main thread; nothing here decides policy (the run itself is
`agent.run.AgentRun`, in the Jupyter-free core).
"""

from __future__ import annotations

import time
from typing import Any

from IPython.display import Markdown, display

from ..events.events import (
    AssistantTextDelta,
    HarnessEvent,
    RetryScheduled,
    RunEnded,
    ToolFinished,
    ToolStarted,
)
from ..loop.todo import TodoCapability


def tasks_of(todo: TodoCapability | None) -> list[tuple[str, str]] | None:
    ledger = todo.snapshot() if todo is not None else None
    if ledger is None or not ledger.items:
        return None
    return [(item.title, item.status) for item in ledger.items]


def show_markdown(text: str, handle: Any) -> Any:
    """Show (first call, handle None) or update the cell's Markdown output; returns the handle."""
    if handle is None:
        return display(Markdown(text), display_id=True)
    handle.update(Markdown(text))
    return handle


def print_text(text: str, handle: Any) -> Any:
    """The terminal's `show` (no rich display there): print what is new since the last call;
    the handle is how much of `text` is already printed."""
    shown = handle or 0
    print(text[shown:], end="", flush=True)
    return len(text)


class RunView:
    """The cell's view of a run: Markdown for the answer, one line per tool, an outcome line.

    Text deltas only append to a string; the Markdown output is re-rendered at most `hz` times
    a second, so the cost per token is flat however long the answer or the conversation.
    """

    def __init__(self, *, hz: int, show: Any = show_markdown) -> None:
        self.interval = 1.0 / hz
        self.text = ""
        self._display: Any = None
        self._show = show
        self.dirty = False
        self.last = 0.0
        self.renders = 0

    def wait(self) -> float:
        return self.interval if self.dirty else 0.25

    def flush(self, force: bool = False) -> None:
        if not self.dirty or (not force and time.monotonic() - self.last < self.interval):
            return
        self._display = self._show(self.text, self._display)
        self.renders += 1
        self.dirty = False
        self.last = time.monotonic()

    def _end_text(self) -> None:
        self.flush(force=True)
        if self._show is print_text and self._display:
            print(flush=True)  # the streamed text's line ends before a tool or outcome line
        self.text, self._display = "", None

    def handle(self, event: HarnessEvent) -> None:
        # isinstance, not `event.kind ==`: it narrows the union for the type checker.
        if isinstance(event, AssistantTextDelta):
            self.text += event.text
            self.dirty = True
            self.flush()
        elif isinstance(event, ToolStarted):
            self._end_text()
            print(f"▸ {event.description}", flush=True)
        elif isinstance(event, ToolFinished):
            mark = "✗" if event.is_error else "✓"
            print(f"  {mark} {event.result_display}", flush=True)
        elif isinstance(event, RetryScheduled):
            self.flush(force=True)
            print(f"  … retry {event.attempt}/{event.max_retries} in {event.delay:.1f} s: "
                  f"{event.reason}", flush=True)  # fmt: skip
        elif isinstance(event, RunEnded):
            self._end_text()
            outcome = event.outcome
            line = f"── {outcome.status}"
            if outcome.detail:
                line += f": {outcome.detail}"
            usage = getattr(event, "usage", None)
            if usage is not None:
                line += f" · {usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
            print(line, flush=True)
