"""Another account cannot pre-seed the kernel's state (issue 27, finding 3).

In a shared folder (a hub's shared volume, NFS) a second local account creates `.logician/`
before the victim opens the workspace, with a store whose config runs a program and a threads
directory waiting for the victim's ledger. The victim's kernel must refuse it by name (the
path, its owner, the fix), never open it (no marker, nothing of the victim's written into it),
and keep working as a plain kernel. The same for a `.logician/` of the victim's own that
others could write. After the fix the victim's frames work.

A pickle planted under a predictable digest is the blobs lane's test; here a foreign store is
never even opened.
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest
from kernel_harness import Kernel, make_kernel_env
from local_accounts import OtherAccount

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

_SEED = """
import os, subprocess, sys
marker = sys.argv[1]
os.makedirs('.logician/threads', mode=0o777)
subprocess.run(['git', 'init', '-q', '--bare', '.logician/git'], check=True)
with open('.logician/git/config', 'a') as fh:
    fh.write('[core]\\n\\tfsmonitor = touch ' + marker + '\\n')
hook = '.logician/git/hooks/post-index-change'
with open(hook, 'w') as fh:
    fh.write('#!/bin/sh\\ntouch ' + marker + '\\n')
os.chmod(hook, 0o777)
"""


def _seed_as(account: OtherAccount, ws: Path, marker: Path) -> None:
    account.run(["python3", "-c", _SEED, str(marker)], cwd=ws)
    assert (ws / ".logician").stat().st_uid == account.uid


def _plain_kernel_refuses(k: Kernel, *names: str) -> str:
    r = k.run("print(6 * 7)")
    assert r.status == "ok" and "42" in r.stdout, r.text
    assert "frames are off for this session" in r.stderr, r.stderr
    for name in names:
        assert name in r.stderr, (name, r.stderr)
    r = k.run("open('written.txt', 'w').write('x')")
    assert r.status == "ok" and r.stderr == "", r.text  # said once, not on every cell
    r = k.run("%logician rewind --last")
    assert r.status == "error" and "frames are off" in r.text, r.text
    return r.text


def _frames_work(ws: Path, tmp_path: Path) -> None:
    k = Kernel(ws, make_kernel_env(tmp_path, thread="after-fix"))
    try:
        r = k.run("open('after.txt', 'w').write('x')")
        assert r.status == "ok" and "frames are off" not in r.text, r.text
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and "Rewound" in r.text, r.text
        assert not (ws / "after.txt").exists()
    finally:
        k.shutdown()


@pytest.mark.parametrize("mode", [0o1777, 0o777])
def test_store_precreated_by_another_account_is_refused_by_name(
    other_account: OtherAccount, shared_dir: Path, tmp_path: Path, mode: int
) -> None:
    ws = shared_dir / "project"
    ws.mkdir()
    ws.chmod(mode)  # world-writable, as a hub's shared volume often is
    (ws / "data.txt").write_text("data\n")
    marker = tmp_path / "PWNED"
    _seed_as(other_account, ws, marker)
    before = sorted(p.name for p in (ws / ".logician" / "threads").iterdir())

    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        if mode & stat.S_ISVTX:  # sticky: .logician/ is the one thing wrong, named with its owner
            _plain_kernel_refuses(k, str(ws / ".logician"), other_account.name, "rm -rf")
        else:  # anyone could swap .logician/ at any time: the workspace itself is named
            _plain_kernel_refuses(k, str(ws), "writable by other accounts", "chmod +t")
    finally:
        k.shutdown()
    assert not marker.exists()
    # Nothing of the victim's (a ledger holds whole conversations) went into the planted state.
    assert sorted(p.name for p in (ws / ".logician" / "threads").iterdir()) == before
    assert not any(p.stat().st_uid == 0 for p in (ws / ".logician").rglob("*"))

    # The fix the message names: remove the planted state (root can, even in a sticky folder),
    # and make the folder sticky so nobody can replace ours.
    subprocess.run(["rm", "-rf", str(ws / ".logician")], check=True)
    ws.chmod(0o1777)
    _frames_work(ws, tmp_path)
    assert not marker.exists()


@pytest.mark.parametrize("loosen", ["state-dir", "threads", "store-config"])
def test_own_store_writable_by_others_is_refused_until_tightened(
    workspace: Path, tmp_path: Path, loosen: str
) -> None:
    k = Kernel(workspace, make_kernel_env(tmp_path))
    try:
        assert k.run("x = 1").status == "ok"
    finally:
        k.shutdown()
    state = workspace / ".logician"
    target = {
        "state-dir": state,
        "threads": state / "threads",
        "store-config": state / "git" / "config",
    }[loosen]
    target.chmod(target.stat().st_mode | 0o002)

    k = Kernel(workspace, make_kernel_env(tmp_path))
    try:
        _plain_kernel_refuses(k, "writable by other accounts", str(target), "chmod -R go-w")
    finally:
        k.shutdown()
    assert stat.S_IMODE(target.stat().st_mode) & 0o002  # refused, not silently "fixed"

    subprocess.run(["chmod", "-R", "go-w", str(state)], check=True)
    _frames_work(workspace, tmp_path)


def test_state_dir_symlinked_elsewhere_is_refused(workspace: Path, tmp_path: Path) -> None:
    """`.logician` as a symlink (to another account's folder, or anywhere) is never followed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (workspace / ".logician").symlink_to(elsewhere)
    k = Kernel(workspace, make_kernel_env(tmp_path))
    try:
        _plain_kernel_refuses(k, str(workspace / ".logician"), "symlink")
    finally:
        k.shutdown()
    assert list(elsewhere.iterdir()) == []


def test_in_a_sticky_shared_folder_another_member_cannot_touch_our_state(
    other_account: OtherAccount, shared_dir: Path, tmp_path: Path
) -> None:
    """The team model of docs/security.md: a sticky shared folder, one owner per `.logician/`.
    Another member can neither replace, remove nor write into ours; our frames keep working."""
    ws = shared_dir / "team"
    ws.mkdir()
    ws.chmod(0o1777)
    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        assert k.run("open('mine.txt', 'w').write('1')").status == "ok"
        attempts = {
            "rename": ["mv", ".logician", "stolen"],
            "remove": ["rm", "-rf", ".logician"],
            "plant": ["sh", "-c", "echo x > .logician/git/config"],
            "list": ["ls", ".logician/threads"],
        }
        for what, argv in attempts.items():
            with pytest.raises(subprocess.CalledProcessError):
                other_account.run(argv, cwd=ws)
            assert (ws / ".logician" / "git" / "HEAD").exists(), what
        # The member's own files in the shared folder are theirs; ours stay ours.
        other_account.run(["sh", "-c", "echo theirs > theirs.txt"], cwd=ws)
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and not (ws / "mine.txt").exists(), r.text
        assert (ws / "theirs.txt").read_text() == "theirs\n"
    finally:
        k.shutdown()
