"""The store's object reader (one long-lived `git cat-file --batch`): objects read back byte
for byte, a hostile id is never written to git, a reader whose process died starts afresh, and
no process outlives `close` or a dropped reader. Through `GitStore`, bytes planted under an id
are refused and a missing object is named."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import zlib
from pathlib import Path

import pytest

from logician_kernel.snapshots.git_pack import PackWriter
from logician_kernel.snapshots.git_store import GitStore, SnapshotError
from logician_kernel.snapshots.object_reader import BrokenReader, ObjectReader


@pytest.fixture
def store(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "store")], check=True)
    return tmp_path / "store"


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def put(store: Path, data: bytes) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={store}", "hash-object", "-w", "--stdin"],
        input=data,
        check=True,
        capture_output=True,
        env=clean_env(),
    )
    return out.stdout.decode().strip()


def packed(store: Path, data: bytes) -> str:
    """`data` written into a pack (no loose copy): git's reader, not the in-process loose
    read, answers for it."""
    writer = PackWriter(store / "objects")
    sha = writer.add(data)
    writer.flush()
    assert not list(store.glob("objects/??/*")), "written loose"
    return sha


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_objects_of_every_size_read_back_in_one_process(store: Path) -> None:
    blobs = [b"", b"a\n", b"\n" * 3, bytes(range(256)) * 400, os.urandom(200_000)]
    ids = [put(store, b) for b in blobs]
    missing = "0" * 40
    reader = ObjectReader(str(store), clean_env())
    try:
        for data, sha in zip(blobs, ids, strict=True):
            assert reader.read(sha) == ("blob", data)
        pid = reader._proc.pid if reader._proc is not None else None
        assert reader.read(missing) is None  # git lacks it: the caller says so
        assert reader.read(ids[1]) == ("blob", b"a\n")  # the protocol is still in step
        assert reader._proc is not None and reader._proc.pid == pid, "one process for all"
    finally:
        reader.close()
    assert not reader.running


@pytest.mark.parametrize(
    "hostile",
    [
        "HEAD",
        "HEAD:secret.txt",
        "a" * 40 + "\n" + "b" * 40,  # two requests in one: the answers would fall out of step
        "A" * 40,
        "a" * 39,
        "a" * 41,
        "",
        "../../etc/passwd",
    ],
)
def test_an_id_that_is_not_one_is_refused_and_never_written_to_git(
    store: Path, hostile: str
) -> None:
    reader = ObjectReader(str(store), clean_env())
    with pytest.raises(ValueError, match="not an object id"):
        reader.read(hostile)
    assert not reader.running, "no process was started for it"
    sha = put(store, b"still fine\n")
    assert reader.read(sha) == ("blob", b"still fine\n")
    reader.close()


def test_a_reader_whose_git_died_says_so_and_the_next_read_starts_afresh(store: Path) -> None:
    sha = put(store, b"content\n")
    reader = ObjectReader(str(store), clean_env())
    try:
        assert reader.read(sha) == ("blob", b"content\n")
        assert reader._proc is not None
        first = reader._proc.pid
        os.kill(first, signal.SIGKILL)
        reader._proc.wait()
        with pytest.raises(BrokenReader, match="exited with status|Broken pipe|cut short"):
            reader.read(sha)
        assert not reader.running and not alive(first)
        assert reader.read(sha) == ("blob", b"content\n")  # a fresh process
        assert reader._proc is not None and reader._proc.pid != first
    finally:
        reader.close()


def test_no_process_outlives_close_or_a_dropped_reader(store: Path) -> None:
    sha = put(store, b"x\n")
    reader = ObjectReader(str(store), clean_env())
    reader.read(sha)
    assert reader._proc is not None
    pid = reader._proc.pid
    reader.close()
    reader.close()  # twice is fine
    assert not alive(pid)

    dropped = ObjectReader(str(store), clean_env())
    dropped.read(sha)
    assert dropped._proc is not None
    pid = dropped._proc.pid
    del dropped
    gc.collect()
    assert not alive(pid), "the dropped reader's git was left running"


def test_git_cannot_be_started_is_a_broken_reader_naming_it(store: Path) -> None:
    reader = ObjectReader(str(store), {"PATH": "/nonexistent"})
    with pytest.raises(BrokenReader, match="cannot run git cat-file"):
        reader.read("a" * 40)


def _store(tmp_path: Path) -> GitStore:
    ws = tmp_path / "ws"
    ws.mkdir()
    git = GitStore(ws, tmp_path / "private", "index")
    git.ensure(())
    return git


def test_the_store_refuses_planted_bytes_and_names_a_missing_object(tmp_path: Path) -> None:
    git = _store(tmp_path)
    sha = packed(git.store, b"the real content\n")
    try:
        assert git.read_object(sha) == ("blob", b"the real content\n")  # through the reader
        assert git._reader is not None and git._reader.running
        with pytest.raises(SnapshotError, match="is missing from"):
            git.read_object("1" * 40)
        with pytest.raises(SnapshotError, match="not an object id"):
            git.read_object("HEAD:whatever")
    finally:
        git.close()
    assert git._reader is None

    # bytes planted under another object's id: git's reader serves them unchecked, the store
    # checks them
    real = b"what the ledger expects\n"
    expected = (
        subprocess.run(
            ["git", "hash-object", "--stdin"], input=real, check=True, capture_output=True
        )
        .stdout.decode()
        .strip()
    )
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", "--bare", str(other)], check=True)
    planted = put(other, b"planted\n")
    loose = other / "objects" / planted[:2] / planted[2:]
    assert zlib.decompress(loose.read_bytes()) == b"blob 8\x00planted\n"
    target = git.store / "objects" / expected[:2] / expected[2:]
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(loose.read_bytes())
    assert (
        subprocess.run(  # git itself hands the planted bytes out under that id
            ["git", f"--git-dir={git.store}", "cat-file", "blob", expected],
            capture_output=True,
            env=clean_env(),
        ).stdout
        == b"planted\n"
    )
    try:
        with pytest.raises(SnapshotError, match="does not match its id"):
            git.read_not_loose(expected)  # through the reader
        with pytest.raises(SnapshotError, match="does not match its id"):
            git.read_object(expected)
    finally:
        git.close()
