"""Configuration fails closed per key (issue 27, findings 6 and 8), layer by layer, with hostile
input: a bad key is dropped alone and named; the rest of its layer applies; a broken source of
the model endpoint refuses model calls instead of falling back to a default; a project's
profile selection and capture lowering never pass silently."""

from __future__ import annotations

import json

import pytest
import tomlkit

from logician_kernel.config import config_show
from logician_kernel.config._keys import parse_literal
from logician_kernel.config.commands import config_set, trust

LOOPBACK = "http://127.0.0.1:8080/v1"
KEYLIKE = "sk-proj-Zx81kQ0pLm29Vb7Nc4Rt6Yw3"
HOSTILE_NAME = "na\x1b[2J\x07me\nline"


def printable(text: str) -> bool:
    return all(ch.isprintable() for ch in text)


def test_the_finding_one_unknown_env_variable_no_longer_resets_the_endpoint(sandbox) -> None:
    cfg = sandbox.load(
        env={"LOGICIAN_MODEL__BASE_URL": LOOPBACK, "LOGICIAN_MODEL__TOOL_CHOISE": "required"}
    )
    assert cfg.settings.model.base_url == LOOPBACK
    assert cfg.provenance("model.base_url") == "env"
    assert cfg.model_refusal is None
    (notice,) = cfg.notices
    assert notice.startswith("environment variable LOGICIAN_MODEL__TOOL_CHOISE: model.tool_choise")
    assert "dropped; the rest of the environment layer applies" in notice


@pytest.mark.parametrize(
    "layer", ["user", "project", "env", "session"], ids=lambda name: f"in-{name}"
)
@pytest.mark.parametrize(
    ("key", "bad", "why"),
    [
        ("budget.tool_choice", "1", "unknown key"),
        ("budget.max_turns", '"lots"', "expected an integer"),
        ("budget.max_turns", "{ deep = { er = [1, { x = 2 }] } }", "expected an integer"),
        ("ui.coalesce_hz", "0", "greater than or equal to 1"),
        ("ui.status_fields", '["phase", "nonsense"]', "expected one of"),
    ],
)
def test_a_bad_key_is_dropped_alone_in_every_layer(sandbox, layer, key, bad, why) -> None:
    section, name = key.split(".")
    good = {"budget.max_tool_calls": 7, "model.name": "mine"}
    if layer in ("user", "project"):
        data = {"budget": {"max_tool_calls": 7}, "model": {"name": "mine"}}
        data.setdefault(section, {})[name] = parse_literal(bad)
        (sandbox.write_user if layer == "user" else sandbox.write_project)(tomlkit.dumps(data))
        if layer == "project":
            sandbox.trust()
        cfg = sandbox.load()
    elif layer == "env":
        env = {
            "LOGICIAN_BUDGET__MAX_TOOL_CALLS": "7",
            "LOGICIAN_MODEL__NAME": "mine",
            f"LOGICIAN_{section.upper()}__{name.upper()}": bad,
        }
        cfg = sandbox.load(env=env)
    else:
        cfg = sandbox.load(session={**good, key: parse_literal(bad)})
    assert cfg.settings.budget.max_tool_calls == 7 and cfg.settings.model.name == "mine"
    assert layer in cfg.applied_layers
    assert cfg.model_refusal is None  # nothing about the endpoint was touched
    (notice,) = cfg.notices
    assert key in notice and why in notice and "dropped" in notice, notice
    assert "was left out" not in notice


def test_a_table_in_one_layer_and_a_value_in_another(sandbox) -> None:
    sandbox.write_user('[checkpoints]\nignore = ["*.tmp"]\n[ui]\ncoalesce_hz = 20\n')
    cfg = sandbox.load(
        env={"LOGICIAN_CHECKPOINTS__IGNORE__X": "1", "LOGICIAN_UI__ANSWER": "stream"}
    )
    assert cfg.settings.checkpoints.ignore == ("*.tmp",)  # the user's list, not the env table
    assert cfg.settings.ui.answer == "stream" and cfg.settings.ui.coalesce_hz == 20
    (notice,) = cfg.notices
    assert "LOGICIAN_CHECKPOINTS__IGNORE__X: checkpoints.ignore: expected an array" in notice


def test_one_bad_rule_is_dropped_and_the_others_stay(sandbox) -> None:
    sandbox.write_user('[permissions]\nallow = ["read(**)", "Not A Rule", "bash(ls)"]\n')
    cfg = sandbox.load()
    assert cfg.settings.permissions.allow == ("read(**)", "bash(ls)")
    assert "permissions.allow[1]" in cfg.notices[0] and "'Not A Rule'" in cfg.notices[0]


