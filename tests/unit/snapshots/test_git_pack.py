"""Packs written in-process (git_pack.py) are packs git reads as its own: `verify-pack` and
`fsck` pass, every blob reads back byte for byte, and a snapshot of a cell that changed many
files stores them in one pack instead of one file each."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from logician_kernel.snapshots import git_pack
from logician_kernel.snapshots.blob_stream import BlobStream
from logician_kernel.snapshots.git_pack import PackWriter
from logician_kernel.snapshots.git_snapshot import GitSnapshotter


def git(store: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", f"--git-dir={store}", *args], env=env, capture_output=True)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "store")], check=True)
    return tmp_path / "store"


def test_a_pack_of_blobs_of_every_size_reads_back_through_git(store: Path) -> None:
    rnd = random.Random(7)
    # Sizes around the header's 4-bit and 7-bit steps, empty, and one over 64 KiB.
    blobs = [rnd.randbytes(n) for n in (0, 1, 15, 16, 127, 128, 2047, 2048, 70_000)]
    blobs += [rnd.randbytes(rnd.randint(0, 3000)) for _ in range(200)]
    writer = PackWriter(store / "objects")
    ids = [writer.add(b) for b in blobs]
    writer.flush()
    assert len(writer.written) == 1
    pack = writer.written[0]
    assert sorted(p.suffix for p in store.glob("objects/pack/pack-*")) == [".idx", ".pack"]
    assert not list(store.glob("objects/??/*")), "no loose object was written"
    verified = git(store, "verify-pack", "-v", pack + ".idx")
    assert verified.returncode == 0, verified.stderr
    assert Path(pack).name == "pack-" + Path(pack + ".pack").read_bytes()[-20:].hex()
    for data, sha in zip(blobs, ids, strict=True):
        read = git(store, "cat-file", "blob", sha)
        assert read.returncode == 0 and read.stdout == data, sha
    assert git(store, "fsck", "--full").returncode == 0


def test_a_blob_is_packed_once_and_a_loose_copy_beside_it_is_fine_for_git(store: Path) -> None:
    subprocess.run(
        ["git", f"--git-dir={store}", "hash-object", "-w", "--stdin"],
        input=b"kept loose\n",
        check=True,
        capture_output=True,
    )
    writer = PackWriter(store / "objects")
    loose = writer.add(b"kept loose\n")  # not looked for loose: no `stat` per blob
    writer.add(b"twice\n")
    writer.add(b"twice\n")
    writer.flush()
    listed = git(store, "verify-pack", "-v", writer.written[0] + ".idx").stdout.decode()
    assert "non delta: 2 objects" in listed  # "twice" once
    again = PackWriter(store / "objects", writer.packed)
    again.add(b"twice\n")  # packed already by this store: not again
    again.flush()
    assert again.written == []
    assert git(store, "cat-file", "blob", loose).stdout == b"kept loose\n"
    assert git(store, "fsck", "--full").returncode == 0


def test_packs_start_over_past_their_size_bound(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_pack, "PACK_MAX_BYTES", 10_000)
    writer = PackWriter(store / "objects")
    ids = [writer.add(os.urandom(3000)) for _ in range(10)]
    writer.flush()
    assert len(writer.written) >= 3
    assert all(git(store, "cat-file", "-e", sha).returncode == 0 for sha in ids)


def test_a_snapshot_of_many_changed_files_packs_them(
    watched: tuple[Path, Path, GitSnapshotter],
) -> None:
    ws, store, snap = watched
    first = snap.snapshot()
    (ws / "a.txt").write_text("b\n")
    before = snap.snapshot()
    (change,) = snap.diff(first, before)[0]
    assert change.after.sha is not None  # the reader runs before any pack exists:
    assert snap.read_blob(change.after.sha) == b"b\n"  # git must find the pack made next
    (ws / "out").mkdir()
    n = git_pack.PACK_MIN_BLOBS * 2
    for i in range(n):
        (ws / "out" / f"f{i:04d}.txt").write_text(f"version {i}\n")
    (ws / "a.txt").write_text("changed\n")
    second = snap.snapshot()
    changes, _ = snap.diff(first, second)
    assert len(changes) == n + 1
    assert list((store / "objects" / "pack").glob("pack-*.idx")), "the blobs went into a pack"
    for change in changes:
        assert change.after.sha is not None
        assert snap.read_blob(change.after.sha) == (ws / change.path).read_bytes()
    # The next changed cell (one file) writes loose, as before.
    (ws / "a.txt").write_text("again\n")
    third = snap.snapshot()
    (change,) = snap.diff(second, third)[0]
    assert change.after.sha is not None and snap.read_blob(change.after.sha) == b"again\n"
    assert git(store, "fsck", "--full").returncode == 0


def test_a_blob_stream_answers_in_order_and_leaves_the_rest_to_the_reader(store: Path) -> None:
    def put(data: bytes) -> str:
        out = subprocess.run(
            ["git", f"--git-dir={store}", "hash-object", "-w", "--stdin"],
            input=data,
            check=True,
            capture_output=True,
        )
        return out.stdout.decode().strip()

    a, b, c = put(b"a\n"), put(b"b" * 100_000), put(b"")
    missing = "0" * 40
    stream = BlobStream(str(store), dict(os.environ), [a, b, missing, c, a])
    try:
        assert stream.take(b) == ("blob", b"b" * 100_000)  # `a` before it is read past
        assert stream.take(missing) is None  # git lacks it: the usual reader will say so
        assert stream.take(a) == ("blob", b"a\n")  # the second `a`, past `c`
        assert stream.take(c) is None  # no longer ahead
    finally:
        stream.close()
    assert stream.take(a) is None  # closed: nothing more from it
