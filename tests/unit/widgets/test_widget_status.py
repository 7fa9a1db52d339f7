"""StatusWidget without a browser: widgets talk to ipywidgets' own dummy comm."""

from __future__ import annotations

import comm
import pytest
from ipywidgets import Widget

pytest.importorskip("ipywidgets")

import ipywidgets as w  # noqa: E402
from ipywidgets.widgets.tests.utils import (  # noqa: E402
    _widget_attrs,
    setup_test_comm,
    teardown_test_comm,
)

from logician_kernel.events.runtime_state import RuntimeState  # noqa: E402
from logician_kernel.jupyter.widgets import StatusWidget  # noqa: E402
from logician_kernel.types.run import RunBudgetLimits, RunOutcome  # noqa: E402


@pytest.fixture(autouse=True)
def _dummy_comm():
    setup_test_comm()
    yield
    # Close what the test made while the dummy comm is still there, not at interpreter exit.
    Widget.close_all()
    teardown_test_comm()


def tree(widget: w.Widget) -> list[int]:
    """Ids of every widget under `widget` (children, progress bars, labels), itself included."""
    ids = [id(widget)]
    for child in getattr(widget, "children", ()):
        ids += tree(child)
    return ids


def texts(widget: w.Widget) -> str:
    out = []
    for child in getattr(widget, "children", ()):
        out.append(texts(child))
    if isinstance(widget, (w.Label, w.HTML)):
        out.append(widget.value)
    return " | ".join(s for s in out if s)


RUNNING = RuntimeState(
    phase="turn",
    model="claude-x",
    streaming=True,
    turn=3,
    pending_tool_calls=("c1", "c2", "c3", "c4"),
    pending_count=5,
    tool_calls=7,
    retry_attempt=2,
    retries=3,
    last_retry_reason="overloaded",
    input_tokens=12_345,
    output_tokens=678,
)


def test_bars_only_for_set_limits() -> None:
    assert StatusWidget().bars == {}
    assert StatusWidget(RunBudgetLimits()).bars == {}
    limits = RunBudgetLimits(max_turns=10, max_cost_usd=2.0, max_wall_seconds=600)
    status = StatusWidget(limits)
    assert list(status.bars) == ["max_turns", "max_cost_usd", "max_wall_seconds"]
    assert isinstance(status.bars["max_turns"].progress, w.IntProgress)
    assert isinstance(status.bars["max_cost_usd"].progress, w.FloatProgress)
    rows = [bar.row for bar in status.bars.values()]
    assert all(row in status.children for row in rows)
    all_limits = RunBudgetLimits(
        max_turns=1,
        max_tool_calls=1,
        max_input_tokens=1,
        max_output_tokens=1,
        max_cost_usd=1,
        max_wall_seconds=1,
    )
    assert len(StatusWidget(all_limits).bars) == 6
    no_tools = StatusWidget(RunBudgetLimits(max_tool_calls=0))  # a zero limit is a limit
    no_tools.update(RuntimeState())
    assert no_tools.bars["max_tool_calls"].text.value == "0 / 0"


def test_update_shows_the_state() -> None:
    limits = RunBudgetLimits(max_turns=10, max_tool_calls=8, max_input_tokens=10_000)
    status = StatusWidget(limits)
    status.update(RUNNING, cost_usd=0.0123, elapsed_seconds=42.0)
    assert status.phase.value == "<b>turn 3</b>"
    assert status.model.value == "claude-x"
    assert status.streaming.value == "● streaming"
    assert status.pending.value == "5 pending: c1, c2, c3 +2"
    assert status.retries.value == "retry 2 (3 this run): overloaded"
    assert status.tokens.value == "tokens 12,345 in / 678 out"
    assert status.cost.value == "$0.0123"
    turns = status.bars["max_turns"]
    assert (turns.progress.value, turns.text.value, turns.progress.bar_style) == (3, "3 / 10", "")
    calls = status.bars["max_tool_calls"]
    assert (calls.text.value, calls.progress.bar_style) == ("7 / 8", "warning")
    tokens = status.bars["max_input_tokens"]
    assert tokens.progress.value == 10_000  # clamped to the bar
    assert (tokens.text.value, tokens.progress.bar_style) == ("12,345 / 10,000", "danger")
    assert status.outcome.value == ""  # running: no outcome yet

    status.update(RuntimeState(phase="compaction"), tool_calls=8)
    assert status.phase.value == "<b>compaction</b>"
    assert status.streaming.value == status.pending.value == status.retries.value == ""
    assert status.bars["max_tool_calls"].text.value == "8 / 8"
    assert status.cost.value == "$0.0123"  # an omitted total keeps the last one shown
    status.update(RuntimeState(phase="branch_summary"))
    assert status.phase.value == "<b>branch summary</b>"


