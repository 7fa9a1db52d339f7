"""Fixtures for the configuration tests: a sandbox with its own user config dir and a
workspace outside any git repository, and a harness for the `logician config` subcommands."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.config import EffectiveConfig, load_effective_config
from logician_kernel.config.cli import add_config_subcommands
from logician_kernel.config.commands import trust


@dataclass
class Sandbox:
    root: Path
    user_dir: Path
    ws: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def user_file(self) -> Path:
        return self.user_dir / "config.toml"

    @property
    def project_file(self) -> Path:
        return self.ws / ".logician" / "config.toml"

    def write_user(self, text: str) -> Path:
        self.user_file.parent.mkdir(parents=True, exist_ok=True)
        self.user_file.write_text(text, encoding="utf-8")
        return self.user_file

    def write_project(self, text: str) -> Path:
        self.project_file.parent.mkdir(parents=True, exist_ok=True)
        self.project_file.write_text(text, encoding="utf-8")
        return self.project_file

    def trust(self) -> str:
        return trust(self.ws, user_dir=self.user_dir)

    def load(
        self,
        *,
        env: Mapping[str, str] | None = None,
        session: Mapping[str, Any] | None = None,
        start: Path | None = None,
    ) -> EffectiveConfig:
        return load_effective_config(
            start or self.ws, env={**self.env, **(env or {})}, session=session
        )


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    # git must not find a repository above the sandbox (tmp may live inside one).
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    user_dir = tmp_path / "user-config"
    ws = tmp_path / "ws"
    ws.mkdir()
    return Sandbox(tmp_path, user_dir, ws, {"LOGICIAN_CONFIG_DIR": str(user_dir)})


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Any:
    """Run `logician <argv>` through `add_config_subcommands`, in the sandbox's workspace."""
    monkeypatch.chdir(sandbox.ws)
    for name in list(__import__("os").environ):
        if name.startswith("LOGICIAN_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LOGICIAN_CONFIG_DIR", str(sandbox.user_dir))

    def run(*argv: str) -> CliResult:
        parser = argparse.ArgumentParser(prog="logician")
        add_config_subcommands(parser.add_subparsers(dest="command", required=True))
        capsys.readouterr()
        args = parser.parse_args(list(argv))
        code = args.func(args)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
