"""The shared commands (`config show/get/set/unset/schema`) and their CLI wiring; secrets are
masked everywhere and never written."""

from __future__ import annotations

import json

import pytest
import tomlkit

from logician_kernel.config import ConfigError, config_get, config_schema, config_set, config_show

SECRET = "sk-live-abcdefghijklmnopqrstuvwxyz"


# --- show / get ---------------------------------------------------------------------------


def test_show_lists_every_value_with_its_layer(sandbox) -> None:
    sandbox.write_user('[model]\nname = "user-model"\n')
    cfg = sandbox.load(env={"LOGICIAN_BUDGET__MAX_TURNS": "9"}, session={"ui.coalesce_hz": 4})
    text = config_show(cfg)
    lines = {line.split(" = ")[0].strip(): line for line in text.splitlines() if " = " in line}
    assert lines["model.name"].endswith("# user") and '"user-model"' in lines["model.name"]
    assert lines["budget.max_turns"].endswith("# env")
    assert lines["ui.coalesce_hz"].endswith("# session")
    assert lines["compaction.enabled"].endswith("# default")
    assert lines["workspace.root"].split("=")[1].strip().startswith("(unset)")
    assert f"workspace: {sandbox.ws} (not trusted)" in text
    assert "api key: $OPENAI_API_KEY is NOT set" in text


def test_show_json_has_values_layers_and_restart_markers(sandbox) -> None:
    sandbox.write_project("[model]\nname = 'x'\n")
    doc = json.loads(config_show(sandbox.load(), as_json=True))
    assert doc["settings"]["model.name"] == {
        "value": "gpt-4.1",
        "layer": "default",
        "restart_required": False,
    }
    assert doc["settings"]["workspace.root"]["restart_required"] is True
    assert doc["settings"]["checkpoints.ignore"]["value"] == []
    assert doc["trusted"] is False and len(doc["notices"]) == 1
    status = {row["name"]: row["status"] for row in doc["layers"]}
    assert status["project"].startswith("NOT APPLIED") and status["user"] == "not found"


def test_show_lists_notices(sandbox) -> None:
    sandbox.write_user("[model]\nnmae = 1\n")
    text = config_show(sandbox.load())
    assert "notices:\n  ! " in text and "did you mean model.name?" in text
    assert "user     applied, 1 key(s) dropped" in text  # the bad key alone, not the file


def test_get_a_key_and_a_section(sandbox) -> None:
    sandbox.write_user("[budget.prices.m]\ninput_per_mtok = 1\noutput_per_mtok = 2\n")
    cfg = sandbox.load()
    assert config_get(cfg, "budget.max_turns") == "budget.max_turns = 50  # default"
    section = config_get(cfg, "budget.prices")
    assert "budget.prices.m.input_per_mtok = 1.0  # user" in section
    assert "budget.prices.m.cached_input_per_mtok = (unset)  # default" in section
    assert config_get(cfg, "budget.prices.m.output_per_mtok").endswith("# user")


# --- secrets ------------------------------------------------------------------------------


def test_the_api_key_is_never_shown(sandbox) -> None:
    cfg = sandbox.load(env={"OPENAI_API_KEY": SECRET})
    for text in (config_show(cfg), config_show(cfg, as_json=True), repr(cfg), str(cfg.settings)):
        assert SECRET not in text
    assert "api key: $OPENAI_API_KEY is set (****)" in config_show(cfg)
    key = cfg.api_key()
    assert key is not None and key.get_secret_value() == SECRET and SECRET not in str(key)


def test_the_api_key_follows_the_configured_variable(sandbox) -> None:
    cfg = sandbox.load(env={"LOGICIAN_MODEL__API_KEY_ENV": "MY_KEY", "MY_KEY": "k1"})
    assert cfg.api_key() is not None and cfg.api_key().get_secret_value() == "k1"
    assert sandbox.load(env={"LOGICIAN_MODEL__PROVIDER": "replay"}).api_key() is None


