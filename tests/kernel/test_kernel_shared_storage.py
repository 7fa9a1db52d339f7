"""A kernel started the way gateways start them (elsewhere, told KERNEL_WORKING_DIR), on a
workspace a killed kernel left locks in: frames still work and the user is told once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.snapshots.git_snapshot import GitSnapshotter
from logician_kernel.workspace.open_thread import index_name_for

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def test_launcher_directory_and_stale_locks_of_a_killed_kernel(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    # A kernel that died mid-snapshot and mid-`git add` (no process holds either lock now).
    # (The store is made directly: a session's background first snapshot would race the test.)
    index = index_name_for(kernel_env["LOGICIAN_THREAD"])  # each thread has its own index
    GitSnapshotter(workspace, workspace / ".logician" / "git", index_name=index).ensure_store()
    ours = workspace / ".logician" / "git" / f"{index}.lock"
    ours.write_bytes(b"")
    users = workspace / ".git" / "index.lock"
    users.write_bytes(b"")
    old = time.time() - 600
    os.utime(users, (old, old))

    launch_dir = tmp_path / "gateway-home"
    launch_dir.mkdir()
    k = Kernel(launch_dir, {**kernel_env, "KERNEL_WORKING_DIR": str(workspace)})
    try:
        first = k.run("import os; print(os.getcwd()); open('made.txt', 'w').write('x')")
        assert first.status == "ok", first.text
        assert first.stdout.strip() == str(workspace)  # the kernel runs where a local one would
        assert f"the workspace is {workspace} (from KERNEL_WORKING_DIR=" in first.stderr
        assert f"removed {users}" in first.stderr
        assert f"removed {ours}" in first.stderr
        assert not users.exists() and not ours.exists()
        assert not (launch_dir / ".logician").exists()

        second = k.run("open('made.txt', 'a').write('y')")
        assert "removed" not in second.stderr and "the workspace is" not in second.stderr
        listing = k.run("%logician frames").text
        rows = listing.splitlines()[1:]
        assert "1 created" in rows[0] and "1 modified" in rows[1], listing
        r = k.run("%logician rewind 1")
        assert r.status == "ok", r.text
        assert not (workspace / "made.txt").exists()
    finally:
        k.shutdown()


def test_a_live_git_lock_is_left_alone(workspace: Path, kernel_env: dict[str, str]) -> None:
    users = workspace / ".git" / "index.lock"
    with open(users, "wb"):  # held open, as a running `git add` holds it
        old = time.time() - 600
        os.utime(users, (old, old))
        k = Kernel(workspace, kernel_env)
        try:
            r = k.run("print('hi')")
            assert r.status == "ok" and "index.lock" not in r.text
            assert users.exists()
        finally:
            k.shutdown()
    users.unlink()
