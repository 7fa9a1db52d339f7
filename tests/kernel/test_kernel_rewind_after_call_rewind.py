"""A whole-frame rewind after `rewind --call`: the paths the call rewind already put back are
in the state the frame rewind wants (or were changed by that recorded rewind), so they are not
conflicts ("changed since") - the frame rewind restores the rest and reports no conflict."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply

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
