"""Approvals, audit and budgets through a real kernel: a decision must reach a running cell."""

from __future__ import annotations

import json
import time
from pathlib import Path
from queue import Empty

import pytest
import tomllib
from kernel_harness import Kernel
from loopback import LoopbackServer
from test_kernel_agent import messages_sent, text_reply, tool_reply

pytestmark = pytest.mark.kernel


@pytest.fixture
def env(model_env: dict[str, str]) -> dict[str, str]:
    return model_env


class Sidebar:
    """A frontend that speaks the `logician` comm (as the lab extension does)."""

    def __init__(self, kernel: Kernel, subshell_id: str | None = None) -> None:
        self.k = kernel
        self.subshell_id = subshell_id
        self.comm_id = "sidebar-1"
        self._send("comm_open", {"comm_id": self.comm_id, "target_name": "logician", "data": {}})
        self.seen: list[dict] = []

    def _send(self, msg_type: str, content: dict) -> None:
        msg = self.k.kc.session.msg(msg_type, content)
        if self.subshell_id:
            msg["header"]["subshell_id"] = self.subshell_id
        self.k.kc.shell_channel.send(msg)

    def send(self, data: dict) -> None:
        self._send("comm_msg", {"comm_id": self.comm_id, "data": {"v": 1, **data}})

    def wait_for(self, kind: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = self.k.kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == self.comm_id:
                data = m["content"]["data"]
                self.seen.append(data)
                if data.get("type") == kind:
                    return data
        raise AssertionError(f"no {kind!r} message; saw {[d.get('type') for d in self.seen]}")


def audit_lines(workspace: Path) -> list[dict]:
    path = workspace / ".logician" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def ledger_kinds(workspace: Path) -> list[str]:
    text = (workspace / ".logician/threads/test-thread.jsonl").read_text()
    return [json.loads(line)["kind"] for line in text.splitlines()]


def create_subshell(k: Kernel) -> str:
    k.kc.control_channel.send(k.kc.session.msg("create_subshell_request", {}))
    return k.kc.control_channel.get_msg(timeout=10)["content"]["subshell_id"]


@pytest.mark.parametrize("with_subshell", [False, True], ids=["no-subshell", "subshell"])
def test_a_comm_decision_reaches_the_running_cell(
    workspace: Path, env: dict[str, str], server: LoopbackServer, with_subshell: bool
) -> None:
    server.script(
        tool_reply("w1", "write", {"path": "approved.txt", "content": "yes\n"}),
        text_reply("Written."),
    )
    k = Kernel(workspace, env)
    try:
        sidebar = Sidebar(k, create_subshell(k) if with_subshell else None)
        sidebar.wait_for("hello")
        msg_id = k.send("%%logician\nWrite approved.txt")  # the cell is now running
        request = sidebar.wait_for("approval.requested")
        assert request["tool"] == "write" and "approved.txt" in request["description"]
        assert "+yes" in request["preview"]
        assert not (workspace / "approved.txt").exists()  # waiting for the decision
        sidebar.send(
            {"type": "approval.decide", "request_id": request["request_id"], "choice": "allow_once"}
        )
        r = k.collect(msg_id, timeout=30)
        assert r.status == "ok", r.text
        assert (workspace / "approved.txt").read_text() == "yes\n"
        assert "Written." in r.text
        kinds = ledger_kinds(workspace)
        assert "approval_request" in kinds and "approval_resolution" in kinds
        decided = [a for a in audit_lines(workspace) if a["tool"] == "write"]
        assert decided[-1]["resolution"] == "user:allow_once" and not decided[-1]["routine"]
    finally:
        k.shutdown()


def test_deny_reaches_the_model_with_the_note_and_always_allow_persists_one_rule(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("b1", "bash", {"command": "git status --short"}),
        text_reply("Understood, not running it."),
        tool_reply("b2", "bash", {"command": "git status --short"}),
        text_reply("Ran it."),
        tool_reply("b3", "bash", {"command": "git status --short"}),
        text_reply("Ran it again."),
    )
    user_config = Path(env["LOGICIAN_CONFIG_DIR"]) / "config.toml"
    k = Kernel(workspace, env)
    try:
        sidebar = Sidebar(k)
        sidebar.wait_for("hello")
        msg_id = k.send("%logician check git")
        request = sidebar.wait_for("approval.requested")
        sidebar.send(
            {
                "type": "approval.decide",
                "request_id": request["request_id"],
                "choice": "deny",
                "note": "not on this branch",
            }
        )
        assert k.collect(msg_id).status == "ok"
        told = json.dumps([m for m in messages_sent(server) if m["role"] == "tool"])
        assert "not on this branch" in told and "Denied" in told

        msg_id = k.send("%logician check git again")
        request = sidebar.wait_for("approval.requested")
        assert request["suggested_rule"].startswith("bash(git status")
        sidebar.send(
            {
                "type": "approval.decide",
                "request_id": request["request_id"],
                "choice": "always_allow",
            }
        )
        assert k.collect(msg_id).status == "ok"
        rules = tomllib.loads(user_config.read_text())["permissions"]["allow"]
        assert rules == [request["suggested_rule"]]

        before = ledger_kinds(workspace).count("approval_request")
        r = k.run("%logician and once more")
        assert r.status == "ok" and "Ran it again." in r.text
        assert ledger_kinds(workspace).count("approval_request") == before  # routine now
        last = audit_lines(workspace)[-1]
        assert last["routine"] and last["rule"] == request["suggested_rule"]
        assert "git status" not in r.text.split("Ran it again.")[0].split("▸")[0]
    finally:
        k.shutdown()


def test_with_nobody_to_ask_the_headless_policy_denies_and_says_so(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(tool_reply("b1", "bash", {"command": "touch nope.txt"}), text_reply("OK."))
    k = Kernel(workspace, env)
    try:
        r = k.run("%logician make a file")  # allow_stdin False and no logician comm
        assert r.status == "ok", r.text
        assert not (workspace / "nope.txt").exists()
        told = json.dumps([m for m in messages_sent(server) if m["role"] == "tool"])
        assert "nobody can be asked" in told
        assert audit_lines(workspace)[-1]["resolution"] == "headless:deny"
        assert "headless" in k.run("%logician audit").text
    finally:
        k.shutdown()


def test_routine_allows_stay_out_of_the_transcript_and_output_but_are_audited(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(tool_reply("r1", "read", {"path": "data.csv"}), text_reply("Read it."))
    k = Kernel(workspace, env)
    try:
        r = k.run("%logician read the data")
        assert r.status == "ok", r.text
        assert "approval" not in r.text.lower() and "allowed" not in r.text.lower()
        assert "approval_request" not in ledger_kinds(workspace)
        (entry,) = [a for a in audit_lines(workspace) if a["tool"] == "read"]
        assert entry["routine"] and entry["allowed"] and entry["resolution"] == "mode"
    finally:
        k.shutdown()


def test_budget_stops_before_the_call_that_would_cross_it(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("r1", "read", {"path": "data.csv"}),
        tool_reply("r2", "read", {"path": "script.sh"}),
        text_reply("never reached"),
    )
    k = Kernel(workspace, env)
    try:
        r = k.run("%%logician --max-tool-calls 1\nRead everything.")
        assert r.status == "ok", r.text
        assert "budget_exhausted" in r.text and "max_tool_calls" in r.text
        assert len(server.requests) == 2  # no request after the limit held
    finally:
        k.shutdown()


def test_a_failing_acceptance_check_sends_the_agent_back_then_commits(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    env = {**env, "LOGICIAN_PERMISSIONS__MODE": "full-auto"}
    server.script(
        text_reply("Done (not really)."),
        tool_reply("w1", "write", {"path": "done.flag", "content": "ok"}),
        text_reply("Now it is done."),
    )
    k = Kernel(workspace, env)
    try:
        r = k.run("%%logician --accept 'test -f done.flag'\nMake the flag.")
        assert r.status == "ok", r.text
        assert "completed" in r.text
        sent = json.dumps(messages_sent(server, 1))
        assert "test -f done.flag" in sent  # the agent was told why it must continue
        text = (workspace / ".logician/threads/test-thread.jsonl").read_text()
        assert '"reason":"run-commit"' in text
    finally:
        k.shutdown()


def test_clicking_the_card_in_the_cell_decides_and_the_card_shows_it(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    """What JupyterLab does on a click: a widget comm_msg while the cell is still running."""
    server.script(
        tool_reply("w1", "write", {"path": "clicked.txt", "content": "c\n"}), text_reply("Done.")
    )
    k = Kernel(workspace, {**env, "LOGICIAN_UI__STATUS_WIDGET": "false"})
    try:
        # A widget-rendering frontend (JupyterLab's widget manager) opens this when it connects.
        control = {"comm_id": "wm", "target_name": "jupyter.widget.control", "data": {}}
        k.kc.shell_channel.send(
            k.kc.session.msg("comm_open", control, metadata={"version": "1.0.0"})
        )
        msg_id = k.send("%logician write clicked.txt")
        buttons: dict[str, str] = {}
        deadline = time.monotonic() + 30
        while "Allow for this session" not in buttons and time.monotonic() < deadline:
            try:
                m = k.kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            if m["msg_type"] == "comm_open":
                state = m["content"]["data"].get("state", {})
                if state.get("_model_name") == "ButtonModel":
                    buttons[state.get("description", "")] = m["content"]["comm_id"]
        click = {
            "comm_id": buttons["Allow for this session"],
            "data": {"method": "custom", "content": {"event": "click"}},
        }
        k.kc.shell_channel.send(k.kc.session.msg("comm_msg", click))
        r = k.collect(msg_id, timeout=30)
        assert r.status == "ok", r.text
        assert (workspace / "clicked.txt").read_text() == "c\n"
        assert audit_lines(workspace)[-1]["resolution"] == "user:allow_session"
    finally:
        k.shutdown()


def test_without_widgets_the_question_comes_on_stdin(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(tool_reply("b1", "bash", {"command": "touch risky.txt"}), text_reply("Fine."))
    k = Kernel(workspace, env)
    try:
        msg_id = k.send("%logician do the risky thing")  # allow_stdin, no widget manager
        request = k.kc.get_stdin_msg(timeout=30)
        assert request["msg_type"] == "input_request"
        assert "[d]eny" in request["content"]["prompt"]
        k.kc.input("d too risky today")
        r = k.collect(msg_id, timeout=30)
        assert r.status == "ok", r.text
        assert "Approve bash: touch risky.txt" in r.stdout
        assert not (workspace / "risky.txt").exists()
        told = json.dumps([m for m in messages_sent(server) if m["role"] == "tool"])
        assert "too risky today" in told
        assert audit_lines(workspace)[-1]["resolution"] == "user:deny"
    finally:
        k.shutdown()


def test_the_comm_lists_frames_and_announces_rewinds(workspace: Path, env: dict[str, str]) -> None:
    k = Kernel(workspace, env)
    try:
        sidebar = Sidebar(k)
        sidebar.wait_for("hello")
        k.run("open('f.txt', 'w').write('x')", cell_id="cell-a")
        sidebar.send({"type": "frames.list", "limit": 10})
        page = sidebar.wait_for("frames")
        assert page["total"] == 1 and page["rows"][0]["cell_id"] == "cell-a"
        r = k.run("%logician rewind --last")  # the announcement is part of that cell's output
        (note,) = [
            m["content"]["data"]
            for m in r.messages
            if m["msg_type"] == "comm_msg" and m["content"]["data"].get("type") == "frames.rewound"
        ]
        assert note["frames"] == [1]
        for bad in ({"type": "frames.list", "limit": 10_000}, {"type": "nope"}, {"v": 2}):
            sidebar.send(bad) if "v" not in bad else sidebar._send(
                "comm_msg", {"comm_id": sidebar.comm_id, "data": bad}
            )
            assert sidebar.wait_for("error")["error"]
        assert "alive" in k.run("print('alive')").stdout  # bad messages never hurt the kernel
    finally:
        k.shutdown()


def test_deny_and_stop_from_stdin_comm_and_card_and_a_model_change_reaches_the_next_run(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("s1", "bash", {"command": "touch one.txt"}),
        tool_reply("c1", "bash", {"command": "touch two.txt"}),
        tool_reply("w1", "bash", {"command": "touch three.txt"}),
        text_reply("Now on the other model."),
    )
    k = Kernel(workspace, {**env, "LOGICIAN_UI__STATUS_WIDGET": "false"})
    try:
        msg_id = k.send("%logician touch one")  # no widgets, no sidebar: asked on stdin
        request = k.kc.get_stdin_msg(timeout=30)
        assert "sto[x]" in request["content"]["prompt"]
        k.kc.input("x stop here")
        assert k.collect(msg_id, timeout=30).status == "ok"

        sidebar = Sidebar(k)
        sidebar.wait_for("hello")
        msg_id = k.send("%logician touch two")
        request = sidebar.wait_for("approval.requested")
        sidebar.send(
            {
                "type": "approval.decide",
                "request_id": request["request_id"],
                "choice": "deny_and_stop",
            }
        )
        assert k.collect(msg_id, timeout=30).status == "ok"

        msg_id = k.send("%logician touch three")
        buttons: dict[str, str] = {}
        deadline = time.monotonic() + 30
        while "Deny and stop" not in buttons and time.monotonic() < deadline:
            try:
                m = k.kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            if m["msg_type"] == "comm_open":
                state = m["content"]["data"].get("state", {})
                if state.get("_model_name") == "ButtonModel":
                    buttons[state.get("description", "")] = m["content"]["comm_id"]
        click = {
            "comm_id": buttons["Deny and stop"],
            "data": {"method": "custom", "content": {"event": "click"}},
        }
        k.kc.shell_channel.send(k.kc.session.msg("comm_msg", click))
        assert k.collect(msg_id, timeout=30).status == "ok"

        assert not any((workspace / f).exists() for f in ("one.txt", "two.txt", "three.txt"))
        assert len(server.requests) == 3  # each run stopped at the denial
        text = (workspace / ".logician/threads/test-thread.jsonl").read_text()
        resolved = [
            json.loads(line) for line in text.splitlines() if '"approval_resolution"' in line
        ]
        assert [(r["choice"], r["via"]) for r in resolved] == [
            ("deny_and_stop", "stdin"),
            ("deny_and_stop", "comm"),
            ("deny_and_stop", "widget"),
        ]
        assert [a["resolution"] for a in audit_lines(workspace)[-3:]] == ["user:deny_and_stop"] * 3

        k.run("%logician config set model.name other-model")
        r = k.run("%logician ask Which model?")
        assert "Now on the other model." in r.text
        assert server.requests[-1].body["model"] == "other-model"
    finally:
        k.shutdown()


def test_interrupting_a_cell_that_waits_on_a_stdin_approval_ends_it(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    # Jupyter's stop button while the question waits on stdin: the cell must end (as an
    # interrupted cell), the call must not run, and the kernel must take the next cell.
    server.script(tool_reply("i1", "bash", {"command": "touch never.txt"}), text_reply("x"))
    k = Kernel(workspace, env)
    try:
        msg_id = k.send("%logician do the risky thing")
        assert k.kc.get_stdin_msg(timeout=30)["msg_type"] == "input_request"
        k.km.interrupt_kernel()
        r = k.collect(msg_id, timeout=30)
        assert r.status == "error" and r.reply["ename"] == "KeyboardInterrupt", r.text
        assert not (workspace / "never.txt").exists()
        assert "alive" in k.run("print('alive')").stdout
    finally:
        k.shutdown()