def test_hostile_names_are_printed_inert_and_never_echo_a_key(sandbox) -> None:
    sandbox.write_user(
        f'[model]\n"{KEYLIKE}" = 1\n"a1b2c3d4e5f6g7h8i9j0k1l2m3n4" = 2\n'
        f'[ui]\n"{HOSTILE_NAME.encode("unicode_escape").decode()}" = 3\n'
        f'[budget]\nmax_turns = "{"x" * 100_000}"\n'
    )
    env = {
        f"LOGICIAN_MODEL__{HOSTILE_NAME.upper()}": "1",
        f"LOGICIAN_UI__{KEYLIKE}": "1",
        "LOGICIAN_UI__" + "Y" * 5000: "1",
    }
    cfg = sandbox.load(env=env)
    shown = "\n".join(cfg.notices) + config_show(cfg) + config_show(cfg, as_json=True)
    assert KEYLIKE not in shown and KEYLIKE.upper() not in shown
    assert "a1b2c3d4e5f6g7h8i9j0k1l2m3n4" not in shown
    assert "looks like a secret" in shown
    assert all(printable(notice) for notice in cfg.notices), cfg.notices
    assert "\\x1b" in shown  # the escape is shown, not sent to the terminal
    assert max(len(notice) for notice in cfg.notices) < 600
    assert len(cfg.notices) == 7 and cfg.model_refusal is None  # 4 in the file, 3 variables


def test_an_unknown_credential_key_names_the_hint_not_the_value(sandbox) -> None:
    sandbox.write_user(f'[model]\napi_key = "{KEYLIKE}"\n')
    cfg = sandbox.load()
    assert KEYLIKE not in "\n".join(cfg.notices) + config_show(cfg)
    assert "API keys are never read from configuration" in cfg.notices[0]


# --- the model endpoint fails closed ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f'[model]\nbase_url = "{LOOPBACK}"\n[budget\n',  # does not parse: may set anything
        '[model]\nbase_url = "127.0.0.1:8080/v1"\n',  # no scheme
        '[model]\nprovider = "openia"\n',
        '[model]\napi_key_env = "MY KEY"\n',
        'model = "local"\n',  # the whole table
        '[model]\nbaseurl = "http://x/v1"\n',  # most likely a typo of base_url
        f'[model.base_url]\nurl = "{LOOPBACK}"\n',
    ],
)
def test_a_broken_endpoint_in_the_user_file_refuses_model_calls(sandbox, text) -> None:
    path = sandbox.write_user(
        text + "[budget]\nmax_tool_calls = 7\n" if "[budget\n" not in text else text
    )
    cfg = sandbox.load()
    assert cfg.model_refusal is not None and str(path) in cfg.model_refusal
    assert "model calls are refused" in cfg.model_refusal
    assert any(n.startswith("Model calls are refused") for n in cfg.notices)
    assert "MODEL CALLS REFUSED" in config_show(cfg)
    assert json.loads(config_show(cfg, as_json=True))["model_calls"]["refused"]


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("LOGICIAN_MODEL__BASE_URL", "127.0.0.1:8080/v1"),
        ("LOGICIAN_MODEL__PROVIDER", "local"),
        ("LOGICIAN_MODEL__API_KEY_ENV", "NOT-A-NAME"),
        ("LOGICIAN_MODEL__BASE_URL__HOST", "127.0.0.1"),
        ("LOGICIAN_MODEL____BASE_URL", LOOPBACK),  # not a key path, but about the model
    ],
)
def test_a_broken_endpoint_variable_refuses_model_calls_naming_it(sandbox, var, value) -> None:
    cfg = sandbox.load(env={var: value, "LOGICIAN_BUDGET__MAX_TURNS": "9"})
    assert cfg.model_refusal is not None and var in cfg.model_refusal
    assert cfg.settings.budget.max_turns == 9  # everything else still applies


def test_a_bad_endpoint_in_an_unselected_profile_does_not_refuse(sandbox) -> None:
    sandbox.write_user('[profiles.p]\nmodel = { base_url = "nope" }\n')
    assert sandbox.load().model_refusal is None
    cfg = sandbox.load(env={"LOGICIAN_PROFILE": "p"})
    assert cfg.model_refusal is not None and "profiles.p.model.base_url" in cfg.model_refusal


