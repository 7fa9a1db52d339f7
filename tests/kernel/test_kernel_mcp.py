"""MCP servers in a real kernel, with the loopback model server: the model calls an MCP tool,
the approval and audit records appear and the result reaches the model; the first cell does
not wait for a server that never answers; `%logician mcp` shows each server; a kernel killed
mid-call quarantines the call on restart; no server process outlives the kernel."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer
from test_kernel_agent import messages_sent, text_reply, tool_reply

sys.path.insert(0, str(Path(__file__).parents[1]))

from mcp_servers.helpers import alive, server_pids, stdio_server, wait_until  # noqa: E402

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def _toml(value: object) -> str:
    return json.dumps(value)  # JSON strings and lists are TOML literals too


def write_servers(env: dict[str, str], servers: dict[str, dict]) -> None:
    lines = []
    for name, table in servers.items():
        lines.append(f"[mcp.servers.{name}]")
        for key, value in table.items():
            if isinstance(value, dict):
                inner = ", ".join(f"{k} = {_toml(v)}" for k, v in value.items())
                lines.append(f"{key} = {{ {inner} }}")
            else:
                lines.append(f"{key} = {_toml(value)}")
    user = Path(env["LOGICIAN_CONFIG_DIR"])
    user.mkdir(parents=True, exist_ok=True)
    (user / "config.toml").write_text("\n".join(lines) + "\n")


@pytest.fixture
def env(model_env: dict[str, str]) -> dict[str, str]:
    return model_env


def wait_ready(k: Kernel, name: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = k.run("%logician mcp").text
        row = next((line for line in text.splitlines() if line.startswith(name + " ")), "")
        if " ready " in row:
            return text
        time.sleep(0.3)
    raise AssertionError(f"{name} never became ready:\n{text}")


def audit_lines(workspace: Path) -> list[dict]:
    path = workspace / ".logician" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_model_calls_an_mcp_tool_after_approval_and_the_result_reaches_it(
    workspace: Path, env: dict[str, str], server: LoopbackServer, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    write_servers(env, {"notes": stdio_server(env={"MCP_PID_DIR": str(pids)})})
    server.script(
        tool_reply("m1", "notes__search", {"query": "otters"}),
        text_reply("Two notes mention otters."),
    )
    k = Kernel(workspace, env)
    try:
        table = wait_ready(k, "notes")
        assert "notes   stdio      ready  4" in table, table
        msg_id = k.send("%logician find notes about otters")
        request = k.kc.get_stdin_msg(timeout=30)
        assert "notes__search" in request["content"]["prompt"]
        k.kc.input("o")
        r = k.collect(msg_id, timeout=60)
        assert r.status == "ok", r.text
        assert "Two notes mention otters." in r.text
        first = server.requests[0].body
        offered = {t["function"]["name"] for t in first["tools"]}
        assert {"notes__search", "notes__write_note", "bash", "read"} <= offered
        search = next(t for t in first["tools"] if t["function"]["name"] == "notes__search")
        assert search["function"]["parameters"]["required"] == ["query"]
        told = [m for m in messages_sent(server) if m["role"] == "tool"]
        assert "found 2 notes about otters: alpha.md, beta.md" in json.dumps(told)
        decision = next(a for a in audit_lines(workspace) if a.get("tool") == "notes__search")
        assert decision["resolution"] == "user:allow_once", decision
        ledger = (workspace / ".logician/threads/test-thread.jsonl").read_text()
        kinds = [json.loads(line)["kind"] for line in ledger.splitlines()]
        assert "approval_request" in kinds and "approval_resolution" in kinds
        intent = next(
            json.loads(line)
            for line in ledger.splitlines()
            if json.loads(line)["kind"] == "tool_intent"
        )
        assert intent["recovery"] == "external"
        running = server_pids(pids)
        assert running and all(alive(p) for p in running)
    finally:
        k.shutdown()
    wait_until(lambda: not any(alive(p) for p in running), 15, "the server to stop")


def test_the_first_cell_does_not_wait_for_a_hung_server_and_mcp_shows_each_state(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    write_servers(
        env,
        {
            "hung": stdio_server(
                "hang", env={"MCP_PID_DIR": str(pids)}, connect_timeout_seconds=60
            ),
            "crash": stdio_server("crash"),
            "broken": {"command": "/nonexistent/mcp-server"},
        },
    )
    k = Kernel(workspace, env)
    try:
        r = k.run("print('first cell')")
        assert r.status == "ok" and "first cell" in r.stdout
        shown = k.run("%logician mcp").text
        assert "hung    stdio      connecting" in shown, shown
        deadline = time.monotonic() + 30
        while "crash   stdio      failed" not in shown and time.monotonic() < deadline:
            time.sleep(0.3)
            shown = k.run("%logician mcp").text
        assert "the server exited" in shown or "closed its connection" in shown, shown
        assert "cannot start the server" in shown or "No such file" in shown, shown
        assert "restarting" in k.run("%logician mcp restart hung").text.lower()
        assert "no MCP server named 'nope'" in k.run("%logician mcp restart nope").text
        # the restarted server writes its pid once Python has started it (seconds at load 20)
        wait_until(lambda: server_pids(pids), 60, "the hung server's pid")
        hung = server_pids(pids)
    finally:
        k.shutdown()
    wait_until(lambda: not any(alive(p) for p in hung), 15, "the hung servers to stop")


def test_a_kernel_killed_mid_call_quarantines_it_and_leaves_no_server_running(
    workspace: Path, env: dict[str, str], server: LoopbackServer, tmp_path: Path
) -> None:
    pids, marker = tmp_path / "pids", tmp_path / "slow.started"
    pids.mkdir()
    env = {**env, "LOGICIAN_PERMISSIONS__MODE": "full-auto"}
    write_servers(
        env, {"notes": stdio_server(env={"MCP_PID_DIR": str(pids), "MCP_SLOW_MARKER": str(marker)})}
    )
    server.script(tool_reply("s1", "notes__slow", {"seconds": 120}), text_reply("Noted."))
    k = Kernel(workspace, env)
    try:
        wait_ready(k, "notes")
        k.send("%%logician\nRun the slow job.")
        wait_until(marker.exists, 60, "the slow call to start")
        before = server_pids(pids)
        k.kill9()
        wait_until(lambda: not any(alive(p) for p in before), 15, "the guard to kill the server")
        k.start_again()
        r = k.run("print('back')")
        assert "quarantined the notes__slow call" in r.stderr, r.stderr
        ledger = (workspace / ".logician/threads/test-thread.jsonl").read_text()
        assert '"kind":"quarantine"' in ledger
    finally:
        k.shutdown()
    wait_until(lambda: not any(alive(p) for p in server_pids(pids)), 15, "servers to stop")


def test_an_interrupt_cancels_the_mcp_call_and_the_server_serves_the_next_one(
    workspace: Path, env: dict[str, str], server: LoopbackServer, tmp_path: Path
) -> None:
    marker = tmp_path / "slow.started"
    env = {**env, "LOGICIAN_PERMISSIONS__MODE": "full-auto"}
    write_servers(env, {"notes": stdio_server(env={"MCP_SLOW_MARKER": str(marker)})})
    server.script(
        tool_reply("s2", "notes__slow", {"seconds": 120}),
        tool_reply("s3", "notes__search", {"query": "after"}),
        text_reply("Found them."),
    )
    k = Kernel(workspace, env)
    try:
        wait_ready(k, "notes")
        msg_id = k.send("%%logician\nRun the slow job.")
        wait_until(marker.exists, 60, "the slow call to start")
        k.km.interrupt_kernel()
        r = k.collect(msg_id, timeout=30)  # well before the 120 s the tool would take
        assert r.reply["ename"] == "KeyboardInterrupt"
        r = k.run("%logician search again please")
        assert r.status == "ok", r.text
        told = json.dumps([m for m in messages_sent(server) if m["role"] == "tool"])
        assert "INTERRUPTED" in told and "found 2 notes about after" in told
        assert " ready " in k.run("%logician mcp").text
    finally:
        k.shutdown()


def test_mcp_calls_count_against_the_tool_call_budget_and_rules_allow_them(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    env = {**env, "LOGICIAN_PERMISSIONS__ALLOW": '["mcp(notes__*)"]'}
    write_servers(env, {"notes": stdio_server()})
    server.script(
        tool_reply("r1", "notes__search", {"query": "one"}),
        tool_reply("r2", "notes__write_note", {"name": "a", "text": "b"}),
        text_reply("never reached"),
    )
    k = Kernel(workspace, env)
    try:
        wait_ready(k, "notes")
        r = k.run("%%logician --max-tool-calls 1\nSearch, then write.")
        assert r.status == "ok", r.text
        assert "budget_exhausted" in r.text and "max_tool_calls" in r.text
        assert len(server.requests) == 2  # no request after the limit held
        told = json.dumps([m for m in messages_sent(server) if m["role"] == "tool"])
        assert "found 2 notes about one" in told
        allowed = next(a for a in audit_lines(workspace) if a.get("tool") == "notes__search")
        assert allowed["action"] == "allow" and allowed["rule"] == "mcp(notes__*)"
        assert allowed["routine"] is True
    finally:
        k.shutdown()
