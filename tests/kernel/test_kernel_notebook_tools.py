"""The notebook tools through a real kernel and the `logician` comm, with a test client that
speaks the extension's side (`tests/notebook_frontend.py`): the agent reads and edits the live
notebook, and a rewind takes its cell edits back with the files and the variables."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer
from notebook_frontend import FakeNotebook, NotebookClient
from test_kernel_agent import messages_sent, text_reply, tool_reply

import logician_kernel.jupyter as jupyter_pkg

pytestmark = pytest.mark.kernel

SCHEMA = json.loads((Path(jupyter_pkg.__file__).parent / "comm_schema.json").read_text())
KERNEL_SIDE = jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA["kernel"]})
TRACEBACK = [
    "\x1b[0;31mKeyError\x1b[0m Traceback (most recent call last)",
    "Cell In[3], line 1\n----> 1 df['sales']",
    "\x1b[0;31mKeyError\x1b[0m: 'sales'",
]


def notebook() -> FakeNotebook:
    return FakeNotebook(
        [
            {"id": "intro", "cell_type": "markdown", "source": "# Sales"},
            {
                "id": "load",
                "cell_type": "code",
                "source": "df['sales']",
                "execution_count": 3,
                "outputs": [
                    {
                        "output_type": "error",
                        "ename": "KeyError",
                        "evalue": "'sales'",
                        "traceback": TRACEBACK,
                    },
                ],
            },
            {"id": "old", "cell_type": "code", "source": "print('old')"},
            {"id": "ask", "cell_type": "code", "source": "%%logician\nfix it"},
        ]
    )


def ledger(workspace: Path) -> list[dict]:
    text = (workspace / ".logician/threads/test-thread.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def applied_restores(workspace: Path, count: int, timeout: float = 30) -> list[dict]:
    """The `cell_restore` entries the frontend's answers settled, once there are `count` (the
    answer is handled by the kernel after the cell that sent the request ends)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [
            e for e in ledger(workspace) if e["kind"] == "cell_restore" and e["state"] == "applied"
        ]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def tool_results(server: LoopbackServer) -> list[str]:
    return [json.dumps(m) for m in messages_sent(server) if m["role"] == "tool"]


EDITS = (
    tool_reply(
        "e1", "notebook_edit", {"mode": "replace", "cell_id": "load", "source": "df['revenue']"}
    ),
    tool_reply(
        "e2",
        "notebook_edit",
        {"mode": "insert", "after_id": "load", "cell_type": "markdown", "source": "## Plot"},
    ),
    tool_reply("e3", "notebook_edit", {"mode": "insert", "index": 0, "source": "import os"}),
    tool_reply("e4", "notebook_edit", {"mode": "delete", "cell_id": "old"}),
)


def test_the_agent_edits_cells_and_rewind_and_undo_take_them_back_and_forth(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("r1", "notebook_read", {}),
        tool_reply("r2", "notebook_read", {"cell_id": "load"}),
        *EDITS,
        tool_reply("w1", "write", {"path": "notes.md", "content": "fixed\n"}),
        tool_reply("p1", "python", {"code": "fixed = True"}),
        text_reply("Fixed the KeyError."),
    )
    nb = notebook()
    original = nb.shape()
    k = Kernel(workspace, agent_env)
    try:
        client = NotebookClient(k, nb)
        assert client.attach()["pending"] == 0
        status, text = client.run("%%logician\nfix the error above", "ask")
        assert status == "ok", text
        assert "Fixed the KeyError." in text
        # the page's answers to the edits never made the kernel look idle mid-cell
        during = client.statuses[client.statuses.index(("execute_request", "busy")) :]
        assert during == [("execute_request", "busy"), ("execute_request", "idle")], during
        results = tool_results(server)
        # the outline and the cell in full reached the model, the traceback without colours
        assert "id=load" in results[0] and "In[3]" in results[0] and "outputs: error" in results[0]
        assert "KeyError: 'sales'" in results[1] and "\\u001b" not in results[1]
        assert "Inserted markdown cell" in results[3] and "Deleted cell id=old" in results[5]
        shape = nb.shape()
        ids = [i for i, _, _ in shape]
        assert [s for _, _, s in shape] == [
            "import os",
            "# Sales",
            "df['revenue']",
            "## Plot",
            "%%logician\nfix it",
        ]
        assert ids[1:3] == ["intro", "load"] and "old" not in ids
        # every edit is in the ledger with the frame of the agent's cell, before and after
        edits = [e for e in ledger(workspace) if e["kind"] == "cell_edit"]
        assert [e["mode"] for e in edits] == ["replace", "insert", "insert", "delete"]
        assert {e["frame"] for e in edits} == {edits[0]["frame"]} and edits[0]["frame"]
        assert edits[0]["before"]["source"] == "df['sales']"
        assert edits[0]["after"]["source"] == "df['revenue']"
        assert edits[3]["before"] == {
            "id": "old",
            "cell_type": "code",
            "source": "print('old')",
            "index": 4,
        }
        assert edits[0]["call_id"] == "e1"

        # the rewind dialog's preview names the cell edits it would take back, newest first
        client.send({"type": "frames.preview", "cell_id": "ask", "id": "p"})
        preview = client.pump(until="frames.preview")
        assert [(c["id"], c["action"]) for c in preview["cell_edits"]] == [
            ("old", "re-insert"),
            (ids[0], "remove"),
            (ids[3], "remove"),
            ("load", "restore"),
        ]
        status, text = client.run("%logician rewind --last", "rw")
        assert status == "ok", text
        assert nb.shape() == original  # sources, order, types and ids, exactly
        assert not (workspace / "notes.md").exists()
        status, text = client.run("print('fixed' in dir())", "chk")
        assert "False" in text
        applied_restores(workspace, 1)
        restores = [e for e in ledger(workspace) if e["kind"] == "cell_restore"]
        assert [(r["direction"], r["state"]) for r in restores] == [
            ("rewind", "pending"),
            ("rewind", "applied"),
        ]

        status, text = client.run("%logician undo", "un")
        assert status == "ok", text
        assert nb.shape() == shape  # the agent's edits are back, the inserted ids too
        assert (workspace / "notes.md").read_text() == "fixed\n"
        for data in client.seen:
            errors = list(KERNEL_SIDE.iter_errors(data))
            assert not errors, f"{data.get('type')}: {errors[0].message}"
    finally:
        k.shutdown()


