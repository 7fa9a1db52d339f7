"""The sidebar's model picker: it lists the configured model, the models the profiles name
and what the server serves (a real loopback server's `/v1/models`), and a pick changes this
session's model (never a file)."""

from __future__ import annotations

from pathlib import Path

from loopback import LoopbackServer

from logician_kernel.agent.approvals import ApprovalBroker
from logician_kernel.jupyter.comm import LogicianComms
from logician_kernel.jupyter.model_picker import ModelPicker
from logician_kernel.workspace import Workspace


def test_the_picker_lists_the_servers_models_and_a_pick_applies_to_the_session(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "config.toml").write_text('[profiles.cheap]\nmodel = { name = "small-model" }\n')
    env = {"LOGICIAN_THREAD": "models", "LOGICIAN_CONFIG_DIR": str(cfg)}
    with LoopbackServer() as server:
        server.route(
            "GET",
            "/v1/models",
            {"object": "list", "data": [{"id": "qwen3-coder"}, {"id": "llama3"}]},
        )
        workspace = Workspace.open(ws, {**env, "LOGICIAN_MODEL__BASE_URL": f"{server.url}/v1"})
        comms = LogicianComms(ApprovalBroker(), dict)
        comms.models = ModelPicker(workspace, comms)
        try:
            listed = comms.reply({"v": 1, "type": "models.list", "id": 1})
            assert listed["type"] == "models", listed
            assert listed["served"] == ["qwen3-coder", "llama3"]
            assert listed["served_error"] is None
            assert listed["profiles"] == [{"name": "cheap", "model": "small-model"}]
            before = (cfg / "config.toml").read_text()

            used = comms.reply({"v": 1, "type": "model.use", "model": "llama3", "id": 2})
            assert used["model"] == "llama3", used
            assert workspace.config.settings.model.name == "llama3"
            assert (cfg / "config.toml").read_text() == before  # a session pick, never saved
            again = comms.reply({"v": 1, "type": "models.list"})
            assert again["current"] == "llama3"
        finally:
            workspace.close()


def test_a_server_that_does_not_answer_is_said_and_nothing_is_asked_without_a_base_url(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "none", "LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    workspace = Workspace.open(ws, env)
    try:
        listed = ModelPicker(workspace, LogicianComms(ApprovalBroker(), dict)).choices()
        assert listed["served"] == [] and listed["served_error"] is None  # a public API: not asked
    finally:
        workspace.close()
    workspace = Workspace.open(
        ws,
        {**env, "LOGICIAN_MODEL__BASE_URL": "http://127.0.0.1:9/v1"},  # nothing listens
    )
    try:
        listed = ModelPicker(workspace, LogicianComms(ApprovalBroker(), dict)).choices()
        assert listed["served"] == [] and "could not ask http://127.0.0.1:9/v1/models" in (
            listed["served_error"] or ""
        )
    finally:
        workspace.close()


def test_the_picker_passes_on_the_context_window_and_price_the_config_and_server_say(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "config.toml").write_text(
        '[model]\nname = "qwen3-coder"\ncontext_window = 64000\n'
        '[budget.prices."qwen3-coder"]\ninput_per_mtok = 0.5\noutput_per_mtok = 1.5\n'
        '[profiles.big.model]\nname = "big-model"\ncontext_window = 1000000\n'
    )
    env = {"LOGICIAN_THREAD": "facts", "LOGICIAN_CONFIG_DIR": str(cfg)}
    routed = {"id": "or/model", "context_length": 200000, "pricing": {"prompt": "0.000003"}}
    with LoopbackServer() as server:
        server.route(
            "GET",
            "/v1/models",
            {
                "object": "list",
                "data": [
                    {"id": "qwen3-coder", "max_model_len": 262144, "owned_by": "vllm"},
                    {**routed, "architecture": {"modality": "text"}, "top_provider": None},
                    {"id": "gguf", "meta": {"n_ctx_train": 131072, "vocab_type": 2}},
                    {"id": "plain"},
                ],
            },
        )
        workspace = Workspace.open(ws, {**env, "LOGICIAN_MODEL__BASE_URL": f"{server.url}/v1"})
        comms = LogicianComms(ApprovalBroker(), dict)
        comms.models = ModelPicker(workspace, comms)
        try:
            listed = comms.reply({"v": 1, "type": "models.list", "id": 1})
            assert listed["type"] == "models", listed
            assert listed["configured"] == {
                "qwen3-coder": {
                    "context_window": 64000,
                    "input_per_mtok": 0.5,
                    "output_per_mtok": 1.5,
                },
                "big-model": {"context_window": 1000000},
            }
            assert listed["served_facts"] == {
                "qwen3-coder": {"id": "qwen3-coder", "max_model_len": 262144},
                "or/model": routed,
                "gguf": {"id": "gguf", "meta": {"n_ctx_train": 131072, "vocab_type": 2}},
            }
        finally:
            workspace.close()


def test_the_picker_shows_the_prices_the_budget_uses_for_well_known_models(
    tmp_path: Path,
) -> None:
    """The built-in table is the kernel's (the one the budget prices by): a dated snapshot
    finds its family, and a model the table does not know gets no made-up figure."""
    ws = tmp_path / "ws"
    ws.mkdir()
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "config.toml").write_text(
        '[model]\nname = "claude-sonnet-4-5-20250929"\n'
        '[profiles.small.model]\nname = "gpt-4o-mini"\n'
        '[profiles.local.model]\nname = "llama3.1:8b"\n'
    )
    env = {"LOGICIAN_THREAD": "known", "LOGICIAN_CONFIG_DIR": str(cfg)}
    workspace = Workspace.open(ws, env)
    try:
        listed = ModelPicker(workspace, LogicianComms(ApprovalBroker(), dict)).choices()
        assert listed["known"] == {
            "claude-sonnet-4-5-20250929": {
                "context_window": 200_000,
                "input_per_mtok": 3.0,
                "output_per_mtok": 15.0,
            },
            "gpt-4o-mini": {
                "context_window": 128_000,
                "input_per_mtok": 0.15,
                "output_per_mtok": 0.60,
            },
        }
    finally:
        workspace.close()
