"""Bad input is never silently ignored and never a crash: the bad key is dropped alone (a file
that cannot be read is left out whole) and the notice names the file, the line, the dotted key
and what was expected. Since issue 27 a bad key no longer takes its whole layer with it (that
sent the API key to a default endpoint); an unreadable source of the model endpoint refuses
model calls, in a second notice."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from logician_kernel.config import ConfigError, config_get, config_set


def only(cfg) -> str:
    assert len(cfg.notices) == 1, cfg.notices
    return cfg.notices[0]


def first_and_refused(cfg) -> str:
    """An unreadable file may set the model endpoint: its notice, then the refusal naming it."""
    assert len(cfg.notices) == 2, cfg.notices
    assert cfg.notices[1].startswith("Model calls are refused") and cfg.model_refusal
    assert cfg.notices[0].split(":")[0] in cfg.notices[1]
    return cfg.notices[0]


def test_invalid_toml_names_file_line_and_column(sandbox) -> None:
    sandbox.write_user('[model]\nname = "a"\nmax_retries = \n')
    cfg = sandbox.load()
    notice = first_and_refused(cfg)
    assert notice.startswith(f"{sandbox.user_file}, line 3, column 14: invalid TOML")
    assert notice.endswith("the user config file was left out.")
    assert cfg.settings.model.name == "gpt-4.1"
    assert "user" not in cfg.applied_layers


def test_duplicate_keys_are_invalid_toml(sandbox) -> None:
    sandbox.write_user("[budget]\nmax_turns = 1\nmax_turns = 2\n")
    notice = first_and_refused(sandbox.load())
    assert "line 3" in notice and "already exists" in notice


def test_unknown_key_suggests_the_closest_known_key(sandbox) -> None:
    sandbox.write_user('# comment\n[model]\nprovider = "openai"\nnmae = "x"\n')
    notice = only(sandbox.load())
    assert notice.startswith(f"{sandbox.user_file}, line 4: model.nmae: unknown key")
    assert "did you mean model.name?" in notice


def test_unknown_section_suggests_the_closest_section(sandbox) -> None:
    sandbox.write_user("[budjet]\nmax_turns = 3\n")
    notice = only(sandbox.load())
    assert "line 1" in notice and "budjet: unknown key; did you mean budget?" in notice


def test_unknown_key_far_from_anything_has_no_suggestion(sandbox) -> None:
    sandbox.write_user("[model]\nzzzzqqq = 1\n")
    notice = only(sandbox.load())
    assert "model.zzzzqqq: unknown key" in notice and "did you mean" not in notice


def test_wrong_type_names_key_line_and_expectation(sandbox) -> None:
    sandbox.write_user('[checkpoints]\nenabled = true\nmax_file_bytes = "big"\n')
    notice = only(sandbox.load())
    assert f"{sandbox.user_file}, line 3: checkpoints.max_file_bytes: expected an integer" in notice
    assert "got 'big' (string)" in notice


def test_wrong_type_for_a_table(sandbox) -> None:
    sandbox.write_user('model = "gpt"\n')
    # The whole [model] table is the bad key: it may have meant the endpoint, so calls stop.
    assert "line 1: model: expected a table" in first_and_refused(sandbox.load())


def test_out_of_range_names_the_bound(sandbox) -> None:
    sandbox.write_user("[compaction]\nthreshold_fraction = 1.5\n")
    notice = only(sandbox.load())
    assert "line 2: compaction.threshold_fraction: expected a value less than 1" in notice
    assert "got 1.5 (number)" in notice


def test_bad_choice_lists_the_choices(sandbox) -> None:
    sandbox.write_user('[permissions]\nmode = "yolo"\n')
    notice = only(sandbox.load())
    assert (
        "permissions.mode: expected one of 'ask', 'read-only', 'auto-edit' or 'full-auto'" in notice
    )


def test_bad_list_item_names_its_index(sandbox) -> None:
    sandbox.write_user('[permissions]\nallow = [\n  "read(**)",\n  "Not A Rule",\n]\n')
    notice = only(sandbox.load())
    assert "line 2: permissions.allow[1]: expected a rule like" in notice


def test_a_bad_key_in_a_project_file_is_dropped_and_the_rest_applies(sandbox) -> None:
    sandbox.write_user('[model]\nname = "user-model"\n')
    sandbox.write_project("[budget]\nmax_turns = -3\nmax_tool_calls = 9\n")
    sandbox.trust()
    cfg = sandbox.load()
    notice = only(cfg)
    assert f"{sandbox.project_file}, line 2: budget.max_turns" in notice
    assert "dropped; the rest of the project config file applies" in notice
    assert cfg.settings.model.name == "user-model"
    assert cfg.settings.budget.max_tool_calls == 9 and cfg.settings.budget.max_turns == 50


def test_every_problem_of_a_layer_is_reported(sandbox) -> None:
    sandbox.write_user("[model]\nmax_retries = 99\n[ui]\ncoalesce_hz = 0\n")
    cfg = sandbox.load()
    assert len(cfg.notices) == 2
    assert any("line 2: model.max_retries" in n for n in cfg.notices)
    assert any("line 4: ui.coalesce_hz" in n for n in cfg.notices)


def test_a_bad_environment_variable_is_named(sandbox) -> None:
    cfg = sandbox.load(env={"LOGICIAN_BUDGET__MAX_TURNS": "lots", "LOGICIAN_UI__COALESCE_HZ": "5"})
    notice = only(cfg)
    assert notice.startswith("environment variable LOGICIAN_BUDGET__MAX_TURNS: budget.max_turns")
    assert "expected an integer" in notice and "the rest of the environment layer" in notice
    assert cfg.settings.ui.coalesce_hz == 5  # the other variable still applies


def test_an_unknown_environment_variable_suggests_the_right_name(sandbox) -> None:
    notice = only(sandbox.load(env={"LOGICIAN_MODEL__NMAE": "x"}))
    assert (
        "LOGICIAN_MODEL__NMAE: model.nmae: unknown key; did you mean LOGICIAN_MODEL__NAME?"
        in notice
    )


def test_a_single_underscore_lookalike_is_not_silently_ignored(sandbox) -> None:
    cfg = sandbox.load(env={"LOGICIAN_MODEL_NAME": "x", "LOGICIAN_CONFIG_DIR_EXTRA": "y"})
    notice = only(cfg)
    assert "LOGICIAN_MODEL_NAME is not a configuration variable" in notice
    assert "did you mean LOGICIAN_MODEL__NAME?" in notice


def test_environment_values_are_typed_for_their_field(sandbox) -> None:
    cfg = sandbox.load(
        env={
            "LOGICIAN_MODEL__NAME": "5",
            "LOGICIAN_BUDGET__MAX_TURNS": "5",
            "LOGICIAN_PERMISSIONS__MODE": "full-auto",
            "LOGICIAN_CHECKPOINTS__ENABLED": "false",
            "LOGICIAN_CHECKPOINTS__IGNORE": '["*.log", "tmp/**"]',
            "LOGICIAN_MODEL__TEMPERATURE": "0.5",
        }
    )
    s = cfg.settings
    assert cfg.notices == ()
    assert (s.model.name, s.budget.max_turns, s.permissions.mode) == ("5", 5, "full-auto")
    assert s.checkpoints.enabled is False and s.checkpoints.ignore == ("*.log", "tmp/**")
    assert s.model.temperature == 0.5


def test_a_bad_session_override_at_load_is_dropped_alone_with_a_notice(sandbox) -> None:
    cfg = sandbox.load(session={"budget.max_turns": 0, "model.name": "kept"})
    assert "session override: budget.max_turns" in only(cfg)
    assert cfg.settings.model.name == "kept" and cfg.settings.budget.max_turns == 50


def test_with_session_raises_naming_the_key(sandbox) -> None:
    cfg = sandbox.load()
    with pytest.raises(ConfigError, match=r"session override: ui\.coalesce_hz: expected a value"):
        cfg.with_session({"ui.coalesce_hz": 1000})
    with pytest.raises(
        ConfigError, match=r"ui\.colaesce_hz: unknown key; did you mean ui\.coalesce_hz\?"
    ):
        cfg.with_session({"ui.colaesce_hz": 3})


def test_get_and_set_refuse_unknown_keys_with_a_suggestion(sandbox) -> None:
    cfg = sandbox.load()
    with pytest.raises(ConfigError, match=r"did you mean budget\.max_turns\?"):
        config_get(cfg, "budget.max_turn")
    with pytest.raises(ConfigError, match=r"did you mean checkpoints\.ignore\?"):
        config_set(cfg, "checkpoints.ignroe", '["x"]')
    with pytest.raises(ConfigError, match="not a dotted key"):
        config_get(cfg, "model..name")


def test_set_explains_a_wrong_value(sandbox) -> None:
    cfg = sandbox.load()
    with pytest.raises(ConfigError, match=r"model\.max_retries: expected an integer, got 'many'"):
        config_set(cfg, "model.max_retries", "many")
    with pytest.raises(ConfigError, match=r"model\.base_url: expected a URL starting with http"):
        config_set(cfg, "model.base_url", "ftp://x")


def test_an_unreadable_file_is_reported(sandbox) -> None:
    sandbox.user_dir.mkdir()
    sandbox.user_file.mkdir()  # a directory where the file should be
    notice = first_and_refused(sandbox.load())
    assert str(sandbox.user_file) in notice and "cannot read" in notice


def test_a_file_that_is_not_utf8_is_reported(sandbox) -> None:
    sandbox.user_dir.mkdir()
    sandbox.user_file.write_bytes(b'[model]\nname = "\xff"\n')
    assert "not UTF-8" in first_and_refused(sandbox.load())


def test_a_table_missing_a_required_key_is_blamed_on_its_file(sandbox) -> None:
    sandbox.write_user('[model]\nname = "a"\n\n[budget.prices."gpt-4.1"]\ninput_per_mtok = 2.0\n')
    cfg = sandbox.load(session={"ui.coalesce_hz": 3})
    notice = only(cfg)
    assert notice.startswith(f"{sandbox.user_file}, line 4: ")
    assert 'budget.prices."gpt-4.1".output_per_mtok: required key missing' in notice
    assert cfg.settings.ui.coalesce_hz == 3  # the session layer is not blamed


def test_lines_are_found_for_dotted_and_inline_keys(sandbox) -> None:
    sandbox.write_user('model.name = "a"\nmodel.max_retries = -1\nui = { coalesce_hz = 0 }\n')
    cfg = sandbox.load()
    assert any("line 2: model.max_retries" in n for n in cfg.notices)
    assert any("line 3: ui.coalesce_hz" in n for n in cfg.notices)


def test_an_unreadable_project_file_is_reported_as_unreadable_never_as_untrusted(
    sandbox, monkeypatch
) -> None:
    # A team folder: another member's .logician/ that this user cannot read. The workspace is
    # not trusted either, but what the user must fix is the permission. (Refused by the read
    # itself: root, who runs the suite, reads files whatever their mode.)
    blocked = sandbox.write_project('[model]\nname = "theirs"\n')
    read_bytes = Path.read_bytes

    def refuse(path: Path) -> bytes:
        if path == blocked:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    cfg = sandbox.load()
    text = "\n".join(cfg.notices)
    assert str(blocked) in text and "cannot read: Permission denied" in text
    assert "not trusted" not in text and "NOT applied: the workspace" not in text
    assert cfg.settings.model.name != "theirs"