def test_an_untrusted_broken_project_cannot_set_anything_and_does_not_refuse(sandbox) -> None:
    sandbox.write_project("[model\n")
    assert sandbox.load().model_refusal is None
    sandbox.trust()
    cfg = sandbox.load()
    assert cfg.model_refusal is not None and str(sandbox.project_file) in cfg.model_refusal


def test_fixing_the_file_lifts_the_refusal(sandbox) -> None:
    sandbox.write_user('[model]\nbase_url = "127.0.0.1/v1"\n')
    cfg = sandbox.load()
    assert cfg.model_refusal is not None
    cfg, _ = config_set(cfg, "model.base_url", LOOPBACK, persist="user")
    assert cfg.model_refusal is None and cfg.settings.model.base_url == LOOPBACK


def test_setting_a_key_is_refused_only_for_what_it_adds(sandbox) -> None:
    sandbox.write_user("[ui]\ncoalesce_hz = 0\n")
    cfg, _ = config_set(sandbox.load(), "budget.max_turns", "9", persist="user")
    assert cfg.settings.budget.max_turns == 9
    with pytest.raises(Exception, match="budget.max_tool_calls"):
        config_set(cfg, "budget.max_tool_calls", "0", persist="user")
    assert "max_tool_calls" not in sandbox.user_file.read_text()


# --- a project's profile selection and capture lowering --------------------------------------

YOLO = '[profiles.yolo]\npermissions = { mode = "full-auto", allow = ["bash"] }\n'


def test_a_project_selecting_a_user_profile_that_widens_permissions_is_held_back(sandbox) -> None:
    sandbox.write_user(YOLO + '[profiles.cheap]\nmodel = { name = "mini" }\n')
    sandbox.write_project('profile = "yolo"\n')
    sandbox.trust()
    cfg = sandbox.load()
    assert cfg.settings.permissions.mode == "ask" and cfg.settings.permissions.allow == ()
    assert cfg.held_back == ("profile",)
    (notice,) = cfg.notices
    assert f"{sandbox.project_file}, line 1: profile = 'yolo' held back" in notice
    assert "permissions.mode, permissions.allow" in notice
    assert "logician trust --allow profile" in notice

    trust(sandbox.ws, user_dir=sandbox.user_dir, allow=["profile"])
    cfg = sandbox.load()
    assert cfg.settings.permissions.mode == "full-auto" and cfg.notices == ()
    # The allow is bound to the name: selecting another gated profile asks again.
    sandbox.write_user(YOLO + '[profiles.other]\npermissions = { mode = "full-auto" }\n')
    sandbox.write_project('profile = "other"\n')
    sandbox.trust()
    assert sandbox.load().settings.permissions.mode == "ask"


def test_a_project_selecting_a_harmless_profile_applies_it(sandbox) -> None:
    sandbox.write_user('[profiles.cheap]\nmodel = { name = "mini" }\nbudget = { max_turns = 5 }\n')
    sandbox.write_project('profile = "cheap"\n')
    sandbox.trust()
    cfg = sandbox.load()
    assert cfg.settings.model.name == "mini" and cfg.notices == ()


def test_a_profile_loosening_a_budget_counts_as_turning_on_a_gated_field(sandbox) -> None:
    sandbox.write_user("[budget]\nmax_turns = 10\n[profiles.long]\nbudget = { max_turns = 500 }\n")
    sandbox.write_project('profile = "long"\n')
    sandbox.trust()
    cfg = sandbox.load()
    assert cfg.settings.budget.max_turns == 10 and "budget.max_turns" in cfg.notices[0]


def test_the_users_own_selection_is_not_gated(sandbox) -> None:
    sandbox.write_user('profile = "yolo"\n' + YOLO)
    assert sandbox.load().settings.permissions.mode == "full-auto"
    sandbox.write_user(YOLO)
    assert sandbox.load(env={"LOGICIAN_PROFILE": "yolo"}).settings.permissions.mode == "full-auto"