def test_cost_and_wall_time_bars() -> None:
    status = StatusWidget(RunBudgetLimits(max_cost_usd=2.0, max_wall_seconds=600))
    status.update(RuntimeState())
    assert status.bars["max_cost_usd"].text.value == "— / $2.00"
    status.update(RuntimeState(), cost_usd=1.5, elapsed_seconds=125)
    assert status.bars["max_cost_usd"].progress.value == 1.5
    assert status.bars["max_cost_usd"].text.value == "$1.50 / $2.00"
    assert status.bars["max_wall_seconds"].text.value == "2m 05s / 10m 00s"


@pytest.mark.parametrize(
    ("status", "colour"),
    [
        ("completed", "--jp-success-color0"),
        ("failed", "--jp-error-color0"),
        ("budget_exhausted", "--jp-warn-color0"),
    ],
)
def test_outcome_is_coloured_by_status(status: str, colour: str) -> None:
    widget = StatusWidget()
    outcome = RunOutcome(status=status, detail="limit <max_turns> reached")  # type: ignore[arg-type]
    widget.update(RuntimeState(last_outcome=outcome))
    html = widget.outcome.value
    assert f"color: var({colour}," in html
    assert status.replace("_", " ") in html
    assert "limit &lt;max_turns&gt; reached" in html
    widget.update(RuntimeState(phase="turn", turn=1, last_outcome=outcome))
    assert widget.outcome.value == ""


def test_tasks() -> None:
    status = StatusWidget()
    status.update(RuntimeState(), tasks=[("Write <tests>", "done"), ("Ship it", "pending")])
    assert "Write &lt;tests&gt;" in status.tasks.value
    assert "(done)" in status.tasks.value and "Ship it" in status.tasks.value
    status.update(RuntimeState())  # tasks omitted: kept
    assert "Ship it" in status.tasks.value
    status.update(RuntimeState(), tasks=[(f"t{i}", "pending") for i in range(25)])
    assert "t19" in status.tasks.value and "t20" not in status.tasks.value
    assert "… 5 more" in status.tasks.value
    status.update(RuntimeState(), tasks=[])
    assert status.tasks.value == ""


def test_many_updates_do_not_grow_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = RunBudgetLimits(max_turns=100_000, max_output_tokens=10**9, max_wall_seconds=1e6)
    status = StatusWidget(limits)
    status.update(RUNNING, tasks=[("a", "pending")])
    before = tree(status)
    created: list[object] = []
    original = comm.create_comm
    monkeypatch.setattr(comm, "create_comm", lambda **kw: created.append(kw) or original(**kw))
    for i in range(10_000):
        state = RuntimeState(
            phase="turn", model="m", streaming=bool(i % 2), turn=i, output_tokens=i * 10
        )
        status.update(state, elapsed_seconds=i / 10, tasks=[("a", "pending")])
    assert tree(status) == before
    assert created == []  # no widget was created by an update
    assert status.phase.value == "<b>turn 9999</b>"
    assert "99,990 out" in texts(status)


