"""The masker masks secrets, not paths: which names hold credentials (a curated list, tested
both ways), and which values may be masked into other text (never a short one, never a path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logician_kernel.durable.redact import (
    environment_secrets,
    is_credential_name,
    is_maskable_value,
    mask_values,
    redact,
    redact_data,
)

NOT_CREDENTIALS = (
    "PWD",
    "OLDPWD",
    "HOME",
    "SSH_AUTH_SOCK",
    "GPG_KEY",
    "GPG_KEY_ID",
    "AUTH_DOMAIN",
    "HF_HUB_DISABLE_TOKEN",
    "TRANSFORMERS_NO_TOKEN",
    "USE_AUTH_TOKEN",
    "TOKENIZERS_PARALLELISM",
    "KEY_PATH",
    "SSH_KEY_PATH",
    "PASSWORD_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS_PATH",
    "TOKEN_URL",
    "AWS_ACCESS_KEY_ID",
    "SSH_PUBLIC_KEY",
    "publicKey",
    "max_input_tokens",
    "KEYBOARD",
    "monkey",
    "XAUTHORITY",
    "api_key_env",
    "TOKEN_TYPE",
    "LANG",
    "PATH",
)
CREDENTIALS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "HF_TOKEN",
    "DB_PASSWORD",
    "POSTGRES_PASSWORD",
    "MYSQL_PWD",
    "SMTP_PASS",
    "AWS_SESSION_TOKEN",
    "NPM_TOKEN",
    "SLACK_BOT_TOKEN",
    "STRIPE_SECRET_KEY",
    "CLIENT_SECRET",
    "DEPLOY_KEY",
    "BASIC_AUTH",
    "authToken",
    "apiKey",
    "password",
    "passphrase",
    "SECRET_KEY_BASE",
    "GOOGLE_APPLICATION_CREDENTIALS",
)


@pytest.mark.parametrize("name", NOT_CREDENTIALS)
def test_names_that_hold_no_credential_are_not_judged_secret(name: str) -> None:
    assert not is_credential_name(name)


@pytest.mark.parametrize("name", CREDENTIALS)
def test_credential_names_are_judged_secret(name: str) -> None:
    assert is_credential_name(name)


def test_the_launch_folder_is_never_masked_in_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack report's case: `PWD`, and paths held in credential-looking variables, turned
    `/home/me/project/data.csv` into `****/project/data.csv` for the model, hooks and audit."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.setenv("OLDPWD", str(tmp_path))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path))  # a path, in a secret name
    monkeypatch.setenv("DEPLOY_TOKEN", str(project / "not-yet-written.txt"))  # under the workspace
    monkeypatch.setenv("GPG_KEY", "A035C8C19219BA821ECEA86B64E628F8D684696D")
    monkeypatch.setenv("AUTH_DOMAIN", "corp.example.com")
    monkeypatch.setenv("HF_HUB_DISABLE_TOKEN", "1")
    text = f"read {project}/data.csv with key A035C8C19219BA821ECEA86B64E628F8D684696D"
    assert mask_values(text) == text
    assert redact(text) == text
    assert redact(f"GOOGLE_APPLICATION_CREDENTIALS={tmp_path}") == (
        f"GOOGLE_APPLICATION_CREDENTIALS={tmp_path}"
    )


def test_real_secrets_in_the_environment_are_still_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plain-looking-openai-value")
    monkeypatch.setenv("HF_TOKEN", "hf-plain-looking-value")
    monkeypatch.setenv("MYSQL_PWD", "mysql-plain-value")
    monkeypatch.setenv("DATABASE_URL", "postgres://app:correct-horse-battery@db:5432/app")
    text = (
        "a plain-looking-openai-value b hf-plain-looking-value c mysql-plain-value "
        "d correct-horse-battery"
    )
    assert mask_values(text) == "a **** b **** c **** d ****"
    assert "correct-horse-battery" in environment_secrets()


def test_short_values_are_never_masked_into_other_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_PASSWORD", "hunter2")  # 7 characters: would mask every "hunter2"
    monkeypatch.setenv("APP_TOKEN", "1")
    assert mask_values("hunter2 wrote 1 file") == "hunter2 wrote 1 file"
    assert not is_maskable_value("hunter2")
    assert mask_values("the key abcdefgh", ["abcdefgh"]) == "the key ****"
    # A credential-named assignment is still masked, whatever its length.
    assert redact("DB_PASSWORD=hunter2") == "DB_PASSWORD=****"


def test_a_caller_secret_that_is_a_path_is_not_masked_into_paths(tmp_path: Path) -> None:
    assert mask_values(f"{tmp_path}/x", [str(tmp_path)]) == f"{tmp_path}/x"
    assert not is_maskable_value(os.getcwd())


def test_structured_records_keep_paths_and_mask_secrets() -> None:
    data = {
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "AUTH_DOMAIN": "corp.example.com",
        "HF_TOKEN": "hf_abcdefghijklmnop",
        "headers": {"Authorization": "Bearer abcdefghijk"},
    }
    assert redact_data(data) == {
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "AUTH_DOMAIN": "corp.example.com",
        "HF_TOKEN": "****",
        "headers": {"Authorization": "Bearer ****"},
    }
