"""Paths resolve against the workspace and may not leave it: `../`, absolute paths and
symlinks pointing outside are refused, as are writes into `.logician/` and `.git/`."""

from __future__ import annotations

from pathlib import Path

import pytest

from logician_kernel.tools import ToolContext, ToolError, resolve_path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("do not read\n")
    return secret


def test_relative_and_inner_absolute_paths_resolve(ctx: ToolContext, ws: Path):
    root = ws.resolve()
    assert resolve_path(ctx, "a/b.txt", for_write=True) == root / "a" / "b.txt"
    assert resolve_path(ctx, str(root / "c.txt"), for_write=False) == root / "c.txt"
    assert resolve_path(ctx, "a/../d.txt", for_write=True) == root / "d.txt"
    assert resolve_path(ctx, ".", for_write=False) == root


def test_escapes_are_refused_with_a_clear_message(ctx: ToolContext, ws: Path, outside: Path):
    root = ws.resolve()
    with pytest.raises(ToolError) as err:
        resolve_path(ctx, "../x", for_write=True)
    assert str(err.value) == (
        f"write: path ../x is outside the workspace {root}; only workspace files may be written"
    )
    with pytest.raises(ToolError, match="^read: path .* is outside the workspace"):
        resolve_path(ctx, str(outside / "secret.txt"), for_write=False)
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_path(ctx, "/etc/passwd", for_write=False)


def test_symlinks_pointing_outside_are_refused(ctx: ToolContext, ws: Path, outside: Path):
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside)
    for path in ("link.txt", "linkdir/secret.txt", "linkdir/new.txt"):
        for for_write in (False, True):
            with pytest.raises(ToolError, match="outside the workspace"):
                resolve_path(ctx, path, for_write=for_write)


def test_kernel_state_and_git_are_never_written(ctx: ToolContext, ws: Path):
    (ws / ".git").mkdir()
    for path in (".logician/threads/t.jsonl", ".git/config", "./.git/HEAD"):
        with pytest.raises(ToolError, match="tools may not write there"):
            resolve_path(ctx, path, for_write=True)
        resolve_path(ctx, path, for_write=False)  # reading them is fine
    (ws / "sneaky").symlink_to(".git")
    with pytest.raises(ToolError, match=r"under \.git/"):
        resolve_path(ctx, "sneaky/config", for_write=True)
    with pytest.raises(ToolError, match="workspace itself"):
        resolve_path(ctx, ".", for_write=True)
    with pytest.raises(ToolError, match="path is empty"):
        resolve_path(ctx, " ", for_write=False)


def test_tools_refuse_escapes_and_write_nothing(call, ws: Path, outside: Path, recorder):
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside)
    target = outside / "new.txt"
    refusals = [
        call("read", path="../outside/secret.txt"),
        call("read", path="link.txt"),
        call("write", path=str(target), content="x"),
        call("write", path="linkdir/new.txt", content="x"),
        call("edit", path="link.txt", old_string="do", new_string="did"),
        call("write", path=".logician/config.toml", content="x"),
        call("ls", path=".."),
        call("grep", pattern="read", path=".."),
        call("glob", pattern="../outside/*"),
        call("glob", pattern=str(outside / "*")),
    ]
    for result in refusals:
        assert result.is_error, result
        assert (
            "outside the workspace" in result.content
            or "may not write" in result.content
            or ("must be relative" in result.content)
        )
    assert not target.exists()
    assert (outside / "secret.txt").read_text() == "do not read\n"
    assert not (ws / ".logician").exists()
    assert recorder.calls == []


def test_exploration_does_not_follow_links_out(call, ws: Path, outside: Path):
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside)
    (ws / "mine.txt").write_text("do not read me either\n")
    grep = call("grep", pattern="do not")
    assert grep.content == "mine.txt:1: do not read me either"
    glob = call("glob", pattern="*/*.txt")
    assert glob.content == "No paths match */*.txt"
    assert "link.txt" not in call("glob", pattern="*.txt").content
