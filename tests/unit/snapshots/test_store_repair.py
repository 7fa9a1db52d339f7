"""The private store's skeleton is put back (issue 28): what `git clone` drops, a missing or
garbage `HEAD`, and stale locks; a fresh lock and a missing store are left alone."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from logician_kernel.snapshots.git_trees import MACHINE_TAG
from logician_kernel.snapshots.store_repair import repair_store


def _git_opens(store: Path) -> bool:
    done = subprocess.run(
        ["git", f"--git-dir={store}", "rev-parse", "--git-dir"], capture_output=True, check=False
    )
    return done.returncode == 0


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "git"
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(store)], check=True)
    return store


def test_a_store_without_its_empty_directories_or_head_opens_again(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for sub in ("refs/heads", "refs/tags", "refs", "objects/info", "objects/pack", "objects"):
        (store / sub).rmdir()
    (store / "HEAD").write_text("garbage\n")
    assert not _git_opens(store)
    done = repair_store(store)
    assert any("refs/heads" in d for d in done) and any("HEAD" in d for d in done), done
    assert _git_opens(store)
    assert repair_store(store) == []  # nothing left to do: says nothing


def test_only_stale_locks_are_removed(tmp_path: Path) -> None:
    store = _store(tmp_path)
    stale, fresh = store / "config.lock", store / "HEAD.lock"
    stale.write_text("")
    fresh.write_text("")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    done = repair_store(store)
    assert done == ["removed the stale lock config.lock"], done
    assert fresh.exists() and not stale.exists()


def test_no_store_is_not_invented(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert repair_store(tmp_path / "missing") == [] and repair_store(empty) == []
    assert list(empty.iterdir()) == []


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _half_pack(store: Path, owner: str, age: float, size: int = 4096) -> Path:
    temp = store / "objects" / "pack" / f"pack-{'ab' * 20}.pack.{owner}.0123abcd.tmp"
    temp.write_bytes(b"PACK" + b"\0" * (size - 4))
    then = time.time() - age
    os.utime(temp, (then, then))
    return temp


def test_a_half_pack_of_a_killed_kernel_is_removed_and_a_live_writers_is_kept(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    killed = _half_pack(store, f"{MACHINE_TAG}-{_dead_pid()}", age=10, size=3_000_000)
    writing = _half_pack(store, f"{MACHINE_TAG}-{os.getpid()}", age=10)
    done = repair_store(store)
    assert done == [
        "removed 1 half-written pack file (3,000,000 bytes) left by a kernel stopped mid-write"
    ], done
    assert not killed.exists() and writing.exists()
    assert _git_opens(store)


def test_a_half_pack_from_another_machine_waits_an_hour(tmp_path: Path) -> None:
    """On a shared folder the process id of another machine means nothing here: its file
    (or one named by an older version, without a machine) goes only when long untouched."""
    store = _store(tmp_path)
    recent = _half_pack(store, "0badf00d-12345", age=600)
    assert repair_store(store) == [] and recent.exists()
    old_other = _half_pack(store, "0badf00d-12346", age=7200)
    old_unnamed = _half_pack(store, "12347", age=7200)
    assert repair_store(store) == [
        "removed 2 half-written pack files (8,192 bytes) left by a kernel stopped mid-write"
    ]
    assert recent.exists() and not old_other.exists() and not old_unnamed.exists()