def test_credentials_in_urls_are_masked(sandbox) -> None:
    sandbox.write_user(
        f'[model]\nbase_url = "https://me:{SECRET}@proxy.local/v1?api_key={SECRET}"\n'
    )
    cfg = sandbox.load()
    for text in (config_show(cfg), config_show(cfg, as_json=True), config_get(cfg, "model")):
        assert SECRET not in text
        assert "https://****@proxy.local/v1?api_key=****" in text


def test_a_secret_in_a_file_is_never_echoed(sandbox) -> None:
    sandbox.write_user(f'[model]\napi_key = "{SECRET}"\n')
    cfg = sandbox.load(env={"LOGICIAN_MODEL__TOKEN": SECRET})
    joined = "\n".join(cfg.notices)
    assert SECRET not in joined
    assert "model.api_key: unknown key; API keys are never read from configuration" in joined
    assert "LOGICIAN_MODEL__TOKEN" in joined


def test_set_never_writes_or_echoes_a_secret(sandbox) -> None:
    cfg = sandbox.load()
    for persist in (None, "user", "project"):
        with pytest.raises(ConfigError) as info:
            config_set(cfg, "model.api_key", SECRET, persist=persist)
        assert SECRET not in str(info.value) and "environment variable" in str(info.value)
    with pytest.raises(ConfigError):
        cfg.with_session({"model.api_key": SECRET})
    assert not sandbox.user_file.exists() and not sandbox.project_file.exists()


# --- set / unset --------------------------------------------------------------------------


def test_session_set_writes_nothing(sandbox) -> None:
    cfg = sandbox.load()
    new, message = config_set(cfg, "budget.max_cost_usd", "2.5")
    assert (
        new.settings.budget.max_cost_usd == 2.5
        and new.provenance("budget.max_cost_usd") == "session"
    )
    assert "session override; not saved" in message
    assert not sandbox.user_dir.exists()


def test_session_unset_falls_back_to_the_lower_layer(sandbox) -> None:
    sandbox.write_user("[budget]\nmax_turns = 8\n")
    cfg, _ = config_set(sandbox.load(), "budget.max_turns", "3")
    cfg, message = __import__("logician_kernel.config", fromlist=["x"]).config_unset(
        cfg, "budget.max_turns"
    )
    assert cfg.settings.budget.max_turns == 8 and "from the user layer" in message


def test_persist_user_writes_only_that_key_and_reports_the_file(sandbox) -> None:
    cfg, message = config_set(sandbox.load(), "checkpoints.ignore", '["*.bin"]', persist="user")
    assert cfg.settings.checkpoints.ignore == ("*.bin",)
    assert str(sandbox.user_file) in message and "(user config)" in message
    assert tomlkit.parse(sandbox.user_file.read_text()).unwrap() == {
        "checkpoints": {"ignore": ["*.bin"]}
    }


def test_a_restart_field_says_so(sandbox) -> None:
    cfg, message = config_set(sandbox.load(), "checkpoints.enabled", "false", persist="user")
    assert "checkpoints.enabled takes effect after a kernel restart" in message
    _, message = config_set(cfg, "budget.max_turns", "4", persist="user")
    assert "kernel restart" not in message


def test_a_restart_field_cannot_be_a_session_override(sandbox) -> None:
    with pytest.raises(ConfigError, match="only after a kernel restart.*--persist"):
        config_set(sandbox.load(), "workspace.root", "/tmp")


def test_persist_notes_a_higher_layer_that_still_wins(sandbox) -> None:
    cfg = sandbox.load(env={"LOGICIAN_MODEL__NAME": "env-model"})
    cfg, message = config_set(cfg, "model.name", "file-model", persist="user")
    assert cfg.settings.model.name == "env-model"
    assert "still comes from the env layer" in message


def test_persist_project_in_an_untrusted_workspace_says_it_is_not_applied(sandbox) -> None:
    cfg, message = config_set(sandbox.load(), "budget.max_turns", "5", persist="project")
    assert sandbox.project_file.is_file()
    assert cfg.settings.budget.max_turns == 50
    assert "not trusted" in message and "logician trust" in message
    sandbox.trust()
    assert sandbox.load().settings.budget.max_turns == 5


