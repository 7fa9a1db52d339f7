"""Directories a rewind removes and an undo makes again: judged by birth time, including the
ones that never held a file, and made again with their permission bits."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from logician_kernel.snapshots.beneath import Beneath
from logician_kernel.snapshots.perms import (
    birth_time,
    fs_clock,
    make_directories,
    remove_debris,
)

pytestmark = pytest.mark.skipif(
    birth_time(Path("/tmp")) is None, reason="the file system does not record birth times"
)


def _iso(seconds_ago: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds_ago)).isoformat()


def _after(older: Path) -> str:
    """A frame start later than `older`'s birth (past the coarse clock's tick)."""
    born = birth_time(older)
    assert born is not None
    while datetime.now(UTC).timestamp() < born + 0.05:
        pass
    return datetime.now(UTC).isoformat()


def test_directories_that_never_held_a_file_go_with_the_ones_that_did(tmp_path: Path) -> None:
    (tmp_path / "old" / "kept").mkdir(parents=True)
    since = _after(tmp_path / "old" / "kept")
    for d in ("repo/.git/objects/pack", "repo/.git/refs/tags", "old/new/empty"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "repo" / ".git" / "objects" / "pack").chmod(0o700)
    # the files the rewind deleted, under repo/.git/ and old/new/
    removed = dict(remove_debris(tmp_path, ["repo/.git/HEAD", "old/new/f.txt"], since))
    assert set(removed) == {
        "repo",
        "repo/.git",
        "repo/.git/objects",
        "repo/.git/objects/pack",
        "repo/.git/refs",
        "repo/.git/refs/tags",
        "old/new",
        "old/new/empty",
    }
    assert removed["repo/.git/objects/pack"] == 0o700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]
    assert (tmp_path / "old" / "kept").is_dir()  # older than the frame: stays

    with Beneath(tmp_path) as tree:
        assert make_directories(tree, removed.items()) == {}
    assert (tmp_path / "repo/.git/refs/tags").is_dir()
    assert os.stat(tmp_path / "repo/.git/objects/pack").st_mode & 0o7777 == 0o700
    assert os.stat(tmp_path / "old/new/empty").st_mode & 0o7777 == removed["old/new/empty"]


def test_the_file_system_clock_judges_a_directory_made_right_after_the_frame_opened(
    tmp_path: Path,
) -> None:
    """File times come from a clock a few milliseconds behind `time.time()` (more on a loaded
    machine): read on that clock, a frame's start puts a directory made just before it (the
    previous cell's) and one made just after it (this cell's first line) on the right sides,
    however far behind the clock runs."""
    (tmp_path / "before").mkdir()
    born = birth_time(tmp_path / "before")
    assert born is not None
    while fs_clock() <= born:  # the clock's next tick: `before` is older than the frame
        pass
    since_fs, since = fs_clock(), datetime.now(UTC).isoformat()
    (tmp_path / "made" / "deep").mkdir(parents=True)
    removed = remove_debris(
        tmp_path, [], since, known=["before", "made", "made/deep"], since_fs=since_fs
    )
    assert [d for d, _ in removed] == ["made/deep", "made"]
    assert (tmp_path / "before").is_dir()


def test_a_directory_holding_a_file_stays_and_a_read_only_parent_is_made_last(
    tmp_path: Path,
) -> None:
    since = _iso(1)
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "keep.txt").write_text("x")
    assert remove_debris(tmp_path, ["a/b/f.txt"], since) == [("a/b", 0o755 & ~_umask())]
    assert (tmp_path / "a" / "keep.txt").exists()

    (tmp_path / "a" / "keep.txt").unlink()
    (tmp_path / "a").rmdir()
    with Beneath(tmp_path) as tree:
        assert make_directories(tree, [("a", 0o555), ("a/b", 0o700)]) == {}
    assert os.stat(tmp_path / "a").st_mode & 0o7777 == 0o555
    assert (tmp_path / "a" / "b").is_dir()
    (tmp_path / "a").chmod(0o755)


def test_a_file_where_a_directory_is_to_be_made_is_reported(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("a file")
    with Beneath(tmp_path) as tree:
        failed = make_directories(tree, [("x", 0o755), ("x/y", 0o755)])
    # A file stands where x/ was: a conflict, left alone (x/y cannot be made beneath it).
    assert sorted(failed) == ["x", "x/y"] and failed["x"][0] == "conflict"
    assert (tmp_path / "x").read_text() == "a file"


def test_a_symlink_where_a_directory_is_to_be_made_is_a_conflict_left_alone(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "d").symlink_to(outside)
    with Beneath(ws) as tree:
        failed = make_directories(tree, [("d", 0o755), ("d/e", 0o700)])
    assert failed["d"][0] == "conflict" and (ws / "d").is_symlink()
    assert list(outside.iterdir()) == [], "a directory was made through the symlink"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
