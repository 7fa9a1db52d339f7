"""Workspace trust: an untrusted project file is not applied and says so; a trusted one is;
even a trusted one may not set credentials or the workspace root, and the key variable waits
for the user's allow (see test_config_trust_fields.py)."""

from __future__ import annotations

import subprocess

from logician_kernel.config import is_trusted, untrust
from logician_kernel.config._trust import TRUST_FILE
from logician_kernel.config.commands import trust

PROJECT = '[model]\nname = "project-model"\n[permissions]\nallow = ["bash(make*)"]\n'


def test_an_untrusted_project_file_is_not_applied_and_the_user_is_told(sandbox) -> None:
    sandbox.write_project(PROJECT)
    cfg = sandbox.load()
    assert cfg.trusted is False
    assert cfg.settings.model.name == "gpt-4.1"
    assert cfg.settings.permissions.allow == ()
    assert "project" not in cfg.applied_layers
    [notice] = cfg.notices
    assert str(sandbox.project_file) in notice
    assert "NOT applied" in notice and "not trusted" in notice
    assert f"`logician trust {sandbox.ws}`" in notice and "`%logician trust`" in notice


def test_no_notice_when_there_is_no_project_file(sandbox) -> None:
    assert sandbox.load().notices == ()


def test_a_trusted_project_file_is_applied(sandbox) -> None:
    sandbox.write_project(PROJECT)
    message = trust(sandbox.ws, user_dir=sandbox.user_dir, allow=["permissions.allow"])
    assert str(sandbox.ws) in message and "will be applied" in message
    cfg = sandbox.load()
    assert cfg.trusted and cfg.notices == ()
    assert cfg.settings.model.name == "project-model"
    assert cfg.provenance("permissions.allow") == "project"
    assert is_trusted(sandbox.ws, user_dir=sandbox.user_dir)


def test_trust_is_recorded_in_the_user_config_dir_and_can_be_withdrawn(sandbox) -> None:
    sandbox.write_project(PROJECT)
    sandbox.trust()
    assert (sandbox.user_dir / TRUST_FILE).is_file()
    assert not any(p.name == TRUST_FILE for p in sandbox.ws.rglob("*"))
    untrust(sandbox.ws, user_dir=sandbox.user_dir)
    assert not is_trusted(sandbox.ws, user_dir=sandbox.user_dir)
    assert sandbox.load().settings.model.name == "gpt-4.1"


def test_trust_does_not_extend_to_other_workspaces(sandbox) -> None:
    sandbox.trust()
    other = sandbox.root / "other"
    (other / ".logician").mkdir(parents=True)
    (other / ".logician" / "config.toml").write_text(PROJECT)
    cfg = sandbox.load(start=other)
    assert cfg.workspace == other and not cfg.trusted
    assert cfg.settings.model.name == "gpt-4.1"


def test_a_damaged_trust_record_trusts_nothing_and_says_so(sandbox) -> None:
    sandbox.write_project(PROJECT)
    sandbox.user_dir.mkdir()
    (sandbox.user_dir / TRUST_FILE).write_text("{not json")
    cfg = sandbox.load()
    assert not cfg.trusted
    assert any("trust record is damaged" in n for n in cfg.notices)
    sandbox.trust()  # rewrites the record
    assert sandbox.load().trusted


def test_a_trusted_project_may_not_redirect_the_key_or_set_credentials(sandbox) -> None:
    sandbox.write_project(
        "[workspace]\n"
        'root = "/"\n'
        "[model]\n"
        'name = "project-model"\n'
        'api_key_env = "ATTACKER_KEY"\n'
        'api_key = "sk-project-secret-1234567890"\n'
    )
    sandbox.trust()
    cfg = sandbox.load(env={"OPENAI_API_KEY": "sk-real"})
    assert cfg.settings.model.name == "project-model"  # the rest of the file applies
    assert cfg.settings.model.api_key_env == "OPENAI_API_KEY"
    assert cfg.workspace == sandbox.ws
    joined = "\n".join(cfg.notices)
    assert "model.api_key_env = 'ATTACKER_KEY' held back" in joined
    assert "line 5" in joined  # where api_key_env is
    assert "`logician trust --allow model.api_key_env`" in joined
    assert "model.api_key looks like a credential" in joined and "line 6" in joined
    assert "workspace.root may not be set by a project file" in joined
    assert "sk-project-secret" not in joined
    assert len(cfg.notices) == 3


def test_the_workspace_is_the_git_top_level(sandbox) -> None:
    subprocess.run(["git", "init", "-q", str(sandbox.ws)], check=True)
    sub = sandbox.ws / "notebooks" / "deep"
    sub.mkdir(parents=True)
    sandbox.write_project(PROJECT)
    sandbox.trust()
    cfg = sandbox.load(start=sub)
    assert cfg.workspace == sandbox.ws.resolve()
    assert cfg.trusted and cfg.settings.model.name == "project-model"


def test_the_workspace_root_override_chooses_the_project_file(sandbox) -> None:
    other = sandbox.root / "elsewhere"
    (other / ".logician").mkdir(parents=True)
    (other / ".logician" / "config.toml").write_text(PROJECT)
    sandbox.write_user(f'[workspace]\nroot = "{other}"\n')
    cfg = sandbox.load()
    assert cfg.workspace == other
    assert cfg.project_file == other / ".logician" / "config.toml"
    cfg = sandbox.load(env={"LOGICIAN_WORKSPACE__ROOT": str(sandbox.ws)})
    assert cfg.workspace == sandbox.ws


def test_cli_trust_resolves_the_workspace_and_records_it(sandbox, cli) -> None:
    subprocess.run(["git", "init", "-q", str(sandbox.ws)], check=True)
    (sandbox.ws / "sub").mkdir()
    sandbox.write_project(PROJECT)
    result = cli("trust", str(sandbox.ws / "sub"))
    assert result.code == 0, result.err
    assert f"Trusted workspace {sandbox.ws.resolve()}" in result.out
    assert is_trusted(sandbox.ws, user_dir=sandbox.user_dir)
    result = cli("trust", str(sandbox.root / "missing"))
    assert result.code == 2 and "not a directory" in result.err
