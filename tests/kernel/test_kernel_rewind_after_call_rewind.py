"""A whole-frame rewind after `rewind --call`: the paths the call rewind already put back are
in the state the frame rewind wants (or were changed by that recorded rewind), so they are not
conflicts ("changed since") - the frame rewind restores the rest and reports no conflict."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply
from test_kernel_approvals import Sidebar
from test_kernel_comm import valid

pytestmark = [pytest.mark.kernel]


def test_rewinding_the_frame_after_one_of_its_calls_was_rewound_has_no_conflicts(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("w1", "write", {"path": "a.txt", "content": "from write\n"}),
        tool_reply("b1", "bash", {"command": "echo from-bash > b.txt; echo more >> data.csv"}),
        tool_reply("p1", "python", {"code": "open('c.txt', 'w').write('from python')"}),
        text_reply("Done."),
    )
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%%logician\nDo the three things.").status == "ok"
        r = k.run("%logician rewind --call b1")
        assert r.status == "ok", r.text
        assert not (workspace / "b.txt").exists()
        dry = k.run("%logician rewind --last --dry-run").text
        assert "conflict" not in dry.lower() and "changed since" not in dry, dry
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert "changed since" not in r.text, r.text
        assert not (workspace / "a.txt").exists() and not (workspace / "c.txt").exists()
        assert not (workspace / "b.txt").exists()
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
    finally:
        k.shutdown()


def test_the_lab_lists_a_frames_calls_and_rewinds_one_over_the_comm(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    """`frames.calls` and `frames.rewind_call` (the *Rewind this call* button): the same
    recorded, undoable call rewind as `%logician rewind --call`."""
    server.script(
        tool_reply("w1", "write", {"path": "a.txt", "content": "from write\n"}),
        tool_reply("b1", "bash", {"command": "echo from-bash > b.txt; echo more >> data.csv"}),
        tool_reply("r1", "bash", {"command": "ls"}),
        text_reply("Done."),
    )
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%%logician\nDo the three things.").status == "ok"
        sidebar = Sidebar(k)
        sidebar.wait_for("hello")
        sidebar.send({"type": "frames.calls", "frame": 1, "id": "c"})
        listed = sidebar.wait_for("frames.calls")
        valid([listed])
        calls = {c["id"]: c for c in listed["calls"]}
        assert list(calls) == ["w1", "b1", "r1"]
        assert calls["b1"]["tool"] == "bash" and "echo from-bash" in calls["b1"]["words"]
        assert calls["b1"]["files"] == ["b.txt", "data.csv"] and calls["b1"]["undoable"]
        assert calls["w1"]["files"] == ["a.txt"] and calls["w1"]["undoable"]
        assert not calls["r1"]["undoable"] and "no file" in calls["r1"]["why_not"]

        sidebar.send({"type": "frames.rewind_call", "call_id": "b1", "id": "r"})
        done = sidebar.wait_for("frames.rewind_call")
        valid([done])
        assert done["frame"] == 1 and sorted(done["restored"]) == ["b.txt", "data.csv"]
        assert "Rewound call b1" in done["headline"] and done["left"] == []
        assert not (workspace / "b.txt").exists()
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        assert (workspace / "a.txt").exists()
        assert "frames.changed" in [d.get("type") for d in sidebar.seen]  # the Lab refetches

        sidebar.send({"type": "frames.calls", "frame": 1, "id": "c2"})
        again = {c["id"]: c for c in sidebar.wait_for("frames.calls")["calls"]}
        assert again["b1"]["rewound"] and not again["b1"]["undoable"]
        sidebar.send({"type": "frames.rewind_call", "call_id": "b1", "id": "r2"})
        refused = sidebar.wait_for("error")
        assert "already rewound" in refused["error"], refused

        sidebar.send({"type": "frames.undo", "id": "u"})
        assert sidebar.wait_for("frames.undo")["ok"] is True
        assert (workspace / "b.txt").read_text() == "from-bash\n"
    finally:
        k.shutdown()
