"""The view that renders a run's events into the cell (coalesced Markdown, one line per tool).

Used by `agent.py` on the kernel's main thread; nothing here decides policy (the run itself is
`agent.run.AgentRun`, in the Jupyter-free core).
"""

from __future__ import annotations

import time
from typing import Any

from IPython.display import display

from ..agent.ui import (
    HarnessEvent,
    HookReported,
    ModelStreamed,
    RunEnded,
    TodoCapability,
    ToolFinished,
    ToolStarted,
)
from ..types.messages import ReasoningDelta, RetryAttempt, StreamEvent, TextDelta
from .answer import markdown_answer
from .display import thinking


def tasks_of(todo: TodoCapability | None) -> list[tuple[str, str]] | None:
    ledger = todo.snapshot() if todo is not None else None
    if ledger is None or not ledger.items:
        return None
    return [(item.title, item.status) for item in ledger.items]


_FRAGMENTS = frozenset({"text_delta", "reasoning_delta", "tool_call_arguments_delta", "usage"})


def is_fragment(event: HarnessEvent) -> bool:
    """Whether `event` is a fragment of the reply in flight (text, reasoning, arguments,
    usage so far): views follow these at the coalesced rhythm of the text, not one by one."""
    return isinstance(event, ModelStreamed) and event.event.kind in _FRAGMENTS


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
    a second, so the cost per token is flat however long the answer or the conversation. The
    answer is rendered to HTML in the kernel (`markdown_html`), which costs time in proportion
    to its length: the next re-render also waits `RENDER_SHARE` times as long as the last one
    took, so a long answer spends at most about a quarter of the kernel's time rendering while
    it streams; the last render at the end of the block is always made.
    """

    RENDER_SHARE = 3
    """Wait this many times the last render's duration before the next (besides `1/hz`)."""

    def __init__(
        self,
        *,
        hz: int,
        show: Any = markdown_answer,
        show_thinking: Any = _show_thinking,
        context_tokens: int = 0,
        context_capped: bool = False,
    ) -> None:
        self.interval = 1.0 / hz
        self.context_tokens = context_tokens
        """The notebook context the prompt carried (estimated tokens), said in the usage line."""
        self.context_capped = context_capped
        """Whether that block was capped for a small context window (said too)."""
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
        self.cost = 0.0
        """How long the last flush took (seconds): the next one waits `RENDER_SHARE` times it."""
        self.renders = 0

    def wait(self) -> float:
        return self.interval if self.dirty else 0.25

    def flush(self, force: bool = False) -> None:
        gap = max(self.interval, self.RENDER_SHARE * self.cost)
        if not self.dirty or (not force and time.monotonic() - self.last < gap):
            return
        started = time.monotonic()
        if self._thinking_dirty:
            self._thinking_display = self._show_thinking(self.thinking, self._thinking_display)
            self._thinking_dirty = False
        if self.text:
            self._display = self._show(self.text, self._display)
        self.renders += 1
        self.dirty = False
        self.last = time.monotonic()
        self.cost = self.last - started

    def end_text(self) -> None:
        """The answer's current block is over: a tool line, a question or the outcome follows."""
        self.flush(force=True)
        end = getattr(self._show, "end", None)  # `answer.StdoutAnswer` ends its line
        if end is not None and self._display is not None:
            end(self._display)
        self.text, self._display = "", None
        self.thinking, self._thinking_display = "", None

    def handle(self, event: HarnessEvent) -> None:
        # isinstance, not `event.kind ==`: it narrows the union for the type checker.
        if isinstance(event, ModelStreamed):
            self._streamed(event.event)
        elif isinstance(event, ToolStarted):
            self.end_text()
            print(f"▸ {event.description}", flush=True)
        elif isinstance(event, ToolFinished):
            mark = "✗" if event.is_error else "✓"
            print(f"  {mark} {event.result_display}", flush=True)
        elif isinstance(event, HookReported):
            self.end_text()
            print(
                f"  ⚠ {event.hook} hook `{event.command}` {event.status.replace('_', ' ')}: "
                f"{event.detail}",
                flush=True,
            )
        elif isinstance(event, RunEnded):
            self.end_text()
            outcome = event.outcome
            line = f"── {outcome.status}"
            if outcome.detail:
                line += f": {outcome.detail}"
            usage = getattr(event, "usage", None)
            if usage is not None:
                line += f" · {usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
                if getattr(event, "usage_estimated", False):
                    line += " (estimated: the reply was cut off before the server reported it)"
            if self.context_tokens:
                line += f" · notebook context ~{self.context_tokens:,} tokens"
                if self.context_capped:
                    line += " (capped: small context window)"
            print(line, flush=True)

    def _streamed(self, event: StreamEvent) -> None:
        """A provider event of the reply in flight (tool call and usage fragments are shown
        by the tool lines and the outcome line, from the complete reply)."""
        if isinstance(event, ReasoningDelta):
            self.thinking += event.text
            self.dirty = self._thinking_dirty = True
            self.flush()
        elif isinstance(event, TextDelta):
            self.text += event.text
            self.dirty = True
            self.flush()
        elif isinstance(event, RetryAttempt):
            self.flush(force=True)
            print(
                f"  … retry {event.attempt}/{event.max_retries} in {event.delay:.1f} s: "
                f"{event.reason}",
                flush=True,
            )