def test_a_cell_the_user_edited_after_the_agent_is_a_conflict_left_alone(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(EDITS[0], EDITS[1], text_reply("Done."))
    nb = notebook()
    k = Kernel(workspace, agent_env)
    try:
        client = NotebookClient(k, nb)
        client.attach()
        assert client.run("%%logician\nfix it", "ask")[0] == "ok"
        nb.cells[1]["source"] = "df['revenue'].sum()"  # the user's own edit, after the agent's
        status, text = client.run("%logician rewind --last", "rw")
        assert status == "ok", text
        assert nb.cells[1]["source"] == "df['revenue'].sum()"  # left alone
        assert "## Plot" not in [c["source"] for c in nb.cells]  # the insert was taken back
        (done,) = applied_restores(workspace, 1)
        assert done["conflicts"] == ["load"]
        notices = client.run("%logician notices", "n")[1]
        assert "conflicts" in notices and "load" in notices
    finally:
        k.shutdown()


def test_a_rewind_with_the_frontend_gone_waits_for_it_to_reconnect(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(EDITS[1], text_reply("Inserted."), EDITS[2], text_reply("Again."))
    nb = notebook()
    original = nb.shape()
    k = Kernel(workspace, agent_env)
    try:
        client = NotebookClient(k, nb)
        client.attach()
        assert client.run("%%logician\nadd a heading", "ask")[0] == "ok"
        assert len(nb.cells) == 5
        client.close()
        status, text = client.run("%logician rewind --last", "rw")
        assert status == "ok", text
        assert len(nb.cells) == 5  # nobody to apply it to
        assert "skip-cells" in client.run("%logician notices", "n")[1]
        again = NotebookClient(k, nb, comm_id="nb-2")
        assert again.attach()["pending"] == 1
        again.pump(until="notebook.received")  # the reconnected frontend applied it
        assert nb.shape() == original

        # the same again, given up with --skip-cells: the notebook keeps the cell
        assert again.run("%%logician\nadd an import", "ask2")[0] == "ok"
        again.close()
        assert again.run("%logician rewind --last", "rw2")[0] == "ok"
        status, text = again.run("%logician rewind --skip-cells", "skip")
        assert status == "ok" and "gave up the cell part of 1" in text
        third = NotebookClient(k, nb, comm_id="nb-3")
        assert third.attach()["pending"] == 0
        assert nb.cells[0]["source"] == "import os"
    finally:
        k.shutdown()


def test_bad_input_is_a_tool_error_and_no_frontend_offers_no_notebook_tools(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("e1", "notebook_edit", {"mode": "delete", "cell_id": "gone"}),
        tool_reply("e2", "notebook_edit", {"mode": "replace", "cell_id": "load"}),
        text_reply("Sorry."),
        text_reply("No notebook here."),
    )
    nb = notebook()
    k = Kernel(workspace, agent_env)
    try:
        client = NotebookClient(k, nb)
        client.attach()
        assert client.run("%%logician\ndelete a cell", "ask")[0] == "ok"
        results = tool_results(server)
        assert "no cell has the id 'gone'" in results[0]
        assert "replace needs the cell's new source" in results[1]
        assert nb.shape() == notebook().shape()
        offered = {t["function"]["name"] for t in server.requests[-1].body["tools"]}
        assert {"notebook_read", "notebook_edit"} <= offered
        client.close()
        assert client.run("%%logician\nanything", "ask2")[0] == "ok"
        offered = {t["function"]["name"] for t in server.requests[-1].body["tools"]}
        assert not offered & {"notebook_read", "notebook_edit"}
        assert not [e for e in ledger(workspace) if e["kind"] == "cell_edit"]
    finally:
        k.shutdown()


def test_a_notebook_closed_mid_call_and_two_frontends_are_clear_tool_errors(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        EDITS[3],
        text_reply("Closed."),
        EDITS[3],
        text_reply("Two of them."),
    )
    nb = notebook()
    k = Kernel(workspace, agent_env)
    try:
        client = NotebookClient(k, nb)
        client.attach()

        def close_instead(request: dict) -> None:
            client.close()  # the user closed the notebook while the agent asked

        client.answer = close_instead
        assert client.run("%%logician\ndelete old", "ask")[0] == "ok"
        assert "the notebook was closed before it answered" in tool_results(server)[0]
        assert nb.shape() == notebook().shape()

        first = NotebookClient(k, nb, comm_id="nb-2")
        first.attach()
        NotebookClient(k, nb, comm_id="nb-3").attach()
        assert first.run("%%logician\ndelete old", "ask2")[0] == "ok"
        assert "2 frontends hold this notebook" in tool_results(server)[-1]
        assert nb.shape() == notebook().shape()
        assert not [e for e in ledger(workspace) if e["kind"] == "cell_edit"]
    finally:
        k.shutdown()


@pytest.mark.parametrize("rewound", ["before-restart", "after-restart"])
def test_a_pending_cell_part_survives_a_kernel_restart(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, rewound: str
) -> None:
    """Rewound before the restart, the new kernel reads the pending cell part from the ledger.
    Rewound after it, nothing of the agent is loaded and no frontend holds the comm: the rewind
    runs without loading them (frame_light.py), and the cell edits it takes back wait, said,
    for the frontend that attaches next."""
    server.script(EDITS[1], text_reply("Inserted."))
    nb = notebook()
    original = nb.shape()
    k = Kernel(workspace, agent_env)
    try:
        client = NotebookClient(k, nb)
        client.attach()
        assert client.run("%%logician\nadd a heading", "ask")[0] == "ok"
        assert len(nb.cells) == 5
        client.close()
        if rewound == "before-restart":
            assert client.run("%logician rewind --last", "rw")[0] == "ok"
        k.restart()
        if rewound == "after-restart":
            status, text = client.run("%logician rewind --last", "rw")
            assert status == "ok", text
            status, text = client.run(
                "import sys; print('agent:', 'logician_kernel.agent.session' in sys.modules)",
                "look",
            )
            assert "agent: False" in text, text
            assert len(nb.cells) == 5  # nobody to apply it to
            assert "skip-cells" in client.run("%logician notices", "n")[1]
        again = NotebookClient(k, nb, comm_id="nb-after-restart")
        assert again.attach()["pending"] == 1  # read from the ledger
        again.pump(until="notebook.received")
        assert nb.shape() == original
        assert [r["state"] for r in applied_restores(workspace, 1)] == ["applied"]
    finally:
        k.shutdown()


def test_the_cells_the_agent_runs_are_asked_for_after_its_cell_and_a_user_edit_wins(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply(
            "n1",
            "notebook_edit",
            {"mode": "insert", "after_id": "ask", "source": "print(6*7)", "run": True},
        ),
        tool_reply(
            "n2",
            "notebook_edit",
            {"mode": "replace", "cell_id": "old", "source": "print('new')", "run": True},
        ),
        tool_reply("n3", "notebook_edit", {"mode": "delete", "cell_id": "intro", "run": True}),
        text_reply("Added and changed two cells; they run after this one."),
    )
    nb = notebook()
    k = Kernel(workspace, agent_env)
    try:
        client = NotebookClient(k, nb)
        client.attach()
        answer = nb.answer

        def user_types_in_old(request: dict) -> dict:
            reply = answer(request)
            if request["args"].get("cell_id") == "old":  # the user edits it right after
                nb.cells[nb._find("old")]["source"] = "print('mine')"  # type: ignore[index]
            return reply

        client.answer = user_types_in_old
        status, text = client.run("%%logician\nadd and change cells", "ask")
        assert status == "ok", text
        results = tool_results(server)
        assert "queued to run as its own cell after your reply ends" in results[0]
        assert "run goes with insert or replace, not delete" in results[2]
        # one `run` request, the last thing the agent's cell sent, naming both cells in order
        run = client.requests[-1]
        new = next(c[0] for c in nb.shape() if c[2] == "print(6*7)")
        assert run["op"] == "run" and [c["id"] for c in run["args"]["cells"]] == [new, "old"]
        assert nb.ran == [new]  # the cell the user changed since the agent did is not run
        notices = k.run("%logician notices").text
        assert "1 cell(s) run; not run, edited by you since the agent asked: old" in notices
    finally:
        k.shutdown()