def test_an_unchanged_update_sends_nothing() -> None:
    status = StatusWidget(RunBudgetLimits(max_turns=10, max_cost_usd=1.0))
    status.update(RUNNING, cost_usd=0.5, tasks=[("a", "pending")])
    widgets = [status, *(c for c in _walk(status))]
    sent = sum(len(x.comm.messages) for x in widgets)
    for _ in range(100):
        status.update(RUNNING, cost_usd=0.5, tasks=[("a", "pending")])
    assert sum(len(x.comm.messages) for x in widgets) == sent


def _walk(widget: w.Widget):
    for child in getattr(widget, "children", ()):
        yield child
        yield from _walk(child)


def test_text_plain_is_one_readable_line_of_the_state() -> None:
    """What `jupyter console`, nbconvert's text exports and logs show instead of the widget."""
    widget = StatusWidget(RunBudgetLimits(max_turns=50))
    assert widget.plain_text() == "Logician · starting"
    widget.update(RUNNING, cost_usd=0.0123, tasks=[("read", "done"), ("write", "in_progress")])
    line = widget.plain_text()
    assert line.startswith("Logician · turn 3 · claude-x · streaming · 12,345 in / 678 out tokens")
    assert "$0.0123" in line and "5 pending" in line and "tasks 1/2 done" in line
    assert "\n" not in line and "children=" not in line
    done = RuntimeState(
        model="claude-x",
        input_tokens=240,
        output_tokens=60,
        last_outcome=RunOutcome(status="completed", detail="the model answered"),
    )
    widget.update(done)
    assert widget.plain_text().endswith(
        "240 in / 60 out tokens · $0.0123 · tasks 1/2 done · completed: the model answered"
    )


def test_the_display_bundle_keeps_the_widget_view_and_gives_the_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The dummy comm disables widget display; put ipywidgets' own method back for this test.
    monkeypatch.setattr(Widget, "_repr_mimebundle_", _widget_attrs["_repr_mimebundle_"])
    widget = StatusWidget()
    bundle = widget._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.model_id
    assert bundle["text/plain"] == "Logician · starting"


def test_estimated_tokens_and_context_fraction_are_shown() -> None:
    import dataclasses

    status = StatusWidget()
    state = dataclasses.replace(
        RUNNING, usage_estimated=True, context_window=128_000, context_tokens=32_000
    )
    status.update(state)
    shown = texts(status)
    assert "tokens 12,345 in / 678 out (estimate: the server reports no usage)" in shown
    assert "context 25% of 128,000" in shown
    status.update(RUNNING)
    assert "estimate" not in texts(status) and "context" not in texts(status)


def test_thinking_is_collapsed_in_html_and_one_line_in_text() -> None:
    from logician_kernel.jupyter.display import thinking

    shown = thinking("First I look.\n" + "then " * 100 + "the end <b>")
    assert shown.text.startswith("▸ thinking (")
    assert "\n" not in shown.text and shown.text.endswith("the end <b>")
    assert len(shown.text) < 200
    assert shown.html.startswith("<details") and "open" not in shown.html.split(">")[0]
    assert "&lt;b&gt;" in shown.html and "First I look." in shown.html


def test_mcp_servers_are_summarised_in_the_widget_and_its_text_line() -> None:
    from logician_kernel.mcp.connection import ServerStatus
    from logician_kernel.mcp.report import summary

    statuses = [
        ServerStatus("files", "stdio", "ready", 4, False, None, 0.4),
        ServerStatus("hung", "stdio", "connecting", 2, True, None, 3.0),
        ServerStatus("bad", "http", "failed", 0, False, "ConnectError: refused", 0.1),
    ]
    line = summary(statuses)
    assert line == "MCP: files ready (4 tools) · hung connecting (2 tools, stale) · bad failed"
    widget = StatusWidget(RunBudgetLimits())
    widget.update(RuntimeState())
    widget.show_mcp(line)
    assert line in texts(widget)
    assert widget.plain_text().endswith(line)
    assert summary([]) == ""
