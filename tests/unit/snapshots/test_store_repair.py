"""The private store's skeleton is put back (issue 28): what `git clone` drops, a missing or
garbage `HEAD`, and stale locks; a fresh lock and a missing store are left alone."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

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