def test_a_project_lowering_capture_is_named_with_file_and_lines(sandbox) -> None:
    sandbox.write_user("[checkpoints]\nmax_file_bytes = 1000000\n")
    sandbox.write_project(
        '[checkpoints]\nenabled = false\nvariables = false\nignore = ["**"]\n'
        "max_file_bytes = 10\nmax_variable_bytes = 0\nkeep_recent_frames = 0\n"
        'min_free_bytes = 999999999999\nvariable_ignore = ["*"]\nattribution = false\n'
    )
    sandbox.trust()
    cfg = sandbox.load()
    (notice,) = cfg.notices
    assert notice.startswith("this project lowers capture: checkpoints.enabled = false (")
    for key in (
        "enabled",
        "variables",
        "attribution",
        "ignore",
        "variable_ignore",
        "max_file_bytes",
        "max_variable_bytes",
        "keep_recent_frames",
        "min_free_bytes",
    ):
        assert f"checkpoints.{key} = " in notice, key
    assert f"{sandbox.project_file}, line 2" in notice
    assert cfg.settings.checkpoints.enabled is False  # applied, not held back
    assert "the project lowers capture: checkpoints.enabled = false" in config_show(cfg)


def test_raising_capture_or_being_overridden_is_not_reported(sandbox) -> None:
    sandbox.write_project("[checkpoints]\nmax_file_bytes = 9999999999999\nvariables = false\n")
    sandbox.trust()
    cfg = sandbox.load(env={"LOGICIAN_CHECKPOINTS__VARIABLES": "true"})
    assert cfg.notices == () and cfg.lowered == ()


def test_a_project_selected_profile_lowering_capture_is_named(sandbox) -> None:
    sandbox.write_user("[profiles.fast]\ncheckpoints = { enabled = false }\n")
    sandbox.write_project('profile = "fast"\n')
    sandbox.trust()
    cfg = sandbox.load()
    assert cfg.settings.checkpoints.enabled is False
    (notice,) = cfg.notices
    assert "the profile 'fast' lowers capture: checkpoints.enabled = false" in notice
    # The user's own selection of the same profile is the user's choice: no notice.
    sandbox.write_project("")
    sandbox.trust()
    assert sandbox.load(env={"LOGICIAN_PROFILE": "fast"}).notices == ()


def test_logician_config_show_says_exactly_what_was_dropped(cli, monkeypatch) -> None:
    monkeypatch.setenv("LOGICIAN_MODEL__BASE_URL", LOOPBACK)
    monkeypatch.setenv("LOGICIAN_MODEL__TOOL_CHOISE", "required")
    result = cli("config", "show")
    assert result.code == 0
    assert "env      applied, 1 key(s) dropped" in result.out
    dropped = result.out.split("keys dropped")[1].split("notices:")[0]
    assert "LOGICIAN_MODEL__TOOL_CHOISE: model.tool_choise: unknown key" in dropped
    assert f'model.base_url = "{LOOPBACK}"' in result.out and "REFUSED" not in result.out
    monkeypatch.setenv("LOGICIAN_MODEL__BASE_URL", "127.0.0.1:8080/v1")
    result = cli("config", "show", "--json")
    doc = json.loads(result.out)
    assert "LOGICIAN_MODEL__BASE_URL" in doc["model_calls"]["refused"]
    assert any("LOGICIAN_MODEL__TOOL_CHOISE" in line for line in doc["dropped"])


def test_a_higher_layer_that_sets_the_endpoint_decides_it(sandbox) -> None:
    sandbox.write_user('[model]\nbase_url = "127.0.0.1/v1"\n')
    cfg = sandbox.load()
    assert cfg.model_refusal is not None
    fixed = cfg.with_session({"model.base_url": LOOPBACK})
    assert fixed.model_refusal is None and fixed.settings.model.base_url == LOOPBACK
    # A file that does not parse may set all three: only all three set above decide them.
    sandbox.write_user("[model\n")
    env = {"LOGICIAN_MODEL__BASE_URL": LOOPBACK, "LOGICIAN_MODEL__PROVIDER": "openai"}
    assert sandbox.load(env=env).model_refusal is not None
    env["LOGICIAN_MODEL__API_KEY_ENV"] = ""
    assert sandbox.load(env=env).model_refusal is None
    # A typo beside the real key in the same layer does not stop calls: the real key decides.
    sandbox.write_user("")
    both = {"LOGICIAN_MODEL__BASE_URL": LOOPBACK, "LOGICIAN_MODEL__BASEURL": "http://x/v1"}
    cfg = sandbox.load(env=both)
    assert cfg.model_refusal is None and "LOGICIAN_MODEL__BASEURL" in cfg.notices[0]


def test_a_refused_credential_key_in_a_project_is_named_without_its_key_shaped_name(
    sandbox,
) -> None:
    sandbox.write_project(f'[model]\n"{KEYLIKE}_token" = "x"\n')
    sandbox.trust()
    cfg = sandbox.load()
    assert KEYLIKE not in "\n".join(cfg.notices) and "looks like a secret" in cfg.notices[0]
