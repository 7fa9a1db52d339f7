"""A damaged private store is repaired when it is opened (issue 28): a `.logician/` copied by
`git clone` (its empty `refs/` and `objects/` folders dropped), a missing `HEAD`, and lock
files left by a git killed mid-command. Real kernel, real git, real clone."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel, git

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

STORE = Path(".logician/git")
BROKEN = ("not a git repository", "not captured", "could not be set up", "capture is off")


def _first_frame(ws: Path, env: dict[str, str]) -> None:
    k = Kernel(ws, env)
    try:
        assert k.run("open('a.txt', 'w').write('from before the clone\\n')").status == "ok"
    finally:
        k.shutdown()


def _captures_and_rewinds(k: Kernel, ws: Path) -> str:
    """A cell is a frame whose files a rewind restores; what the first cell said."""
    r = k.run("open('b.txt', 'w').write('after\\n')")
    said = r.text
    assert r.status == "ok" and not [w for w in BROKEN if w in said], said
    frames = k.run("%logician frames").text
    assert "b.txt" in frames or "1 created" in frames or "created" in frames, frames
    r = k.run("%logician rewind --last")
    assert r.status == "ok" and "failed" not in r.text, r.text
    assert not (ws / "b.txt").exists()
    return said


@pytest.mark.timeout(240)
def test_a_cloned_logician_folder_captures_in_every_cell(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    _first_frame(workspace, kernel_env)
    git(workspace, "add", "-f", ".logician", "a.txt")
    git(workspace, "commit", "-q", "-m", "share the notebook's history")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(workspace), str(clone))
    # What the clone dropped: git keeps no empty directory.
    assert not (clone / STORE / "refs").exists() and (clone / STORE / "HEAD").exists()
    k = Kernel(clone, kernel_env)
    try:
        said = _captures_and_rewinds(k, clone)
        assert "snapshot store" in said and "was repaired" in said and "refs/heads" in said, said
        # The frame from before the clone rewinds in the clone: its history came along.
        r = k.run("%logician rewind 1")
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert not (clone / "a.txt").exists()
        for sub in ("refs/heads", "refs/tags", "objects/info", "objects/pack"):
            assert (clone / STORE / sub).is_dir(), sub
    finally:
        k.shutdown()


@pytest.mark.timeout(240)
def test_a_missing_head_and_stale_locks_are_repaired_on_open(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    _first_frame(workspace, kernel_env)
    store = workspace / STORE
    (store / "HEAD").unlink()
    old = time.time() - 3600
    locks = [store / "HEAD.lock", store / "config.lock", store / "refs" / "heads" / "main.lock"]
    for lock in locks:
        lock.write_text("")
        os.utime(lock, (old, old))
    k = Kernel(workspace, kernel_env)
    try:
        said = _captures_and_rewinds(k, workspace)
        assert "HEAD" in said and "stale lock" in said, said
        assert not [lock for lock in locks if lock.exists()]
        r = k.run("%logician rewind 1")  # the earlier frame's objects were kept
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert not (workspace / "a.txt").exists()
    finally:
        k.shutdown()


@pytest.mark.timeout(240)
def test_a_lock_a_running_process_holds_is_left_alone(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    _first_frame(workspace, kernel_env)
    lock = workspace / STORE / "packed-refs.lock"
    old = time.time() - 3600
    with open(lock, "w") as held:  # this process holds it open, as a running git would
        os.utime(lock, (old, old))
        k = Kernel(workspace, kernel_env)
        try:
            k.run("open('c.txt', 'w').write('c')")
            assert lock.exists()
        finally:
            k.shutdown()
        held.close()
