"""Fixtures for the tool tests: a plain workspace directory and a context whose `capture`
records what it saw at the moment it was called."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.tools import ToolContext, ToolResult, default_tools


class Recorder:
    """A capture callback that notes each path and its content at the time of the call."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.calls: list[tuple[str, bytes | None]] = []

    def __call__(self, path: str) -> None:
        full = self.workspace / path
        self.calls.append((path, full.read_bytes() if full.is_file() else None))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def recorder(ws: Path) -> Recorder:
    return Recorder(ws)


@pytest.fixture
def ctx(ws: Path, recorder: Recorder) -> ToolContext:
    return ToolContext(workspace=ws, capture=recorder)


@pytest.fixture
def call(ctx: ToolContext):
    """`call("read", path="a.txt")` runs one tool to completion on the test's context."""
    tools = default_tools()

    def run(name: str, context: ToolContext | None = None, **arguments: Any) -> ToolResult:
        return asyncio.run(tools[name].run(arguments, context or ctx))

    return run
