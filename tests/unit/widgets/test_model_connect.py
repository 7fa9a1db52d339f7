"""*Connect a model*, *Make default* and the *Effective configuration* section through the
comm (direct dispatch, a real loopback server that wants a key): a wrong key, a dead server
or a bad URL is refused naming the field and stores nothing; a good one stores the key 0600
outside the workspace, writes a profile naming it and uses it; the key is never answered,
written to the workspace or the user config file."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackServer

from logician_kernel.agent.approvals import ApprovalBroker
from logician_kernel.jupyter.comm import LogicianComms
from logician_kernel.jupyter.config_view import ConfigView
from logician_kernel.jupyter.model_picker import ModelPicker
from logician_kernel.workspace import Workspace

KEY = "sk-loopback-7f3a9c2e5b1d4e8f"


@pytest.fixture
def served() -> Any:
    with LoopbackServer() as server:
        server.require_key = KEY
        server.route("GET", "/v1/models", {"data": [{"id": "m-small"}, {"id": "m-big"}]})
        yield server


@pytest.fixture
def comms(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "connect", "LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    workspace = Workspace.open(ws, env)
    c = LogicianComms(ApprovalBroker(), dict)
    c.models = ModelPicker(workspace, c)
    c.config = ConfigView(workspace, c)
    try:
        yield c, workspace
    finally:
        workspace.close()


def ask(c: LogicianComms, kind: str, **fields: Any) -> dict[str, Any]:
    return c.reply({"v": 1, "type": kind, "id": 1, **fields})


def everything_written(*roots: Path) -> str:
    return "".join(
        p.read_bytes().decode("utf-8", "replace")
        for root in roots
        for p in root.rglob("*")
        if p.is_file() and p.name != "credentials.json"
    )


def test_a_refused_connect_names_the_field_and_stores_nothing(comms: Any, served: Any) -> None:
    c, workspace = comms
    url = f"{served.url}/v1"
    cases = [
        ({"base_url": url, "api_key": "sk-wrong-0000000000"}, "api_key", "refused the key"),
        ({"base_url": "http://127.0.0.1:9/v1", "api_key": KEY}, "base_url", "nothing answered"),
        ({"base_url": "localhost:8080/v1", "api_key": KEY}, "base_url", "http:// or https://"),
        ({"base_url": url, "api_key": KEY, "model": "m-huge"}, "model", "m-small, m-big"),
        ({"base_url": url, "api_key": KEY, "name": "my.profile"}, "name", "name: 'my.profile'"),
    ]
    for fields, field, said in cases:
        answer = ask(c, "model.connect", provider="openai", **fields)
        assert answer["type"] == "model.connect" and answer["ok"] is False, answer
        assert answer["field"] == field and said in answer["error"], answer
        assert KEY not in answer["error"] and "sk-wrong" not in answer["error"]
    user_dir = workspace.config.user_dir
    assert not (user_dir / "credentials.json").exists()
    assert not (user_dir / "config.toml").exists()


def test_a_connect_stores_the_key_outside_the_workspace_and_uses_the_server(
    comms: Any, served: Any
) -> None:
    c, workspace = comms
    answer = ask(c, "model.connect", provider="openai", base_url=f"{served.url}/v1", api_key=KEY)
    assert answer["ok"] is True, answer
    assert answer["key"] == "sk-…4e8f" and answer["models"] == ["m-small", "m-big"]
    assert answer["model"] == "m-small"  # none asked for: the server's first
    key_file = Path(answer["key_file"])
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert workspace.config.workspace not in key_file.parents
    assert KEY in key_file.read_text()
    # the one request that checked the key carried it, as the provider sends it
    assert served.metadata_requests[-1].headers["authorization"] == f"Bearer {KEY}"

    # this session uses the profile: the picker lists the server's models (asked with the key)
    listed = ask(c, "models.list")
    assert listed["profile"] == answer["profile"] and listed["served"] == ["m-small", "m-big"]
    assert workspace.config.api_key().get_secret_value() == KEY

    used = ask(c, "model.use", model="m-big")
    assert used["model"] == "m-big"
    made = ask(c, "model.default", model="m-big")
    assert made["model"] == "m-big" and made["file"] == str(workspace.config.user_file)
    text = Path(made["file"]).read_text()
    assert f'profile = "{answer["profile"]}"' in text and 'name = "m-big"' in text
    assert "profiles." in made["said"] and made["file"] in made["said"]

    shown = ask(c, "config.show")
    rows = {r["key"]: r for r in shown["rows"]}
    assert rows["model.key_name"]["layer"] == "profile"
    assert rows[f"profiles.{answer['profile']}.model.key_name"]["layer"] == "user"
    assert "stored key" in shown["api_key"]
    assert KEY not in str(answer) + str(listed) + str(made) + str(shown)
    assert KEY not in everything_written(workspace.config.workspace, workspace.config.user_dir)


def test_a_config_edit_applies_to_the_session_or_the_user_file(comms: Any) -> None:
    c, workspace = comms
    done = ask(c, "config.set", key="budget.max_turns", value="7")
    assert done["ok"] is True and "session override" in done["said"]
    assert workspace.config.settings.budget.max_turns == 7
    assert not workspace.config.user_file.exists()
    done = ask(c, "config.set", key="budget.max_turns", value="9", persist="user")
    assert done["ok"] is True and str(workspace.config.user_file) in done["said"]
    assert "max_turns = 9" in workspace.config.user_file.read_text()
    refused = ask(c, "config.set", key="budget.max_turns", value='"lots"')
    assert refused["ok"] is False and "budget.max_turns" in refused["error"]
    refused = ask(c, "config.set", key="model.api_key", value="sk-typed-in-0000000")
    assert refused["ok"] is False and "sk-typed-in" not in refused["error"]
    rows = {r["key"]: r for r in ask(c, "config.show")["rows"]}
    assert (
        rows["budget.max_turns"]["layer"] == "session" and rows["budget.max_turns"]["text"] == "7"
    )


def test_a_server_without_a_key_connects_and_nothing_is_stored(comms: Any) -> None:
    c, workspace = comms
    with LoopbackServer() as server:
        server.route("GET", "/v1/models", {"data": [{"id": "local-model"}]})
        answer = ask(c, "model.connect", provider="openai", base_url=f"{server.url}/v1")
        assert answer["ok"] is True and answer["key"] is None and answer["key_file"] is None
        assert "authorization" not in server.metadata_requests[0].headers
    assert not (workspace.config.user_dir / "credentials.json").exists()
    text = workspace.config.user_file.read_text()
    assert 'api_key_env = ""' in text and "key_name" not in text
    assert workspace.config.settings.model.name == "local-model"
    assert workspace.config.api_key() is None
