"""The ownership rules of state_trust.py and the store rewrite of store_config.py, on real
directories (the kernel-level attacks are in tests/security/test_security_store_*.py)."""

from __future__ import annotations

import grp
import os
import pwd
import subprocess
from pathlib import Path

import pytest

from logician_kernel.snapshots.state_trust import (
    UntrustedStateError,
    check_state_dir,
    check_store,
)
from logician_kernel.snapshots.store_config import (
    ATTRIBUTES,
    CONFIG_TEMPLATE,
    isolated_env,
    sanitize_store,
)


def _state(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / ".logician" / "threads").mkdir(parents=True, mode=0o700)
    (ws / ".logician").chmod(0o700)
    return ws, ws / ".logician"


def test_own_private_state_passes_and_missing_state_is_not_an_error(tmp_path: Path) -> None:
    ws, state = _state(tmp_path)
    check_state_dir(ws, state)
    check_state_dir(ws, ws / "absent")


@pytest.mark.parametrize("where", ["state", "entry"])
def test_world_writable_state_or_entry_is_refused_naming_path_and_fix(
    tmp_path: Path, where: str
) -> None:
    ws, state = _state(tmp_path)
    target = state if where == "state" else state / "threads"
    target.chmod(0o707)
    with pytest.raises(UntrustedStateError) as err:
        check_state_dir(ws, state)
    assert err.value.path == target
    assert "writable by other accounts" in str(err.value) and "chmod -R go-w" in str(err.value)


def test_group_write_is_refused_unless_the_group_is_the_users_own(tmp_path: Path) -> None:
    ws, state = _state(tmp_path)
    state.chmod(0o770)
    own = grp.getgrgid(os.getegid())
    others = [a for a in pwd.getpwall() if a.pw_gid == own.gr_gid and a.pw_uid != os.geteuid()]
    if set(own.gr_mem) - {pwd.getpwuid(os.geteuid()).pw_name} or others:
        pytest.skip("the user's primary group has other members here")
    check_state_dir(ws, state)  # umask 002 with a private group: nobody else can write
    if os.geteuid() != 0:
        return  # only root can hand the directory to another group
    # A group another account is in: its primary group (every account has one).
    shared = next(a.pw_gid for a in pwd.getpwall() if a.pw_uid != 0 and a.pw_gid != own.gr_gid)
    os.chown(state, -1, shared)
    with pytest.raises(UntrustedStateError, match="writable by other accounts"):
        check_state_dir(ws, state)


def test_workspace_writable_by_all_needs_the_sticky_bit(tmp_path: Path) -> None:
    ws, state = _state(tmp_path)
    ws.chmod(0o777)
    with pytest.raises(UntrustedStateError) as err:
        check_state_dir(ws, state)
    assert err.value.path == ws and "chmod +t" in str(err.value)
    ws.chmod(0o1777)
    check_state_dir(ws, state)


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another uid needs root")
def test_entry_owned_by_another_uid_is_refused_with_its_owner(tmp_path: Path) -> None:
    ws, state = _state(tmp_path)
    os.chown(state / "threads", 65534, 65534)
    with pytest.raises(UntrustedStateError) as err:
        check_state_dir(ws, state)
    assert err.value.path == state / "threads"
    assert "uid 65534" in str(err.value) and "rm -rf" in str(err.value)


def test_symlinked_state_and_gitfile_store_are_refused(tmp_path: Path) -> None:
    ws, state = _state(tmp_path)
    (state / "git").write_text("gitdir: /elsewhere\n")
    (state / "git").chmod(0o600)
    with pytest.raises(UntrustedStateError, match="not a directory"):
        check_state_dir(ws, state)
    (state / "git").unlink()
    (state / "large").symlink_to(tmp_path)
    with pytest.raises(UntrustedStateError, match="symlink"):
        check_state_dir(ws, state)


