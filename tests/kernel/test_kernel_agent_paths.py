"""The agent's paths resolve where the user's cells run: the same agent cell, from a notebook in
a subfolder of a git repository and from a folder outside git, writes, reads, lists and runs
bash where `open()` and `!ls` in that notebook do, while the workspace still bounds what is
allowed, captured and rewound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kernel_harness import Kernel, git
from loopback import LoopbackServer, text_reply
from test_kernel_agent import messages_sent, tool_reply

pytestmark = pytest.mark.kernel

CELL = "%%logician\nWrite out.txt, read data.csv, list here, count the files with bash."


def _script(server: LoopbackServer, outside: str) -> None:
    server.script(
        tool_reply("c1", "write", {"path": "out.txt", "content": "from the agent\n"}),
        tool_reply("c2", "read", {"path": "data.csv"}),
        tool_reply("c3", "ls", {}),
        tool_reply("c4", "bash", {"command": "pwd && ls"}),
        tool_reply("c5", "read", {"path": outside}),
        text_reply("Done."),
    )


def _tool_results(server: LoopbackServer) -> list[str]:
    return [m["content"] for m in messages_sent(server) if m["role"] == "tool"]


def _run_the_cell(
    here: Path, workspace: Path, env: dict[str, str], server: LoopbackServer
) -> list[str]:
    (here / "data.csv").write_text("day,units\n1,10\n")
    (workspace.parent / "outside.txt").write_text("not yours\n")
    _script(server, os.path.relpath(workspace.parent / "outside.txt", here))
    k = Kernel(here, env)
    try:
        r = k.run(CELL)
        assert r.status == "ok", r.text
        assert (here / "out.txt").read_text() == "from the agent\n"
        assert not (workspace / "out.txt").exists() or here == workspace
        diff = k.run("%logician diff --last").text
        rel = (here / "out.txt").relative_to(workspace).as_posix()
        assert f"created      {rel}" in diff or f"created {rel}" in " ".join(diff.split()), diff
        assert k.run("%logician rewind --last").status == "ok"
        assert not (here / "out.txt").exists()  # captured and rewound under its workspace path
    finally:
        k.shutdown()
    return _tool_results(server)


def test_a_notebook_in_a_subfolder_of_a_git_repository(
    tmp_path: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    repo = tmp_path / "repo"
    here = repo / "analysis" / "week1"
    here.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("top\n")
    results = _run_the_cell(here, repo, agent_env, server)
    wrote, read, listed, ran, outside = results
    assert "out.txt" in wrote and "analysis/" not in wrote  # named as the user names it
    assert "day,units" in read
    assert listed.split() == ["data.csv", "out.txt"]
    assert str(here) in ran and "data.csv" in ran
    assert "outside the workspace" in outside  # `..` reaches the workspace, never past it
    system = messages_sent(server, 0)[0]["content"]
    assert "Current directory: `analysis/week1/`" in system


def test_a_notebook_outside_git_is_its_own_workspace(
    tmp_path: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    here = tmp_path / "plain" / "folder"
    here.mkdir(parents=True)
    results = _run_the_cell(here, here, agent_env, server)
    wrote, read, listed, ran, outside = results
    assert "Created out.txt" in wrote
    assert [n for n in listed.split() if n != ".logician/"] == ["data.csv", "out.txt"]
    assert str(here) in ran
    assert "outside the workspace" in outside
    assert "Current directory" not in messages_sent(server, 0)[0]["content"]
