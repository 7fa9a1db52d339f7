"""The status widget: a `RuntimeState` (plus a few run totals) as stock controls.

Built once; `update()` only assigns widget values, so it stays cheap when called on every
harness event (traitlets sends nothing for a value that did not change). One progress bar per
configured `RunBudgetLimits` field; unset limits get no bar. Its display's `text/plain` is one
line of the same state, for readers without widgets (consoles, text exports, logs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as w
from IPython.display import display

from ...agent.ui import Phase, RuntimeState, context_fraction
from ...types.run import RunBudgetLimits, RunOutcomeStatus
from ..safe_html import Markup, inert, join, tag
from . import colours
from ._plain import PlainText

MAX_TASKS_SHOWN = 20
"""Task ledger rows shown; the rest are counted."""

MAX_PENDING_IDS = 3
"""Pending tool call ids named; the rest are counted."""

OUTCOME_COLOURS: dict[RunOutcomeStatus, str] = {
    "completed": colours.OK,
    "budget_exhausted": colours.WARN,
    "denied": colours.ACCENT,
    "cancelled": colours.MUTED,
    "failed": colours.ERROR,
}
"""The colour a run outcome is shown in, by status."""

_PHASES: dict[Phase, str] = {
    "idle": "idle",
    "turn": "turn",
    "compaction": "compaction",
    "branch_summary": "branch summary",
}

_TASK_MARKS = {"done": "✓", "completed": "✓", "in_progress": "▶", "running": "▶", "failed": "✗"}


@dataclass(frozen=True, slots=True)
class _Usage:
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    wall_seconds: float | None


@dataclass(frozen=True, slots=True)
class _Limit:
    field: str
    label: str
    used: Callable[[_Usage], float | None]
    fmt: Callable[[float], str]
    integer: bool


def _count(value: float) -> str:
    return f"{int(value):,}"


def _usd(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


LIMITS: tuple[_Limit, ...] = (
    _Limit("max_turns", "turns", lambda u: u.turns, _count, True),
    _Limit("max_tool_calls", "tool calls", lambda u: u.tool_calls, _count, True),
    _Limit("max_input_tokens", "input tokens", lambda u: u.input_tokens, _count, True),
    _Limit("max_output_tokens", "output tokens", lambda u: u.output_tokens, _count, True),
    _Limit("max_cost_usd", "cost", lambda u: u.cost_usd, _usd, False),
    _Limit("max_wall_seconds", "wall time", lambda u: u.wall_seconds, _duration, False),
)
"""The budget limits a bar can show, in display order."""


def _put(widget: w.Widget, name: str, value: object) -> None:
    """Assign a trait only if it changes: skips traitlets' validation on the hot path."""
    if getattr(widget, name) != value:
        setattr(widget, name, value)


class _Bar:
    """One budget limit: a progress bar and its "used / max" text."""

    def __init__(self, spec: _Limit, maximum: float) -> None:
        self.spec = spec
        self.maximum = maximum
        progress = w.IntProgress if spec.integer else w.FloatProgress
        self.progress = progress(
            value=0,
            min=0,
            max=maximum,
            description=spec.label,
            style={"description_width": "7em"},
            layout=w.Layout(width="18em"),
        )
        self.text = w.Label(f"— / {spec.fmt(maximum)}")
        self.row = w.HBox([self.progress, self.text])
        self.row.add_class(f"lk-budget-{spec.field}")

    def show(self, used: float | None) -> None:
        if used is None:
            _put(self.text, "value", f"— / {self.spec.fmt(self.maximum)}")
            return
        _put(self.progress, "value", min(max(used, 0), self.maximum))
        ratio = used / self.maximum if self.maximum else 1.0  # max_tool_calls may be 0
        style = "danger" if ratio >= 1 else "warning" if ratio >= 0.8 else ""
        _put(self.progress, "bar_style", style)
        _put(self.text, "value", f"{self.spec.fmt(used)} / {self.spec.fmt(self.maximum)}")


