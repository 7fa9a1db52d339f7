"""Profiles through the `logician` command, real processes: `config show` names the profile
layer and the file defining it, precedence against the project file and the environment,
`config set profile NAME` persists the selection, an unknown profile is refused by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_harness import clean_env

pytestmark = pytest.mark.kernel
LOGICIAN = str(Path(sys.executable).parent / "logician")


def logician(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LOGICIAN, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_profiles_through_the_cli(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    user = cfg / "config.toml"
    user.write_text(
        "[profiles.cheap]\n"
        'model = { name = "cheap-model" }\n'
        "budget = { max_cost_usd = 0.2, max_turns = 9 }\n"
    )
    ws = tmp_path / "ws"
    (ws / ".logician").mkdir(parents=True)
    (ws / ".logician" / "config.toml").write_text(
        '[model]\nname = "proj"\n[budget]\nmax_turns = 4\n'
    )
    env = clean_env(LOGICIAN_CONFIG_DIR=str(cfg), GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert logician("trust", str(ws), cwd=tmp_path, env=env).returncode == 0

    r = logician("config", "show", cwd=ws, env={**env, "LOGICIAN_PROFILE": "cheap"})
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.strip().startswith("profile "))
    assert f"cheap, defined in {user}; selected by environment variable LOGICIAN_PROFILE" in row
    shown = json.loads(
        logician(
            "config",
            "show",
            "--json",
            cwd=ws,
            env={**env, "LOGICIAN_PROFILE": "cheap", "LOGICIAN_BUDGET__MAX_TURNS": "2"},
        ).stdout
    )["settings"]
    # the profile outranks the project file; the environment outranks the profile
    assert shown["model.name"] == {
        "value": "cheap-model",
        "layer": "profile",
        "restart_required": False,
    }
    assert (shown["budget.max_turns"]["value"], shown["budget.max_turns"]["layer"]) == (2, "env")
    assert shown["budget.max_cost_usd"]["layer"] == "profile"

    r = logician("config", "set", "profile", "chepa", cwd=ws, env=env)
    assert r.returncode != 0
    assert "unknown profile 'chepa'; the known profiles are: cheap" in r.stderr
    assert "profile" not in user.read_text().split("[profiles.cheap]")[0]  # nothing written

    r = logician("config", "set", "profile", "cheap", cwd=ws, env=env)
    assert r.returncode == 0, r.stderr
    assert user.read_text().startswith('profile = "cheap"\n')
    r = logician("config", "get", "model.name", cwd=ws, env=env)
    assert '"cheap-model"' in r.stdout and "# profile" in r.stdout
    r = logician("config", "show", cwd=ws, env=env)
    assert f"selected by {user}, line 1" in r.stdout
