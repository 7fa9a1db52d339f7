"""Where the user's cells run: with `ToolContext.cwd` in a subfolder, relative paths resolve
there and results name paths from there (`../x` above it), while capture and rewind keep the
workspace-relative name; a `cwd` outside the workspace falls back to the root."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

import pytest

from logician_kernel.policy._shell import plain_command
from logician_kernel.policy._target import call_target
from logician_kernel.tools import ToolContext, ToolError, default_tools, resolve_path


@pytest.fixture
def here(ws: Path) -> Path:
    sub = ws / "notebooks"
    sub.mkdir()
    (sub / "data.csv").write_text("day,units\n1,10\n")
    (ws / "top.txt").write_text("top\n")
    return sub


def run(ctx: ToolContext, tool: str, **args: object) -> str:
    result = asyncio.run(default_tools()[tool].run(dict(args), ctx))
    return result.content


def test_paths_resolve_and_read_from_the_current_directory(ctx, ws, here, recorder) -> None:
    c = dataclasses.replace(ctx, cwd=here)
    assert run(c, "write", path="out.txt", content="x") == "Created out.txt (1 bytes)."
    assert (here / "out.txt").read_text() == "x" and not (ws / "out.txt").exists()
    assert recorder.calls[-1][0] == "notebooks/out.txt"  # captured by its workspace path
    assert "day,units" in run(c, "read", path="data.csv")
    assert "top" in run(c, "read", path="../top.txt")
    assert run(c, "ls").split() == ["data.csv", "out.txt"]
    assert run(c, "glob", pattern="*.csv") == "data.csv"
    assert run(c, "grep", pattern="top", path="..").splitlines()[0] == "../top.txt:1: top"
    assert run(c, "bash", command="pwd").splitlines()[0] == str(here.resolve())
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path(c, "../../escape.txt", for_write=True)


def test_a_current_directory_outside_the_workspace_means_the_root(ctx, ws, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    c = dataclasses.replace(ctx, cwd=elsewhere)
    assert resolve_path(c, "a.txt", for_write=True) == ws.resolve() / "a.txt"


def test_the_policy_reads_paths_where_the_tools_resolve_them(ws, here, tmp_path) -> None:
    root, sub = ws.resolve(), here.resolve()
    target = call_target("write", {"path": "out.txt"}, root, cwd=sub)
    assert target.paths[0][0] == "notebooks/out.txt" and not target.outside
    assert call_target("read", {"path": "../../x"}, root, cwd=sub).outside == ("../../x",)
    # A name that is harmless at the root but a link out of the workspace from here.
    secret = tmp_path / "secret"
    secret.mkdir()
    os.symlink(secret, here / "link")
    (ws / "link").mkdir()
    assert plain_command("cat link/a", root).problem is None
    assert "outside the workspace" in (plain_command("cat link/a", root, cwd=sub).problem or "")