def test_persist_project_validates_even_when_untrusted(sandbox) -> None:
    with pytest.raises(ConfigError, match="budget.max_turns"):
        config_set(sandbox.load(), "budget.max_turns", "0", persist="project")
    assert not sandbox.project_file.exists()


@pytest.mark.parametrize("key", ["model.api_key_env", "workspace.root"])
def test_persist_project_refuses_forbidden_keys(sandbox, key) -> None:
    with pytest.raises(ConfigError, match="refused for the project file"):
        config_set(sandbox.load(), key, "X", persist="project")
    assert not sandbox.project_file.exists()


def test_persist_fixes_a_broken_value(sandbox) -> None:
    sandbox.write_user('[budget]\nmax_turns = "many"  # oops\n')
    assert sandbox.load().dropped_keys("user") == {("budget", "max_turns")}
    cfg, _ = config_set(sandbox.load(), "budget.max_turns", "20", persist="user")
    assert cfg.notices == () and cfg.settings.budget.max_turns == 20
    assert sandbox.user_file.read_text() == "[budget]\nmax_turns = 20  # oops\n"


def test_values_are_toml_literals_or_bare_strings(sandbox) -> None:
    cfg = sandbox.load()
    cfg, _ = config_set(cfg, "model.name", "true")
    assert cfg.settings.model.name == "true"
    cfg, _ = config_set(cfg, "permissions.allow", '["bash(ls*)", "read"]')
    assert cfg.settings.permissions.allow == ("bash(ls*)", "read")
    cfg, _ = config_set(cfg, "budget.prices.m", "{ input_per_mtok = 1, output_per_mtok = 2 }")
    assert cfg.settings.budget.prices["m"].output_per_mtok == 2


def test_schema_is_json() -> None:
    assert json.loads(config_schema())["title"] == "LogicianSettings"


# --- CLI ----------------------------------------------------------------------------------


def test_cli_show_get_and_json(sandbox, cli) -> None:
    sandbox.write_user('[model]\nname = "cli-model"\n')
    result = cli("config", "show")
    assert result.code == 0 and 'model.name = "cli-model"' in result.out
    result = cli("config", "show", "--json")
    assert json.loads(result.out)["settings"]["model.name"]["layer"] == "user"
    result = cli("config", "get", "model.name")
    assert result.out == 'model.name = "cli-model"  # user\n'


def test_cli_set_persists_to_the_user_file_by_default(sandbox, cli) -> None:
    result = cli("config", "set", "ui.coalesce_hz", "7")
    assert result.code == 0, result.err
    assert "Saved ui.coalesce_hz = 7" in result.out
    assert cli("config", "get", "ui.coalesce_hz").out.endswith("# user\n")
    result = cli("config", "unset", "ui.coalesce_hz")
    assert result.code == 0 and cli("config", "get", "ui.coalesce_hz").out.endswith("# default\n")


def test_cli_set_project(sandbox, cli) -> None:
    result = cli("config", "set", "budget.max_turns", "6", "--persist", "project")
    assert result.code == 0 and "not trusted" in result.out
    assert sandbox.project_file.is_file()


def test_cli_errors_are_one_line_on_stderr_with_exit_code_2(sandbox, cli) -> None:
    for argv in (
        ("config", "get", "model.nam"),
        ("config", "set", "budget.max_turns", "-1"),
        ("config", "set", "model.api_key", SECRET),
    ):
        result = cli(*argv)
        assert result.code == 2 and result.out == ""
        assert result.err.startswith("logician: error: ") and result.err.count("\n") == 1
        assert SECRET not in result.err


def test_cli_prints_notices_to_stderr(sandbox, cli) -> None:
    sandbox.write_project("[model]\nname = 'p'\n")
    result = cli("config", "get", "model.name")
    assert result.code == 0 and "logician: note: project config" in result.err
    assert result.out == 'model.name = "gpt-4.1"  # default\n'


def test_cli_schema(cli) -> None:
    result = cli("config", "schema")
    assert result.code == 0 and json.loads(result.out)["type"] == "object"
