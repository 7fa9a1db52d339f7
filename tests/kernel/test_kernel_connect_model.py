"""*Connect a model* against a real kernel, as the lab sidebar does it: a wrong key, a dead
server and a bad URL are refused naming the field; a good key is stored 0600 outside the
workspace, the picker switches the model, *Make default* writes the user file, and the next
agent request reaches the loopback server with that model and that key. The key appears
nowhere else: not in `.logician/` (ledger, audit log), the cells' outputs, the user config
file or the kernel's own output; the ledger masks it when a server echoes it, as it does an
environment key."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply
from test_kernel_approvals import Sidebar, create_subshell
from test_kernel_comm import valid

pytestmark = pytest.mark.kernel

KEY = "sk-kernel-test-5d1e9a7c3b2f"


def test_connect_pick_make_default_and_the_next_request_uses_model_and_key(
    workspace: Path,
    kernel_env: dict[str, str],
    server: LoopbackServer,
    capfd: pytest.CaptureFixture[str],
) -> None:
    server.require_key = KEY
    server.route("GET", "/v1/models", {"data": [{"id": "m-small"}, {"id": "m-big"}]})
    url = f"{server.url}/v1"
    user_dir = Path(kernel_env["LOGICIAN_CONFIG_DIR"])
    k = Kernel(workspace, kernel_env)
    outputs: list[str] = []
    try:
        sidebar = Sidebar(k, create_subshell(k))
        sidebar.wait_for("hello")
        for n, (fields, field) in enumerate(
            [
                ({"base_url": url, "api_key": "sk-wrong-000000000"}, "api_key"),
                ({"base_url": "http://127.0.0.1:9/v1", "api_key": KEY}, "base_url"),
                ({"base_url": "ftp://example/v1", "api_key": KEY}, "base_url"),
            ]
        ):
            sidebar.send({"type": "model.connect", "provider": "openai", "id": n, **fields})
            refused = sidebar.wait_for("model.connect")
            assert refused["ok"] is False and refused["field"] == field, refused
        assert not (user_dir / "credentials.json").exists()

        sidebar.send(
            {"type": "model.connect", "provider": "openai", "base_url": url, "api_key": KEY}
        )
        done = sidebar.wait_for("model.connect")
        assert done["ok"] is True and done["key"] == "sk-…3b2f", done
        key_file = Path(done["key_file"])
        assert key_file.parent == user_dir and workspace not in key_file.parents
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

        sidebar.send({"type": "model.use", "model": "m-big"})
        assert sidebar.wait_for("model.use")["model"] == "m-big"
        sidebar.send({"type": "model.default", "model": "m-big"})
        made = sidebar.wait_for("model.default")
        assert made["file"] == str(user_dir / "config.toml")
        sidebar.send({"type": "config.show"})
        shown = sidebar.wait_for("config")
        rows = {r["key"]: r for r in shown["rows"]}
        assert rows[f"profiles.{done['profile']}.model.key_name"]["layer"] == "user"
        valid(sidebar.seen)

        server.script(text_reply("Hello from m-big."))
        r = k.run("%%logician\nSay hello.", cell_id="ask")
        assert r.status == "ok", r.text
        assert "Hello from m-big." in r.text
        outputs.append(str(r.messages))
        request = server.requests[0]
        assert request.body["model"] == "m-big"
        assert request.headers["authorization"] == f"Bearer {KEY}"
        # a server that echoes the key: the ledger keeps it masked, as it does an env key
        server.script(text_reply(f"Your key is {KEY}."))
        r = k.run("%%logician\nWhat is my key?", cell_id="echo")
        assert r.status == "ok" and "Your key is" in r.text, r.text
        outputs.append(str(k.run("%logician config", cell_id="show").messages))
    finally:
        k.shutdown()
    captured = capfd.readouterr()
    written = "".join(
        p.read_bytes().decode("utf-8", "replace")
        for root in (workspace, user_dir)
        for p in root.rglob("*")
        if p.is_file() and p != user_dir / "credentials.json"
    )
    assert (workspace / ".logician").is_dir() and "Say hello." in written  # the ledger is there
    assert "Your key is ****" in written
    for place, text in {
        "the workspace and .logician/": written,
        "the cells' outputs": "".join(outputs),
        "the comm messages": str(sidebar.seen),
        "the kernel's output": captured.out + captured.err,
    }.items():
        assert KEY not in text, f"the key is in {place}"
