"""An MCP server's bearer token never reaches the page, the ledger, hooks or the audit log.

The attacker is an MCP server (or a prompt that makes it talk) that echoes the credential the
user configured for it: before, the tool result showed the token in the cell (and so in the
saved `.ipynb`), because only the model's key and credential-named environment variables were
masked. Now every configured header credential of every MCP server is masked like the key.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply

sys.path.insert(0, str(Path(__file__).parents[1]))

from mcp_servers.helpers import http_server  # noqa: E402

pytestmark = pytest.mark.kernel


def _wait_ready(k: Kernel, name: str, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = k.run("%logician mcp").text
        row = next((line for line in text.splitlines() if line.startswith(name + " ")), "")
        if " ready " in row:
            return text
        time.sleep(0.3)
    raise AssertionError(f"{name} never became ready:\n{text}")


def test_a_bearer_token_an_mcp_server_echoes_is_masked_everywhere(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, tmp_path: Path
) -> None:
    token = f"mcp-{secrets.token_hex(12)}"  # no known key format: only the config names it
    hook_seen = tmp_path / "hook-stdin.json"
    user = Path(agent_env["LOGICIAN_CONFIG_DIR"])
    user.mkdir(parents=True, exist_ok=True)
    with http_server({"EXPECT_TOKEN": f"Bearer {token}", "MCP_ECHO_TOKEN": "1"}) as url:
        (user / "config.toml").write_text(
            f"[hooks]\npost_tool = [{json.dumps(f'cat > {hook_seen}')}]\n"
            f"[mcp.servers.web]\nurl = {json.dumps(url)}\n"
            f'headers = {{ Authorization = "Bearer {token}" }}\n'
        )
        server.script(tool_reply("w1", "web__whoami", {}), text_reply("You are known."))
        k = Kernel(workspace, agent_env)
        try:
            shown = [_wait_ready(k, "web")]
            r = k.run("%%logician\nWho am I on the web server?")
            assert "You are known." in r.text, r.text
            cell = json.dumps(r.messages, default=str)
            assert "you are authenticated with token ****" in cell, cell[:3000]
            shown += [
                cell,
                k.run("%logician mcp").text,
                k.run("%logician config show").text,
                k.run("%logician hooks").text,
                k.run("%logician audit").text,
            ]
        finally:
            k.shutdown()
    for text in shown:
        assert token not in text
    assert token not in json.dumps([req.body for req in server.requests])  # the model's view
    assert hook_seen.exists() and token not in hook_seen.read_text()
    written = [p for p in (workspace / ".logician").rglob("*") if p.is_file()]
    assert any(p.name == "audit.jsonl" for p in written)
    for path in written:
        assert token.encode() not in path.read_bytes(), path
