"""The schema: documented fields, declared merge rules and restart markers, the exported JSON
Schema, the example config, and the package's public surface."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pydantic
import pytest
import tomlkit

import logician_kernel.config as config
from logician_kernel.config import LogicianSettings, config_schema
from logician_kernel.config._atomic import patch_toml
from logician_kernel.config._example import render_example
from logician_kernel.config._keys import leaf_specs, lookup
from logician_kernel.config._schema import SCHEMA_FILE

EXAMPLE = Path(__file__).parents[3] / "examples" / "config.toml"


def test_exported_names_are_the_intended_surface() -> None:
    assert set(config.__all__) == {
        "BudgetSettings",
        "CheckpointSettings",
        "CompactionSettings",
        "ConfigError",
        "EffectiveConfig",
        "LayerName",
        "LogicianSettings",
        "McpServerSettings",
        "McpSettings",
        "ModelPrice",
        "ModelSettings",
        "PermissionSettings",
        "UiSettings",
        "WorkspaceSettings",
        "command_line_value",
        "config_get",
        "config_schema",
        "config_set",
        "config_show",
        "config_unset",
        "is_trusted",
        "load_effective_config",
        "masked_key",
        "parse_key",
        "save_profile",
        "store_key",
        "trust",
        "untrust",
        "user_config_dir",
    }
    for name in set(config.__all__) - {"LayerName"}:  # LayerName is a typing.Literal alias
        assert getattr(config, name).__module__.startswith("logician_kernel.config")


def test_the_core_never_imports_jupyter() -> None:
    code = (
        "import sys, logician_kernel.config, logician_kernel.config.cli, "
        "logician_kernel.config.commands\n"
        "bad = [m for m in ('IPython', 'ipykernel', 'ipywidgets', 'comm') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_sections_are_the_documented_ones() -> None:
    assert list(LogicianSettings.model_fields) == [
        "workspace",
        "checkpoints",
        "model",
        "permissions",
        "budget",
        "compaction",
        "tools",
        "agent",
        "ui",
        "hooks",
        "mcp",
        "profiles",
        "profile",
    ]


@pytest.mark.parametrize("spec", leaf_specs(), ids=lambda s: ".".join(s.path))
def test_every_field_has_a_docstring(spec) -> None:
    assert spec.description.strip(), f"{spec.path} has no docstring"


def test_every_list_declares_its_merge_rule_and_documents_it() -> None:
    lists = [s for s in leaf_specs() if "tuple" in str(s.annotation) or "list" in str(s.annotation)]
    assert {".".join(s.path) for s in lists} >= {"checkpoints.ignore", "permissions.allow"}
    for spec in lists:
        assert spec.merge in ("union", "replace"), spec.path
        assert f"Merge rule: {spec.merge}" in spec.description, spec.path


def test_restart_required_fields_are_marked_and_say_so() -> None:
    marked = {".".join(s.path) for s in leaf_specs() if s.restart_required}
    assert marked == {"workspace.root", "checkpoints.enabled", "checkpoints.change_detection"}
    for key in marked:
        spec = lookup(tuple(key.split(".")))
        assert spec is not None and "after a kernel restart" in spec.description


def test_settings_are_frozen_and_lists_immutable() -> None:
    settings = LogicianSettings()
    with pytest.raises(pydantic.ValidationError):
        settings.checkpoints.enabled = False  # type: ignore[misc]
    assert isinstance(settings.checkpoints.ignore, tuple)


def test_defaults() -> None:
    s = LogicianSettings()
    assert s.checkpoints.enabled is True
    assert s.checkpoints.max_file_bytes == 2 * 1024**3
    assert (s.checkpoints.large_file_bytes, s.checkpoints.max_store_bytes) == (4 * 1024**2, None)
    assert s.checkpoints.keep_recent_frames == 20
    assert s.checkpoints.ignore == ()
    assert s.workspace.root is None
    assert (s.model.provider, s.model.api_key_env) == ("openai", "OPENAI_API_KEY")
    assert s.permissions.mode == "ask"


def test_key_variable_and_model_follow_the_provider() -> None:
    m = LogicianSettings.model_validate({"model": {"provider": "anthropic"}}).model
    assert (m.api_key_env, m.name) == ("ANTHROPIC_API_KEY", "claude-sonnet-4-5")
    m = LogicianSettings.model_validate({"model": {"provider": "replay"}}).model
    assert m.api_key_env == ""


def test_schema_carries_descriptions_merge_rules_and_restart_markers() -> None:
    schema = json.loads(config_schema())
    assert schema["$schema"].endswith("2020-12/schema")
    checkpoints = schema["$defs"]["CheckpointSettings"]["properties"]
    assert checkpoints["ignore"]["merge"] == "union"
    assert checkpoints["enabled"]["restart_required"] is True
    assert checkpoints["max_file_bytes"]["description"]
    assert schema["$defs"]["UiSettings"]["properties"]["status_fields"]["merge"] == "replace"
    assert schema["$defs"]["ModelSettings"]["additionalProperties"] is False


def test_exported_schema_validates_the_example_config() -> None:
    schema = json.loads(config_schema())
    jsonschema.Draft202012Validator.check_schema(schema)
    example = tomlkit.parse(EXAMPLE.read_text(encoding="utf-8")).unwrap()
    jsonschema.Draft202012Validator(schema).validate(example)


def test_exported_schema_rejects_a_typo() -> None:
    schema = json.loads(config_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"model": {"nme": "x"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"budget": {"max_turns": 0}}, schema)


def test_example_config_is_rendered_from_the_schema() -> None:
    assert EXAMPLE.read_text(encoding="utf-8") == render_example(), (
        "examples/config.toml is stale: "
        "python -m logician_kernel.config._example > examples/config.toml"
    )


def test_the_shipped_schema_file_is_what_the_settings_generate() -> None:
    """Editors read the file; it must never drift from the model that validates."""
    assert SCHEMA_FILE.read_text(encoding="utf-8").rstrip("\n") == config_schema(), (
        "logician_kernel/resources/config.schema.json is stale: "
        "logician config schema > logician_kernel/resources/config.schema.json"
    )


def test_the_example_and_every_new_config_file_name_the_schema_on_their_first_line(
    tmp_path: Path,
) -> None:
    first = EXAMPLE.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("#:schema ")
    assert (EXAMPLE.parent / first.removeprefix("#:schema ")).resolve() == SCHEMA_FILE
    created = patch_toml(None, ("model", "name"), "gpt-4.1")
    directive = created.splitlines()[0]
    assert directive == f"#:schema {SCHEMA_FILE.as_uri()}"
    # ... and the directive leaves the file a valid config with the one key set.
    assert tomlkit.parse(created).unwrap() == {"model": {"name": "gpt-4.1"}}


def test_example_config_mentions_every_key() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    for spec in leaf_specs():
        if (
            spec.path[-1] == "*"
            and len(spec.path) > 1
            and spec.path[-2] in ("env", "headers", "extra_body")
        ):
            assert f"{spec.path[-2]} =" in text  # a scalar mapping's entries (`env = { ... }`)
        elif "*" in spec.path or len(spec.path) == 1:  # a mapping's entry, a top-level key
            assert f"{spec.path[-1]} =" in text
        else:
            assert f"{spec.path[-1]} =" in text and f"[{spec.path[0]}]" in text, spec.path


def test_example_config_loads_cleanly_as_a_user_file(sandbox) -> None:
    sandbox.write_user(EXAMPLE.read_text(encoding="utf-8"))
    cfg = sandbox.load()
    assert cfg.notices == ()
    assert cfg.provenance("budget.max_turns") == "user"
    assert cfg.settings.budget.prices["gpt-4.1"].output_per_mtok == 8.0
