"""The first full snapshot of a workspace that is not a git repository: blobs packed in
parallel first (first_snapshot.py), the same tree and exact bytes as loose objects gave."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from logician_kernel.snapshots import first_snapshot
from logician_kernel.snapshots.first_snapshot import PREPACK_MIN_PATHS, _read_regular
from logician_kernel.snapshots.git_snapshot import GitSnapshotter
from logician_kernel.snapshots.large_files import LargeFiles, LargeLimits
from logician_kernel.snapshots.large_store import LargeFileStore

N_FILES = PREPACK_MIN_PATHS * 3


def _workspace(root: Path) -> Path:
    root.mkdir()
    for i in range(N_FILES):
        d = root / f"d{i // 50:02d}"
        d.mkdir(exist_ok=True)
        (d / f"f{i:04d}.txt").write_bytes(f"file {i}\n".encode())
    # Bytes a filter or eol conversion would change: they must come back exactly.
    (root / ".gitattributes").write_text("* text eol=crlf\n*.bin filter=lfs diff=lfs\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\nthree\r")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 10)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("d00/f0000.txt", root / "link")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\x7fELF")
    (root / "big.dat").write_bytes(b"x" * 5000)  # over the side store's threshold below
    return root


@pytest.fixture
def snapshotters():
    """Make snapshotters; each is closed after the test (its blob reader is a process)."""
    made: list[GitSnapshotter] = []

    def make(ws: Path) -> GitSnapshotter:
        state = ws / ".logician"
        large = LargeFiles(ws, LargeFileStore(state / "large"), LargeLimits(threshold=4096))
        snap = GitSnapshotter(ws, state / "git", max_file_bytes=1_000_000, large=large)
        snap.ensure_store()
        made.append(snap)
        return snap

    yield make
    for snap in made:
        snap.close()


def _tree(snap: GitSnapshotter, tree: str) -> dict[str, tuple[str, str]]:
    out = snap._git("ls-tree", "-r", "-z", tree)
    rows = {}
    for line in out.split(b"\0"):
        if line:
            meta, path = line.split(b"\t", 1)
            mode, _kind, sha = meta.decode().split()
            rows[path.decode()] = (mode, sha)
    return rows


def _loose_blobs(store: Path) -> int:
    objects = store / "objects"
    found = 0
    for sub in objects.iterdir():
        if len(sub.name) == 2:
            for obj in sub.iterdir():
                kind = subprocess.run(
                    ["git", f"--git-dir={store}", "cat-file", "-t", sub.name + obj.name],
                    capture_output=True,
                    text=True,
                )
                found += kind.stdout.strip() == "blob"
    return found


def test_the_first_snapshot_packs_blobs_and_every_byte_round_trips(
    tmp_path: Path, snapshotters
) -> None:
    ws = _workspace(tmp_path / "ws")
    snap = snapshotters(ws)
    first = snap.snapshot()
    rows = _tree(snap, first.tree)
    assert len(list((snap.store / "objects" / "pack").glob("*.pack"))) >= 1
    assert _loose_blobs(snap.store) <= 2  # the symlink's target, at most: never 800 files
    for path, (mode, sha) in rows.items():
        full = ws / path
        if mode == "120000":
            assert snap.read_blob(sha) == os.readlink(full).encode()
        else:
            assert snap.read_blob(sha) == full.read_bytes(), path
    assert rows["run.sh"][0] == "100755" and rows["crlf.txt"][0] == "100644"
    assert rows["link"][0] == "120000"
    assert "big.dat" not in rows and first.large["big.dat"].kind == "large"
    assert "build/out.o" not in rows and first.uncaptured["build/out.o"][0] == "ignored"
    assert len([p for p in rows if p.startswith("d")]) == N_FILES


def test_the_index_carries_stat_data_so_the_next_full_scan_lists_nothing(
    tmp_path: Path, snapshotters
) -> None:
    ws = _workspace(tmp_path / "ws")
    snap = snapshotters(ws)
    first = snap.snapshot()
    listed = snap._git(
        "ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"
    )
    assert listed == b"big.dat\0"  # only what lives in the side store, as with loose objects
    (ws / "d00" / "f0001.txt").write_text("changed\n")
    listed = snap._git(
        "ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"
    )
    assert listed == b"big.dat\0d00/f0001.txt\0"
    second = snap._full_scan()
    assert second.tree != first.tree
    assert snap.read_blob(_tree(snap, second.tree)["d00/f0001.txt"][1]) == b"changed\n"


def test_a_packer_that_fails_leaves_the_snapshot_to_loose_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snapshotters
) -> None:
    ws = _workspace(tmp_path / "ws")
    monkeypatch.setattr(first_snapshot, "FAST_IMPORT", ("fast-import", "--no-such-option"))
    snap = snapshotters(ws)
    rows = _tree(snap, snap.snapshot().tree)
    assert not list((snap.store / "objects" / "pack").glob("*.pack"))
    assert snap.read_blob(rows["crlf.txt"][1]) == b"one\r\ntwo\nthree\r"
    assert len([p for p in rows if p.startswith("d")]) == N_FILES


def test_reading_skips_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    os.symlink(tmp_path / "pipe", tmp_path / "link")
    (tmp_path / "f").write_bytes(b"abc")
    assert _read_regular(fifo, 100) is None  # and it did not block
    assert _read_regular(tmp_path / "link", 100) is None
    assert _read_regular(tmp_path / "gone", 100) is None
    assert _read_regular(tmp_path / "f", 2) is None  # over the cap
    assert _read_regular(tmp_path / "f", 100) == b"abc"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