class StatusWidget(PlainText, w.VBox):
    """Phase, model, streaming, pending calls, retries, tokens, cost, budget bars, outcome, tasks.

    `update()` takes the folded `RuntimeState` and the run totals the state does not carry.
    An optional argument left `None` keeps what was shown before.
    """

    def __init__(self, limits: RunBudgetLimits | None = None) -> None:
        self.limits = limits or RunBudgetLimits()
        self.phase = w.HTML(tag("b", "idle"))
        self.model = w.Label("")
        self.streaming = w.Label("", tooltip="A model request is in flight")
        self.pending = w.Label("")
        self.retries = w.Label("")
        self.tokens = w.Label("tokens 0 in / 0 out")
        self.cost = w.Label("")
        self.bars: dict[str, _Bar] = {}
        for spec in LIMITS:
            maximum = getattr(self.limits, spec.field)
            if maximum is not None:
                self.bars[spec.field] = _Bar(spec, maximum)
        self.outcome = w.HTML("")
        self.tasks = w.HTML("")
        self.mcp = w.Label("", tooltip="MCP servers: connecting, ready or failed")
        self._mcp_text = ""
        self._usage = _Usage(0, 0, 0, 0, None, None)
        self._tasks: tuple[tuple[str, str], ...] = ()
        self._state: RuntimeState | None = None
        self._ran = False
        self._text_handle: Any = None
        super().__init__(
            [
                w.HBox([self.phase, self.model, self.streaming]),
                w.HBox([self.tokens, self.cost, self.pending, self.retries]),
                *(bar.row for bar in self.bars.values()),
                self.outcome,
                self.tasks,
                self.mcp,
            ]
        )
        self.add_class("lk-status")

    def show(self, *, final_text: bool = False) -> None:
        """Display the widget in the cell. `final_text`: when the run ends, send its output
        again so that its `text/plain` is the final line, for frontends that keep text and draw
        no widgets (nbclient, papermill); a widget manager would draw a second view."""
        handle = display(self, display_id=True)
        self._text_handle = handle if final_text else None

    def update(
        self,
        state: RuntimeState,
        *,
        cost_usd: float | None = None,
        elapsed_seconds: float | None = None,
        tool_calls: int | None = None,
        tasks: Sequence[tuple[str, str]] | None = None,
    ) -> None:
        """Show `state`; the keyword totals, when given, replace the ones shown."""
        previous = self._usage
        usage = _Usage(
            turns=state.turn,
            tool_calls=state.tool_calls if tool_calls is None else tool_calls,
            input_tokens=state.input_tokens,
            output_tokens=state.output_tokens,
            cost_usd=previous.cost_usd if cost_usd is None else cost_usd,
            wall_seconds=previous.wall_seconds if elapsed_seconds is None else elapsed_seconds,
        )
        self._usage = usage
        self._state = state

        label = _PHASES.get(state.phase, state.phase)
        if state.phase == "turn":
            label = f"turn {state.turn}"
        _put(self.phase, "value", tag("b", label))
        _put(self.model, "value", state.model)
        _put(self.streaming, "value", "● streaming" if state.streaming else "")
        _put(self.pending, "value", _pending_text(state))
        _put(self.retries, "value", _retry_text(state))
        _put(self.tokens, "value", tokens_text(state))
        _put(self.cost, "value", "" if usage.cost_usd is None else _usd(usage.cost_usd))
        for bar in self.bars.values():
            bar.show(bar.spec.used(usage))
        _put(self.outcome, "value", _outcome_html(state))
        if tasks is not None:
            rows = tuple(tasks)
            if rows != self._tasks:
                self._tasks = rows
                self.tasks.value = tasks_html(rows)
        self._ran = self._ran or state.running
        if self._ran and not state.running and self._text_handle is not None:
            self._text_handle.update(self)
            self._text_handle = None

    def show_mcp(self, text: str) -> None:
        """The MCP servers' one-line summary (`MCP: files ready (4 tools) · ...`)."""
        if text != self._mcp_text:
            self._mcp_text = text
            _put(self.mcp, "value", text)

    def plain_text(self) -> str:
        """One line: "Logician · turn 2 · loop-model · 240 in / 60 out tokens · completed"."""
        state = self._state
        if state is None:
            return "Logician · starting"
        label = f"turn {state.turn}" if state.phase == "turn" else _PHASES.get(state.phase, "")
        outcome = _outcome_text(state)
        if outcome:  # "completed" says more than "idle"
            label = ""
        usage = self._usage
        parts = [
            "Logician",
            label,
            state.model,
            "streaming" if state.streaming else "",
            f"{state.input_tokens:,} in / {state.output_tokens:,} out tokens",
            "" if usage.cost_usd is None else _usd(usage.cost_usd),
            _pending_text(state),
            _retry_text(state),
            _tasks_text(self._tasks),
            outcome,
            self._mcp_text,
        ]
        return " · ".join(p for p in parts if p)


