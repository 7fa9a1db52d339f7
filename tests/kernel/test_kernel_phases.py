"""The Lab sidebar sees what the agent is doing outside a run: `compaction` while
`%logician compact` summarises, `branch_summary` while `%logician branch merge` does, then
`idle` - pushed over the `logician` comm while the cell still runs, not on the next request,
and shown by the status widget of the last run."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer
from test_kernel_agent import text_reply
from test_kernel_approvals import Sidebar, create_subshell

pytestmark = pytest.mark.kernel


def _phases(k: Kernel, sidebar: Sidebar, code: str) -> tuple[list[str], list[str]]:
    """Run a cell; the phases of the `status` messages the sidebar got while it ran, and the
    phase labels the last run's status widget was updated to meanwhile."""
    r = k.run(code)
    assert r.status == "ok", r.text
    sent = [m["content"] for m in r.messages if m["msg_type"] == "comm_msg"]
    pushed = [
        c["data"]["phase"]
        for c in sent
        if c["comm_id"] == sidebar.comm_id and c["data"]["type"] == "status"
    ]
    labels = [
        value
        for c in sent
        if c["data"].get("method") == "update"
        and str(value := c["data"]["state"].get("value", "")).startswith("<b>")
    ]
    return pushed, labels


def test_the_sidebar_sees_compaction_and_branch_summary_then_idle(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        text_reply("One."),
        text_reply("Two."),
        text_reply("Earlier: the user counted to two."),  # the compaction summary
        text_reply("Three."),
        text_reply("The branch counted to three."),  # the branch summary
    )
    env = {**agent_env, "LOGICIAN_COMPACTION__KEEP_RECENT_TURNS": "1"}
    k = Kernel(workspace, env)
    try:
        sidebar = Sidebar(k, create_subshell(k))  # as the lab extension opens it
        assert sidebar.wait_for("hello")["status"]["phase"] == "idle"
        k.run("%logician count one")
        k.run("%logician count two")

        pushed, labels = _phases(k, sidebar, "%logician compact")
        assert pushed == ["compaction", "idle"]
        assert labels == ["<b>compaction</b>", "<b>idle</b>"]

        k.run("%logician count three")
        k.run("%logician rewind --last --conversation-only")
        branch_id = k.run("%logician branches").text.splitlines()[1].split()[0]
        pushed, labels = _phases(k, sidebar, f"%logician branch merge {branch_id}")
        assert pushed == ["branch_summary", "idle"]
        assert labels == ["<b>branch summary</b>", "<b>idle</b>"]
    finally:
        k.shutdown()
