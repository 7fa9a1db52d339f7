"""A shipped `.logician/` is data, never configuration (issue 27, finding 1).

The attacker ships a workspace (a repository that committed `.logician/`, an archive, a shared
volume) whose private store `.logician/git` carries every git setting that runs a program: the
store's `config` (fsmonitor, hooksPath, pager, editor, sshCommand, diff.external, a filter
driver named by the workspace's `.gitattributes`, an `[include]` and an `[includeIf]`), a hook
in the store's own `hooks/`, a `commondir` that would make git read a second config, and the
user's global git config (the user's own, but not ours to run). The person who opens it runs
ordinary cells: a print, a cell that writes files, a rewind. No marker may ever appear, and
frames must keep working.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from kernel_harness import Kernel, make_kernel_env

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

MARKERS = (
    "fsmonitor",
    "hookspath",
    "hook",
    "pager",
    "editor",
    "sshcommand",
    "askpass",
    "diff-external",
    "filter-clean",
    "filter-smudge",
    "filter-process",
    "include",
    "includeif",
    "commondir",
    "worktree-config",
    "global",
)


def _touch(marker_dir: Path, name: str) -> str:
    return f"touch {marker_dir / name}"


def _plant_store(ws: Path, markers: Path) -> None:
    """A `.logician/git` as a hostile workspace would ship it: a real store, hostile settings."""
    store = ws / ".logician" / "git"
    store.parent.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    hooks = markers / "hooks"
    hooks.mkdir()
    for where, name in ((hooks, "hookspath"), (store / "hooks", "hook")):
        for hook in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
            (where / hook).write_text(f"#!/bin/sh\n{_touch(markers, name)}\n")
            (where / hook).chmod(0o755)
    (markers / "included.cfg").write_text(f"[core]\n\tfsmonitor = {_touch(markers, 'include')}\n")
    (markers / "includeif.cfg").write_text(
        f"[core]\n\tfsmonitor = {_touch(markers, 'includeif')}\n"
    )
    # A second config git would read if the store named a common directory.
    common = markers / "common"
    subprocess.run(["git", "init", "-q", "--bare", str(common)], check=True)
    (common / "config").write_text(
        f"[core]\n\trepositoryformatversion = 0\n\tfsmonitor = {_touch(markers, 'commondir')}\n"
    )
    (store / "config.worktree").write_text(
        f"[core]\n\tfsmonitor = {_touch(markers, 'worktree-config')}\n"
    )
    (store / "config").write_text(
        "[core]\n"
        "\trepositoryformatversion = 0\n"
        "\tbare = false\n"
        f"\tfsmonitor = {_touch(markers, 'fsmonitor')}\n"
        f"\thooksPath = {hooks}\n"
        f"\tpager = {_touch(markers, 'pager')}\n"
        f"\teditor = {_touch(markers, 'editor')}\n"
        f"\tsshCommand = {_touch(markers, 'sshcommand')}\n"
        f"\taskPass = {_touch(markers, 'askpass')}\n"
        "[extensions]\n"
        "\tworktreeConfig = true\n"
        "[diff]\n"
        f"\texternal = {_touch(markers, 'diff-external')}\n"
        '[filter "x"]\n'
        f"\tclean = sh -c '{_touch(markers, 'filter-clean')}; cat'\n"
        f"\tsmudge = sh -c '{_touch(markers, 'filter-smudge')}; cat'\n"
        f"\tprocess = {_touch(markers, 'filter-process')}\n"
        "[include]\n"
        f"\tpath = {markers / 'included.cfg'}\n"
        '[includeIf "gitdir:/"]\n'
        f"\tpath = {markers / 'includeif.cfg'}\n"
    )
    (ws / ".gitattributes").write_text("* filter=x\n")


def _fired(markers: Path) -> list[str]:
    return sorted(name for name in MARKERS if (markers / name).exists())


def test_shipped_store_config_runs_nothing_and_frames_still_work(tmp_path: Path) -> None:
    ws, markers = tmp_path / "shipped", tmp_path / "markers"
    ws.mkdir()
    markers.mkdir()
    (ws / "data.txt").write_text("original\n")
    _plant_store(ws, markers)
    env = make_kernel_env(tmp_path)
    # The user's own global config, too: the store never reads it (GIT_CONFIG_GLOBAL names
    # the file git would read, as a user's ~/.gitconfig).
    (markers / "global.cfg").write_text(f"[core]\n\tfsmonitor = {_touch(markers, 'global')}\n")
    env["GIT_CONFIG_GLOBAL"] = str(markers / "global.cfg")
    k = Kernel(ws, env)
    try:
        r = k.run("print('hello')")
        assert r.status == "ok" and "hello" in r.stdout, r.text
        r = k.run("open('data.txt', 'w').write('changed\\n')\nopen('new.txt', 'w').write('new')")
        assert r.status == "ok", r.text
        r = k.run("%logician rewind 2")
        assert _fired(markers) == []
        assert r.status == "ok" and "Rewound" in r.text, r.text
        assert (ws / "data.txt").read_text() == "original\n"
        assert not (ws / "new.txt").exists()
    finally:
        k.shutdown()
    assert _fired(markers) == []
    # The store's config is ours again, and nothing in it names a program.
    config = (ws / ".logician" / "git" / "config").read_text()
    for word in ("include", "fsmonitor = touch", "filter", "external", "sshCommand", "pager"):
        assert word not in config, config


def test_commondir_and_gitfile_stores_are_not_followed(tmp_path: Path) -> None:
    """A store that points git elsewhere (`commondir`, or `.logician/git` as a `gitdir:` file
    or a symlink) would make git read that place's config: refused or removed, never followed."""
    ws, markers = tmp_path / "pointed", tmp_path / "markers"
    ws.mkdir()
    markers.mkdir()
    _plant_store(ws, markers)
    (ws / ".logician" / "git" / "commondir").write_text(str(markers / "common") + "\n")
    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        r = k.run("open('f.txt', 'w').write('1')")
        assert r.status == "ok", r.text
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and not (ws / "f.txt").exists(), r.text
    finally:
        k.shutdown()
    assert _fired(markers) == []
    assert not (ws / ".logician" / "git" / "commondir").exists()