def _outcome_text(state: RuntimeState) -> str:
    outcome = state.last_outcome
    if outcome is None or state.running:
        return ""
    status = outcome.status.replace("_", " ")
    return f"{status}: {outcome.detail}" if outcome.detail else status


def _tasks_text(tasks: Sequence[tuple[str, str]]) -> str:
    if not tasks:
        return ""
    done = sum(1 for _title, status in tasks if _TASK_MARKS.get(status) == "✓")
    return f"tasks {done}/{len(tasks)} done"


def tokens_text(state: RuntimeState) -> str:
    """Tokens of the run, marked when estimated, and how full the context window is."""
    text = f"tokens {state.input_tokens:,} in / {state.output_tokens:,} out"
    if state.usage_estimated:
        text += " (estimate: the server reports no usage)"
    fraction = context_fraction(state)
    if fraction is not None:
        text += f" · context {fraction:.0%} of {state.context_window:,}"
    return text


def _pending_text(state: RuntimeState) -> str:
    if not state.pending_count:
        return ""
    ids = state.pending_tool_calls[:MAX_PENDING_IDS]
    more = state.pending_count - len(ids)
    named = ", ".join(ids) + (f" +{more}" if more > 0 else "")
    return f"{state.pending_count} pending: {named}" if ids else f"{state.pending_count} pending"


def _retry_text(state: RuntimeState) -> str:
    if not state.retries:
        return ""
    text = f"retry {state.retry_attempt}" if state.retry_attempt else "retries"
    text += f" ({state.retries} this run)"
    return f"{text}: {state.last_retry_reason}" if state.last_retry_reason else text


def _outcome_html(state: RuntimeState) -> Markup | str:
    outcome = state.last_outcome
    if outcome is None or state.running:
        return ""
    colour = OUTCOME_COLOURS.get(outcome.status, "inherit")
    status = outcome.status.replace("_", " ")
    detail = f" — {outcome.detail}" if outcome.detail else ""
    return inert(
        tag(
            "span",
            tag("b", status),
            detail,
            style=f"color: {colour};",
            class_=f"lk-outcome lk-outcome-{outcome.status}",
        ),
        block="span",
    )


def tasks_html(tasks: Sequence[tuple[str, str]]) -> Markup | str:
    """A task ledger as an escaped, bounded HTML list of (title, status) rows."""
    if not tasks:
        return ""
    items = join(
        tag(
            "li",
            f"{_TASK_MARKS.get(status, '•')} {title} ",
            tag("span", f"({status})", style="opacity: 0.7;"),
        )
        for title, status in tasks[:MAX_TASKS_SHOWN]
    )
    more = len(tasks) - MAX_TASKS_SHOWN
    tail = tag("li", f"… {more} more") if more > 0 else ""
    return inert(tag("ul", items, tail, class_="lk-tasks", style="margin: 0; padding-left: 1.2em;"))
