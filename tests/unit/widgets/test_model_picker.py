"""The sidebar's model picker: it lists the configured model, the models the profiles name
and what the server serves (a real loopback server's `/v1/models`), and a pick changes this
session's model (never a file)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loopback import LoopbackServer

from logician_kernel.agent.approvals import ApprovalBroker
from logician_kernel.jupyter.comm import LogicianComms
from logician_kernel.jupyter.model_picker import ModelPicker
from logician_kernel.workspace import Workspace


@contextmanager
def picker(
    tmp_path: Path, config: str | None, base_url: str | None = None
) -> Iterator[tuple[LogicianComms, Workspace, Path]]:
    """A workspace whose user config file says `config` (none: no file), the comms with its
    picker, and the config file's path; closed at the end."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    if config is not None:
        (cfg / "config.toml").write_text(config)
    env = {"LOGICIAN_THREAD": "models", "LOGICIAN_CONFIG_DIR": str(cfg)}
    if base_url is not None:
        env["LOGICIAN_MODEL__BASE_URL"] = base_url
    workspace = Workspace.open(ws, env)
    comms = LogicianComms(ApprovalBroker(), dict)
    comms.models = ModelPicker(workspace, comms)
    try:
        yield comms, workspace, cfg / "config.toml"
    finally:
        workspace.close()


def test_the_picker_lists_the_servers_models_and_a_pick_applies_to_the_session(
    tmp_path: Path,
) -> None:
    config = '[profiles.cheap]\nmodel = { name = "small-model" }\n'
    with LoopbackServer() as server:
        server.route(
            "GET",
            "/v1/models",
            {"object": "list", "data": [{"id": "qwen3-coder"}, {"id": "llama3"}]},
        )
        with picker(tmp_path, config, f"{server.url}/v1") as (comms, workspace, file):
            listed = comms.reply({"v": 1, "type": "models.list", "id": 1})
            assert listed["type"] == "models", listed
            assert listed["served"] == ["qwen3-coder", "llama3"]
            assert listed["served_error"] is None
            assert listed["profiles"] == [{"name": "cheap", "model": "small-model"}]
            before = file.read_text()

            used = comms.reply({"v": 1, "type": "model.use", "model": "llama3", "id": 2})
            assert used["model"] == "llama3", used
            assert workspace.config.settings.model.name == "llama3"
            assert file.read_text() == before  # a session pick, never saved
            again = comms.reply({"v": 1, "type": "models.list"})
            assert again["current"] == "llama3"


def test_a_server_that_does_not_answer_is_said_and_nothing_is_asked_without_a_base_url(
    tmp_path: Path,
) -> None:
    with picker(tmp_path, None) as (comms, _, _):
        listed = comms.reply({"v": 1, "type": "models.list"})
        assert listed["served"] == [] and listed["served_error"] is None  # a public API: not asked
    with picker(tmp_path, None, "http://127.0.0.1:9/v1") as (comms, _, _):  # nothing listens
        listed = comms.reply({"v": 1, "type": "models.list"})
        assert listed["served"] == [] and "could not ask http://127.0.0.1:9/v1/models" in (
            listed["served_error"] or ""
        )


def test_the_picker_passes_on_the_context_window_and_price_the_config_and_server_say(
    tmp_path: Path,
) -> None:
    config = (
        '[model]\nname = "qwen3-coder"\ncontext_window = 64000\n'
        '[budget.prices."qwen3-coder"]\ninput_per_mtok = 0.5\noutput_per_mtok = 1.5\n'
        '[profiles.big.model]\nname = "big-model"\ncontext_window = 1000000\n'
    )
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
        with picker(tmp_path, config, f"{server.url}/v1") as (comms, _, _):
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


def test_the_picker_shows_the_prices_the_budget_uses_for_well_known_models(
    tmp_path: Path,
) -> None:
    """The built-in table is the kernel's (the one the budget prices by): a dated snapshot
    finds its family, and a model the table does not know gets no made-up figure."""
    config = (
        '[model]\nname = "claude-sonnet-4-5-20250929"\n'
        '[profiles.small.model]\nname = "gpt-4o-mini"\n'
        '[profiles.local.model]\nname = "llama3.1:8b"\n'
    )
    with picker(tmp_path, config) as (comms, _, _):
        listed = comms.reply({"v": 1, "type": "models.list"})
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
