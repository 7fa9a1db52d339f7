"""The running agent cell's moving parts: the worker thread that hosts the harness, and the
view that renders its events into the cell (coalesced Markdown, one line per tool).

Used by `agent.py` on the kernel's main thread; nothing here decides policy.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import Any

from IPython.display import display

from ..events.events import HarnessEvent
from .answer import markdown_answer
from .display import thinking
from .widgets import StatusWidget


def tasks_of(todo: Any) -> list[tuple[str, str]] | None:
    ledger = todo.snapshot() if todo is not None else None
    if ledger is None or not ledger.items:
        return None
    return [(item.title, item.status) for item in ledger.items]


class AgentRun:
    """One run in flight: the harness on a worker thread's own event loop, a queue back."""

    def __init__(self, *, requests: queue.Queue[Any], view: RunView) -> None:
        self.requests = requests
        self.view = view
        self.done = False
        self.interrupted = False
        self.outcome: Any = None
        self.controller: Any = None
        self.todo: Any = None
        self.status: StatusWidget | None = None
        self.seen = -1
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None

    def start(self, events: Any) -> None:
        async def drive() -> None:
            async for event in events:
                self.requests.put(event)

        self._task = self._loop.create_task(drive())
        self._thread = threading.Thread(target=self._work, name="logician-agent", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            self._loop.run_until_complete(self._task)  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self.requests.put(exc)
        finally:
            # Finish the streams' async generators here, not in a garbage collector later.
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    def cancel(self) -> None:
        """A kernel interrupt: cancel the run's task; the run still ends with `run_ended`."""
        self.interrupted = True
        if self._task is not None:
            try:
                self._loop.call_soon_threadsafe(self._task.cancel)
            except RuntimeError:  # the run had just ended and its loop closed
                pass

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=10)


def _show_thinking(text: str, handle: Any) -> Any:
    """Show or update the collapsed thinking part of the cell; returns the handle."""
    bundle = thinking(text).bundle()
    if handle is None:
        return display(bundle, raw=True, display_id=True)
    handle.update(bundle, raw=True)
    return handle


class RunView:
    """The cell's view of a run: Markdown for the answer, one line per tool, an outcome line.

    Text deltas only append to a string; the Markdown output is re-rendered at most `hz` times
    a second, so the cost per token is flat however long the answer or the conversation.
    """

    def __init__(
        self, *, hz: int, show: Any = markdown_answer, show_thinking: Any = _show_thinking
    ) -> None:
        self.interval = 1.0 / hz
        self.text = ""
        self.thinking = ""
        """Reasoning of the current reply so far: shown collapsed, never kept."""
        self._display: Any = None
        self._thinking_display: Any = None
        self._thinking_dirty = False
        self._show = show
        self._show_thinking = show_thinking
        self.dirty = False
        self.last = 0.0
        self.renders = 0

    def wait(self) -> float:
        return self.interval if self.dirty else 0.25

    def flush(self, force: bool = False) -> None:
        if not self.dirty or (not force and time.monotonic() - self.last < self.interval):
            return
        if self._thinking_dirty:
            self._thinking_display = self._show_thinking(self.thinking, self._thinking_display)
            self._thinking_dirty = False
        if self.text:
            self._display = self._show(self.text, self._display)
        self.renders += 1
        self.dirty = False
        self.last = time.monotonic()

    def end_text(self) -> None:
        """The answer's current block is over: a tool line, a question or the outcome follows."""
        self.flush(force=True)
        end = getattr(self._show, "end", None)  # `answer.StdoutAnswer` ends its line
        if end is not None and self._display is not None:
            end(self._display)
        self.text, self._display = "", None
        self.thinking, self._thinking_display = "", None

    def handle(self, event: HarnessEvent) -> None:
        kind = event.kind
        if kind == "reasoning_delta":
            self.thinking += event.text
            self.dirty = self._thinking_dirty = True
            self.flush()
        elif kind == "text_delta":
            self.text += event.text
            self.dirty = True
            self.flush()
        elif kind == "tool_started":
            self.end_text()
            print(f"▸ {event.description}", flush=True)
        elif kind == "tool_finished":
            mark = "✗" if event.is_error else "✓"
            print(f"  {mark} {event.result_display}", flush=True)
        elif kind == "retry_scheduled":
            self.flush(force=True)
            print(f"  … retry {event.attempt}/{event.max_retries} in {event.delay:.1f} s: "
                  f"{event.reason}", flush=True)  # fmt: skip
        elif kind == "run_ended":
            self.end_text()
            outcome = event.outcome
            line = f"── {outcome.status}"
            if outcome.detail:
                line += f": {outcome.detail}"
            usage = getattr(event, "usage", None)
            if usage is not None:
                line += f" · {usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
            print(line, flush=True)
