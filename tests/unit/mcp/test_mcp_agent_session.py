"""A script's `AgentSession` connects its MCP servers at open, without waiting, and its runs
call their tools through the `approve` callback - in a fresh interpreter, without Jupyter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_harness import clean_env, git
from loopback import LoopbackServer, text_reply, tool_reply

sys.path.insert(0, str(Path(__file__).parents[2]))

from mcp_servers.helpers import alive, server_pids, stdio_server, wait_until  # noqa: E402

SCRIPT = r"""
import json, sys, time
from logician_kernel import AgentSession

session = AgentSession.open(workspace=sys.argv[1], thread="mcp-script")
at_open = [s.state for s in session.mcp.status()]
session.mcp.wait(240)  # the server starts in seconds; minutes at load 20
asked = []
def approve(call):
    asked.append((call.tool, call.arguments))
    return True
result = session.run("Search the notes for otters.", approve=approve)
out = {"at_open": at_open, "asked": asked, "text": result.text,
       "jupyter": sorted(m for m in ("IPython", "ipykernel", "ipywidgets", "comm") if m in sys.modules)}
session.close()
print(json.dumps(out))
"""


@pytest.mark.timeout(600)
def test_a_script_session_uses_mcp_tools_through_its_approve_callback(
    tmp_path: Path, server: LoopbackServer
) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    pids = tmp_path / "pids"
    pids.mkdir()
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    table = stdio_server(env={"MCP_PID_DIR": str(pids)})
    (cfg / "config.toml").write_text(
        f"[mcp.servers.notes]\ncommand = {json.dumps(table['command'])}\n"
        f"args = {json.dumps(table['args'])}\n"
        f"connect_timeout_seconds = {table['connect_timeout_seconds']}\n"
        f"env = {{ MCP_PID_DIR = {json.dumps(str(pids))} }}\n"
    )
    server.script(tool_reply("n1", "notes__search", {"query": "otters"}), text_reply("Two."))
    env = clean_env(
        LOGICIAN_CONFIG_DIR=str(cfg),
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        OPENAI_API_KEY="test-key-not-secret",
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ws)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=420,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["at_open"] == ["connecting"]
    assert out["asked"] == [["notes__search", {"query": "otters"}]]
    assert out["text"] == "Two."
    assert out["jupyter"] == []
    assert "found 2 notes about otters" in json.dumps(server.requests[1].body["messages"])
    started = server_pids(pids)
    assert started
    wait_until(lambda: not any(alive(p) for p in started), 15, "the server to stop with close()")
