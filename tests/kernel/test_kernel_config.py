"""Configuration as a notebook user meets it: through the real kernel's `%logician config`."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


@pytest.fixture
def user_dir(kernel_env: dict[str, str]) -> Path:
    path = Path(kernel_env["LOGICIAN_CONFIG_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_a_broken_user_file_is_shown_in_the_first_cell_and_the_kernel_still_works(
    workspace: Path, kernel_env: dict[str, str], user_dir: Path
) -> None:
    (user_dir / "config.toml").write_text("[budget]\nmax_turns = 5\n[model\nname = 'x'\n")
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run("print('cell ran')")
        assert r.status == "ok" and "cell ran" in r.stdout
        assert str(user_dir / "config.toml") in r.stderr and "line 3" in r.stderr
        assert "left out" in r.stderr
        assert "cell ran" in k.run("print('cell ran')").stdout
        assert k.run("print(1)").stderr == ""  # shown once, not on every cell
        shown = k.run("%logician config get budget.max_turns").text
        assert "# default" in shown  # the broken layer contributed nothing
    finally:
        k.shutdown()


def test_untrusted_project_file_is_announced_and_applies_after_trust(
    workspace: Path, kernel_env: dict[str, str], user_dir: Path
) -> None:
    (workspace / ".logician").mkdir()
    (workspace / ".logician" / "config.toml").write_text('[model]\nname = "project-model"\n')
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run("x = 1")
        assert "NOT applied" in r.stderr and "%logician trust" in r.stderr
        assert str(workspace / ".logician" / "config.toml") in r.stderr
        assert '"project-model"' not in k.run("%logician config get model.name").text
        r = k.run("%logician trust")
        assert r.status == "ok", r.text
        shown = k.run("%logician config get model.name").text
        assert '"project-model"' in shown and "project" in shown
    finally:
        k.shutdown()


def test_set_changes_the_session_only_and_persist_writes_one_field(
    workspace: Path, kernel_env: dict[str, str], user_dir: Path
) -> None:
    original = "# my settings\n[budget]\nmax_turns = 5  # keep it short\n"
    (user_dir / "config.toml").write_text(original)
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run("%logician config set budget.max_tool_calls 12")
        assert r.status == "ok", r.text
        shown = k.run("%logician config get budget.max_tool_calls").text
        assert "12" in shown and "session" in shown
        assert (user_dir / "config.toml").read_text() == original
        r = k.run("%logician config set budget.max_cost_usd 0.5 --persist user")
        assert r.status == "ok", r.text
        assert (user_dir / "config.toml").read_text() == original + "max_cost_usd = 0.5\n"
        r = k.run("%logician config set budget.max_turns -3")
        assert r.status == "error" and "budget.max_turns" in r.text
        assert "max_turns = 5  # keep it short" in (user_dir / "config.toml").read_text()
        r = k.run("%logician config set budget.max_turnz 3")
        assert r.status == "error" and "max_turns" in r.text  # the closest known key
    finally:
        k.shutdown()


def test_capture_limit_set_in_the_session_applies_to_the_next_cell(
    kernel_env: dict[str, str], workspace: Path
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        k.run("%logician config set checkpoints.max_file_bytes 1000")
        r = k.run("open('medium.txt', 'w').write('m' * 5000)")
        assert "not captured" in r.stderr
        assert "larger than" in k.run("%logician diff --last").text
    finally:
        k.shutdown()


def test_api_keys_never_reach_output_ledger_or_config_files(
    workspace: Path, kernel_env: dict[str, str], user_dir: Path
) -> None:
    secret = "sk-test-DO-NOT-LEAK-1234567890"
    env = {**kernel_env, "OPENAI_API_KEY": secret, "LOGICIAN_MODEL__API_KEY_ENV": "OPENAI_API_KEY"}
    k = Kernel(workspace, env)
    try:
        outputs = [
            k.run(c).text
            for c in (
                "%logician config",
                "%logician config show --json",
                "%logician config get model.api_key_env",
                "x = 1",
            )
        ]
        r = k.run("%logician config set model.api_key sk-other --persist user")
        assert r.status == "error"
        outputs.append(r.text)
    finally:
        k.shutdown()
    assert all(secret not in text for text in outputs)
    for path in [*(workspace / ".logician").rglob("*"), *user_dir.rglob("*")]:
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
            assert b"sk-other" not in path.read_bytes(), path


def test_a_cell_that_holds_a_key_does_not_put_it_in_the_ledger(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    secret = "configured-key-value-987654"
    env = {**kernel_env, "OPENAI_API_KEY": secret}
    k = Kernel(workspace, env)
    try:
        k.run(f"key = '{secret}'; open('a.txt', 'w').write('a')")
        k.run("token = 'sk-proj-abcdefghijklmnopqrstuv'; open('b.txt', 'w').write('b')")
        listing = k.run("%logician frames").text
    finally:
        k.shutdown()
    ledger = (workspace / ".logician" / "threads" / "test-thread.jsonl").read_text()
    assert secret not in ledger and "sk-proj-abcdefghijklmnopqrstuv" not in ledger
    assert secret not in listing and "key = '****'" in listing
