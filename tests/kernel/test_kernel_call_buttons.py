"""*Rewind this call* in the agent cell's own output: once the cell has ended, each call that
changed files gets a control (the lab extension's MIME output, whose `text/plain` names
`%logician rewind --call ID` where nothing renders it); a call that changed nothing and a plain
cell get none. A `frames.rewind_call` that arrives while a cell runs is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply
from test_kernel_approvals import Sidebar, create_subshell
from test_kernel_comm import valid

from logician_kernel.jupyter.call_buttons import MIME

pytestmark = [pytest.mark.kernel]


def controls(messages: list[dict]) -> list[dict]:
    return [
        m["content"]["data"]
        for m in messages
        if m["msg_type"] == "display_data" and MIME in m["content"]["data"]
    ]


def test_an_agent_cell_shows_a_control_for_each_call_that_changed_files(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("b1", "bash", {"command": "echo from-bash > a.txt"}),
        tool_reply("w1", "write", {"path": "b.txt", "content": "from write\n"}),
        tool_reply("r1", "read", {"path": "data.csv"}),
        text_reply("Done."),
    )
    k = Kernel(workspace, agent_env)
    try:
        r = k.run("%%logician\nDo the three things.")
        assert r.status == "ok", r.text
        shown = controls(r.messages)
        assert [c[MIME]["call_id"] for c in shown] == ["b1", "w1"]  # the read changed nothing
        assert shown[0][MIME]["files"] == ["a.txt"] and shown[0][MIME]["frame"] == 1
        assert "`%logician rewind --call b1`" in shown[0]["text/plain"]  # where nothing renders
        assert r.text.index("Done.") < r.text.index("rewind --call b1")  # after the cell's end

        plain = k.run("open('c.txt', 'w').write('plain')")
        assert plain.status == "ok" and controls(plain.messages) == []

        assert k.run("%logician rewind --call b1").status == "ok"
        assert not (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    finally:
        k.shutdown()


def test_a_call_rewind_asked_while_a_cell_runs_is_refused(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("b1", "bash", {"command": "echo from-bash > a.txt"}),
        text_reply("Done."),
    )
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%%logician\nWrite a.txt.").status == "ok"
        sidebar = Sidebar(k, create_subshell(k))
        sidebar.wait_for("hello")
        # a cell that runs until the test lets it stop (an awaiting cell, as an agent run is:
        # the comm is answered on its subshell meanwhile)
        msg_id = k.send(
            "import asyncio, os\nwhile not os.path.exists('stop.flag'):\n"
            "    await asyncio.sleep(0.05)"
        )
        status = sidebar.wait_for("status")  # pushed when the cell's frame opened
        while not status.get("running_cell"):
            status = sidebar.wait_for("status")
        sidebar.send({"type": "frames.rewind_call", "call_id": "b1", "id": "busy"})
        refused = sidebar.wait_for("error")
        assert refused["re"] == "busy" and "a cell is running" in refused["error"], refused
        assert (workspace / "a.txt").exists()

        (workspace / "stop.flag").write_text("")
        ended = k.collect(msg_id, timeout=60)
        assert ended.status == "ok"
        pushed = [
            m["content"]["data"]
            for m in ended.messages
            if m["msg_type"] == "comm_msg" and m["content"]["data"].get("type") == "status"
        ]
        assert pushed and not pushed[-1]["running_cell"]  # the Lab turns its buttons on again
        sidebar.send({"type": "frames.rewind_call", "call_id": "b1", "id": "idle"})
        done = sidebar.wait_for("frames.rewind_call")
        assert done["re"] == "idle" and done["restored"] == ["a.txt"]
        assert not (workspace / "a.txt").exists()
        valid(sidebar.seen)
    finally:
        k.shutdown()