def test_isolated_env_drops_every_inherited_git_variable() -> None:
    env = isolated_env(
        {
            "PATH": "/bin",
            "GIT_DIR": "/x",
            "GIT_CONFIG_PARAMETERS": "'a.b'='c'",
            "GIT_EXTERNAL_DIFF": "evil",
            "GIT_SSH_COMMAND": "evil",
        }
    )
    assert "evil" not in env.values() and env["GIT_CONFIG_GLOBAL"] == os.devnull
    assert env["PATH"] == "/bin" and "GIT_DIR" not in env and "GIT_CONFIG_PARAMETERS" not in env
    keys = {env[f"GIT_CONFIG_KEY_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert {"core.fsmonitor", "core.hooksPath", "diff.external", "core.sshCommand"} <= keys


def test_sanitize_rewrites_config_and_attributes_and_drops_redirects(tmp_path: Path) -> None:
    store = tmp_path / "store"
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    (store / "info").mkdir(exist_ok=True)
    evil = tmp_path / "evil.cfg"
    evil.write_text("[core]\n\tfsmonitor = touch x\n")
    (store / "config").unlink()
    (store / "config").symlink_to(evil)  # replaced, never written through
    (store / "info" / "attributes").write_text("* filter=x\n")
    for name in ("commondir", "config.worktree", "gitdir"):
        (store / name).write_text(str(tmp_path) + "\n")
    alternates = store / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text("/somewhere/else/objects\n")
    sanitize_store(store, tmp_path / "user" / "objects")
    assert not (store / "config").is_symlink()
    assert (store / "config").read_text() == CONFIG_TEMPLATE
    assert evil.read_text() == "[core]\n\tfsmonitor = touch x\n"
    assert (store / "info" / "attributes").read_text() == ATTRIBUTES
    assert not any((store / n).exists() for n in ("commondir", "config.worktree", "gitdir"))
    assert alternates.read_text() == f"{tmp_path / 'user' / 'objects'}\n"
    sanitize_store(store, None)
    assert not alternates.exists()
    check_store(store, tmp_path)


def test_logician_state_check_says_whose_state_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from logician_kernel.cli import main

    ws, state = _state(tmp_path)
    assert main(["state", "check", "--workspace", str(ws)]) == 0
    assert "yours alone" in capsys.readouterr().out
    state.chmod(0o777)
    assert main(["state", "check", "--workspace", str(ws)]) == 1
    err = capsys.readouterr().err
    assert f"refused: {state} is writable by other accounts" in err and "fix: run `chmod" in err


@pytest.mark.parametrize("head", [True, False])
def test_git_store_on_a_planted_store_runs_nothing(tmp_path: Path, head: bool) -> None:
    """GitStore itself, on a store shipped with hostile settings (with and without HEAD: a
    store `ensure` must `git init` again is sanitized first, since init reads its config)."""
    from logician_kernel.snapshots.git_store import GitStore

    ws, marker = tmp_path / "ws", tmp_path / "PWNED"
    (ws / ".logician").mkdir(parents=True, mode=0o700)
    store = ws / ".logician" / "git"
    subprocess.run(["git", "init", "-q", "--bare", str(store)], check=True)
    if not head:
        (store / "HEAD").unlink()
    (store / "config").write_text(
        f"[core]\n\tfsmonitor = touch {marker}\n"
        f"[filter \"x\"]\n\tclean = sh -c 'touch {marker}; cat'\n\trequired = true\n"
    )
    (store / "hooks" / "post-index-change").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (store / "hooks" / "post-index-change").chmod(0o755)
    (ws / ".gitattributes").write_text("* filter=x\n")
    (ws / "a.txt").write_text("a\n")
    git = GitStore(ws, store, "logician-index-t")
    git.ensure(())
    git.run("update-index", "-z", "--add", "--stdin", stdin=b"a.txt\0.gitattributes\0")
    git.run("ls-files", "-z", "--modified", "--others", "--exclude-standard")
    git.run("write-tree")
    assert not marker.exists()
