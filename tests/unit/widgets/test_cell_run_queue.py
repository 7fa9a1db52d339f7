"""The cells the agent asks to run (`notebook_edit` with `run`): the queue's rules, and what
the kernel sends the frontend when the agent's cell ends (and says when it sends nothing)."""

from __future__ import annotations

import pytest
from test_notebook_bridge import bridge

from logician_kernel.jupyter import comm_messages as m
from logician_kernel.jupyter.cell_runs import MAX_RUNS, CellRunQueue, RunRefused


def test_a_queued_cell_runs_once_in_the_order_last_asked_with_the_source_the_agent_left() -> None:
    q = CellRunQueue()
    q.begin("agent")
    q.queue("a", "print(1)", "code", "c1")
    q.queue("b", "print(2)", "code", "c2")
    q.queue("a", "print(1)", "code", "c3")  # asked again: one run, placed last
    q.edited({"id": "b", "source": "print(2)"}, {"id": "b", "source": "print(22)"})
    runs = q.take("ok")
    assert [(r.cell_id, r.expect) for r in runs] == [("b", "print(22)"), ("a", "print(1)")]
    assert q.take("ok") == [] and q.take_notices() == []


@pytest.mark.parametrize(
    ("cell_id", "source", "cell_type", "said"),
    [
        ("agent", "print(1)", "code", "the agent's own cell"),
        ("x", "  %%logician\nmore", "code", "a %%logician cell"),
        ("x", "# Title", "markdown", "only code cells run"),
    ],
)
def test_the_agent_cannot_run_itself_an_agent_cell_or_markdown(
    cell_id: str, source: str, cell_type: str, said: str
) -> None:
    q = CellRunQueue()
    q.begin("agent")
    with pytest.raises(RunRefused, match=said):
        q.queue(cell_id, source, cell_type, None)
    assert q.pending() == []


def test_one_agent_cell_queues_at_most_max_runs() -> None:
    q = CellRunQueue()
    for i in range(MAX_RUNS):
        q.queue(f"c{i}", "pass", "code", None)
    with pytest.raises(RunRefused, match=f"at most {MAX_RUNS}"):
        q.queue("one-more", "pass", "code", None)
    q.queue("c0", "pass", "code", None)  # asking again for a queued cell is not one more


@pytest.mark.parametrize(
    ("outcome", "unavailable", "said"),
    [
        ("interrupted", "", "the agent's cell was interrupted"),
        ("error", "", "the agent's cell failed"),
        ("ok", "2 frontends hold this notebook", "will not run: 2 frontends hold this notebook"),
    ],
)
def test_runs_are_dropped_and_said_unless_the_agent_cell_ended_ok_with_a_frontend(
    outcome: str, unavailable: str, said: str
) -> None:
    q = CellRunQueue()
    q.queue("a", "print(1)", "code", None)
    assert q.take(outcome, unavailable=unavailable) == []
    (notice,) = q.take_notices()
    assert "(cell a)" in notice and said in notice


def test_a_cell_the_agent_deleted_is_not_run_and_said() -> None:
    q = CellRunQueue()
    q.queue("a", "print(1)", "code", None)
    q.edited({"id": "a", "source": "print(1)"}, None)
    assert q.take("ok") == []
    assert "the agent deleted it" in q.take_notices()[0]


def test_the_bridge_sends_one_run_request_after_the_agent_cell_and_says_what_did_not_run() -> None:
    b, comms = bridge()
    b.attach("c1", "nb.ipynb")
    b.begin_cell("agent")
    b.queue_run("new", "print(6*7)", "code", "call-1")
    b.queue_run("old", "x = 2", "code", "call-2")
    assert comms.sent == []  # nothing is sent while the agent's cell runs
    assert b.end_cell("ok") == 2
    comm_id, kind, payload = comms.sent[-1]
    assert (comm_id, kind, payload["op"]) == ("c1", "notebook.request", "run")
    assert payload["args"]["cells"] == [
        {"id": "new", "expect": "print(6*7)"},
        {"id": "old", "expect": "x = 2"},
    ]
    reply = m.FRONTEND.validate_python(
        {
            "v": 1,
            "type": "notebook.reply",
            "request": payload["request"],
            "applied": ["new"],
            "conflicts": ["old"],
        }
    )
    assert b.received(reply)
    (notice,) = b.workspace.notices  # type: ignore[attr-defined]
    assert "1 cell(s) run" in notice and "edited by you since the agent asked: old" in notice


def test_an_interrupted_agent_cell_sends_nothing_and_the_next_cell_starts_clean() -> None:
    b, comms = bridge()
    b.attach("c1", "nb.ipynb")
    b.begin_cell("agent")
    b.queue_run("new", "print(6*7)", "code", None)
    assert b.end_cell("interrupted") == 0 and comms.sent == []
    assert "interrupted" in b.workspace.notices[-1]  # type: ignore[attr-defined]
    b.begin_cell("next")
    assert b.end_cell("ok") == 0 and comms.sent == []


def test_with_two_frontends_the_runs_are_not_sent_and_the_notice_says_why() -> None:
    b, comms = bridge()
    b.attach("tab-1", "nb.ipynb")
    b.attach("tab-2", "nb.ipynb")
    b.queue_run("new", "print(6*7)", "code", None)
    assert b.end_cell("ok") == 0 and comms.sent == []
    assert "2 frontends hold this notebook" in b.workspace.notices[-1]  # type: ignore[attr-defined]
