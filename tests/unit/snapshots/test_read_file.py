"""A snapshot reads each changed file once, by a path it has just `lstat`ed: if something swaps
the file for a symlink (to a secret outside the workspace), a FIFO or a directory in between,
the read must not follow, hang or fail the snapshot; it looks again or calls the path
unstable."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from logician_kernel.snapshots import _fs, incremental_tree
from logician_kernel.snapshots._fs import path_state, read_file, store_path
from logician_kernel.snapshots.git_snapshot import GitSnapshotter


def test_a_regular_file_is_read_whole_even_past_the_size_it_was_said_to_have(
    tmp_path: Path,
) -> None:
    f = tmp_path / "f.bin"
    data = os.urandom(200_000)
    f.write_bytes(data)
    assert read_file(f, 10) == data  # grew since the lstat: read to the end
    assert read_file(f, len(data)) == data
    (tmp_path / "empty").write_bytes(b"")
    assert read_file(tmp_path / "empty") == b""


def test_what_is_no_longer_a_regular_file_is_refused_without_following_or_hanging(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "outside-secret"
    secret.write_text("do not capture me\n")
    (tmp_path / "link").symlink_to(secret)
    assert read_file(tmp_path / "link") is None
    (tmp_path / "dir").mkdir()
    assert read_file(tmp_path / "dir") is None
    os.mkfifo(tmp_path / "fifo")
    done: list[bytes | None] = []
    reader = threading.Thread(target=lambda: done.append(read_file(tmp_path / "fifo")))
    reader.start()
    reader.join(timeout=120)  # a blocking open would never return: no writer ever comes
    assert not reader.is_alive() and done == [None]
    with pytest.raises(FileNotFoundError):
        read_file(tmp_path / "missing")


def test_a_file_swapped_for_a_symlink_after_its_lstat_is_unstable_not_the_target(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("private\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    victim = ws / "data.txt"
    victim.write_text("mine\n")
    st = os.lstat(victim)  # the caller's look, then the swap
    victim.unlink()
    victim.symlink_to(secret)
    objects = tmp_path / "objects"
    for state in (
        path_state(os.fspath(victim), 1 << 20, st),
        store_path(os.fspath(victim), 1 << 20, objects, st=st),
    ):
        assert state.kind == "uncaptured" and state.reason == "unstable"
    assert not objects.exists(), "nothing was stored"


def test_a_snapshot_racing_a_swap_stores_the_link_never_what_it_points_at(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    watched: tuple[Path, Path, GitSnapshotter],
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("private\n")
    ws, _, snap = watched
    first = snap.snapshot()
    (ws / "a.txt").write_text("changed\n")
    real_read = _fs.read_file
    swapped: list[str] = []

    def swap_then_read(full: str | Path, size: int = 0) -> bytes | None:
        if not swapped:  # between the snapshot's lstat and its read
            swapped.append(os.fspath(full))
            os.unlink(full)
            os.symlink(secret, full)
        return real_read(full, size)

    monkeypatch.setattr(incremental_tree, "read_file", swap_then_read)
    second = snap.snapshot()
    (change,) = snap.diff(first, second)[0]
    assert swapped == [os.fspath(ws / "a.txt")]
    assert change.after.mode == "120000"  # the symlink itself, looked at again
    assert change.after.sha is not None
    assert snap.read_blob(change.after.sha) == os.fspath(secret).encode()