@pytest.mark.parametrize("kind", ["gitfile", "symlink"])
def test_store_that_is_not_a_directory_is_refused(tmp_path: Path, kind: str) -> None:
    ws, markers = tmp_path / "redirect", tmp_path / "markers"
    ws.mkdir()
    markers.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _plant_store(elsewhere, markers)
    (ws / ".logician").mkdir(mode=0o700)
    if kind == "gitfile":
        (ws / ".logician" / "git").write_text(f"gitdir: {elsewhere / '.logician' / 'git'}\n")
    else:
        os.symlink(elsewhere / ".logician" / "git", ws / ".logician" / "git")
    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        r = k.run("open('f.txt', 'w').write('1')")
        assert r.status == "ok", r.text
        assert "frames are off" in r.stderr and ".logician/git" in r.stderr, r.text
        assert "symlink" in r.stderr or "not a directory" in r.stderr, r.stderr
        assert k.run("print(2)").stderr == ""  # said once
    finally:
        k.shutdown()
    assert _fired(markers) == []


def test_store_swapped_mid_session_is_never_run(tmp_path: Path) -> None:
    """A store put in place of the checked one while the kernel runs (here by a cell, as
    another program would) is not used: git never runs on it until a restart checks it."""
    ws, markers = tmp_path / "swapped", tmp_path / "markers"
    ws.mkdir()
    markers.mkdir()
    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        assert k.run("open('a.txt', 'w').write('1')").status == "ok"
        swap = (
            "import os, shutil, subprocess\n"
            f"shutil.move('.logician/git', {str(tmp_path / 'old-store')!r})\n"
            "subprocess.run(['git', 'init', '-q', '--bare', '.logician/git'], check=True)\n"
            "open('.logician/git/config', 'a').write("
            f"'[core]\\n\\tfsmonitor = {_touch(markers, 'fsmonitor')}\\n')\n"
            "open('.logician/git/hooks/post-index-change', 'w').write("
            f"'#!/bin/sh\\n{_touch(markers, 'hook')}\\n')\n"
            "os.chmod('.logician/git/hooks/post-index-change', 0o755)\n"
        )
        assert k.run(swap).status == "ok"
        r = k.run("open('b.txt', 'w').write('2')")
        assert r.status == "ok", r.text
        assert "was replaced" in r.text, r.text
        assert k.run("print(1)").status == "ok"
        assert _fired(markers) == []
    finally:
        k.shutdown()
    assert _fired(markers) == []
