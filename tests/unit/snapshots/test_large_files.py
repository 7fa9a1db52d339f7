"""The large-file side store on the Jupyter-free core, driven directly (the fast tier)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.snapshots import large_files
from logician_kernel.snapshots.large_files import LargeLimits
from logician_kernel.snapshots.large_store import LargeFileStore, hash_file
from logician_kernel.workspace.open_thread import OpenThread


@pytest.fixture
def session(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    s = OpenThread.open(
        ws,
        env={"LOGICIAN_THREAD": "unit"},
        max_file_bytes=100_000,
        large=LargeLimits(threshold=1000, max_store_bytes=10_000, keep_recent_frames=1),
    )
    yield s
    s.close()


def frame(session: OpenThread, action):
    cp = session.checkpoints
    assert cp is not None
    cp.open_frame(execution_count=None, cell_id=None, code="cell")
    action(session.workspace)
    return cp.close_frame("ok")


def test_the_store_keeps_one_copy_per_content_and_restores_bytes_and_modes(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(os.urandom(50_000))
    b.write_bytes(a.read_bytes())
    key = store.put(a)
    assert store.put(b) == key == hash_file(a)
    assert key.endswith("-50000")
    assert [o.key for o in store.list()] == [key]
    out = tmp_path / "out.bin"
    store.restore(key, out, 0o750)
    assert out.read_bytes() == a.read_bytes()
    assert out.stat().st_mode & 0o777 == 0o750
    assert not list(store.tmp.iterdir())
    store.remove(key, why="test", frames=[3])
    with pytest.raises(OSError, match="was evicted"):
        store.restore(key, out, 0o644)
    assert store.evictions()[0]["frames"] == [3]


def test_large_files_skip_git_and_a_rewind_brings_them_back(session) -> None:
    data = os.urandom(5000)
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(data))
    assert [(c.path, c.after.kind) for c in closed.changes] == [("big.bin", "large")]
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(b"small now"))
    assert (closed.changes[0].before.kind, closed.changes[0].after.kind) == ("large", "blob")
    frame_rewind.rewind(session.checkpoints, closed.frame)
    assert (session.workspace / "big.bin").read_bytes() == data
    git_objects = session.workspace / ".logician" / "git" / "objects"
    assert all(p.stat().st_size < 1000 for p in git_objects.rglob("*") if p.is_file())


def test_eviction_keeps_recent_frames_and_current_files(session) -> None:
    for v in range(1, 5):  # 4 versions x 3000 bytes against a 10,000 byte budget
        frame(session, lambda ws, v=v: (ws / "f.bin").write_bytes(bytes([v]) * 3000))
    session.checkpoints.settle()  # the last frame's copy runs after it closed
    budget = session.checkpoints.budget
    assert budget is not None
    assert budget.evicted() == {2: ["f.bin"]}  # frame 2's pre-image (version 1) went first
    assert (
        "evicted 0.0 MB of large pre-images of frame(s) 2" in session.checkpoints.drain_notices()[0]
    )
    plan = frame_rewind.plan_rewind(session.checkpoints, 2)
    assert [s.path for s in plan.skipped] == ["f.bin"] and "evicted" in plan.skipped[0].detail
    freed, lost = budget.gc(0)
    assert freed == 6000 and lost == [3, 4]
    assert (session.workspace / "f.bin").read_bytes() == bytes([4]) * 3000


def test_a_file_another_process_keeps_writing_is_reported_unstable(
    session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(large_files, "SETTLE_SECONDS", 0.3)
    path = session.workspace / "log.bin"
    cp = session.checkpoints
    cp.open_frame(execution_count=None, cell_id=None, code="cell")
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nf = open(sys.argv[1], 'wb')\nf.write(b'x' * 5000); f.flush()\n"
            "print('ready', flush=True)\ntime.sleep(30)",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline().strip() == "ready"  # type: ignore[union-attr]
        closed = cp.close_frame("ok")
        cp.settle()  # the frame closed at once; its copy waited for the writer, in vain
        seen = cp.snapshotter.snapshot()
    finally:
        writer.kill()
        writer.communicate()
    assert seen.uncaptured["log.bin"][0] == "unstable" and "log.bin" not in seen.large
    # Once the writer let go, the next frame captures it as it settled: rewindable again.
    closed = frame(session, lambda ws: (ws / "log.bin").write_bytes(b"y" * 5000))
    assert [(c.before.kind, c.after.kind) for c in closed.changes] == [("large", "large")]
    frame_rewind.rewind(session.checkpoints, closed.frame)
    assert path.read_bytes() == b"x" * 5000


def test_half_made_objects_of_a_dead_kernel_are_swept(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    store.ensure()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (store.tmp / f"in-{dead.pid}-1").write_bytes(b"torn")
    (store.tmp / f"in-{os.getpid()}-2").write_bytes(b"ours, in progress")
    store.sweep()
    assert [p.name for p in store.tmp.iterdir()] == [f"in-{os.getpid()}-2"]


def test_with_reflinks_the_frame_keeps_the_content_it_closed_with(session, monkeypatch) -> None:
    # This file system has no reflinks: a byte copy stands in for FICLONE, so the path a
    # reflink takes (clone as the frame closes, key and store the clone afterwards) runs.
    from logician_kernel.snapshots import large_store

    def clone(src_fd: int, dst_fd: int, store: LargeFileStore) -> bool:
        os.write(dst_fd, os.pread(src_fd, 1 << 20, 0))
        store.reflinks = True
        return True

    monkeypatch.setattr(large_store, "_clone", clone)
    cp = session.checkpoints
    store = cp.budget.large.store
    v1, v2 = os.urandom(3000), os.urandom(3000)
    frame(session, lambda ws: (ws / "big.bin").write_bytes(v1))
    # Rewritten outside any frame before the background capture ran: the frame still keeps v1.
    (session.workspace / "big.bin").write_bytes(v2)
    cp.settle()
    keys = {o.key for o in store.list()}
    (session.workspace / "v1").write_bytes(v1)
    assert hash_file(session.workspace / "v1") in keys
    (session.workspace / "v1").unlink()
    # The same content again is stored once: the clone is dropped after hashing.
    frame(session, lambda ws: (ws / "big.bin").write_bytes(v1))
    cp.settle()
    assert {o.key for o in store.list()} >= keys and len(list(store.list())) == len(keys) + 1
    assert not list(store.tmp.iterdir())
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(b"small"))
    frame_rewind.rewind(cp, closed.frame)
    assert (session.workspace / "big.bin").read_bytes() == v1


@pytest.mark.parametrize("size", [1, 4095, 4096, 4097, 5 * 4096 + 17])
def test_direct_copies_keep_every_byte_whatever_the_size(tmp_path: Path, monkeypatch, size) -> None:
    from logician_kernel.snapshots import direct_copy

    monkeypatch.setattr(direct_copy, "CHUNK", 8192)  # several direct writes and a partial tail
    store = LargeFileStore(tmp_path / "large")
    src, out = tmp_path / "src.bin", tmp_path / "out.bin"
    src.write_bytes(os.urandom(size))
    key = store.put(src)
    assert key == hash_file(src)
    assert next(store.objects.rglob(key)).read_bytes() == src.read_bytes()
    out.write_bytes(b"old")
    store.restore(key, out, 0o644)
    assert out.read_bytes() == src.read_bytes()
    assert (
        not list(store.tmp.iterdir())
        and [p.name for p in tmp_path.iterdir()].count(".out.bin.logician-restore") == 0
    )


def test_where_direct_io_is_refused_the_copy_goes_through_the_page_cache(
    tmp_path: Path, monkeypatch
) -> None:
    from logician_kernel.snapshots import direct_copy

    real = os.pwrite
    refused = []

    def pwrite(fd: int, data, offset: int) -> int:  # type: ignore[no-untyped-def]
        if direct_copy.fcntl.fcntl(fd, direct_copy.fcntl.F_GETFL) & os.O_DIRECT:
            refused.append(offset)
            raise OSError(22, "Invalid argument")  # what a file system without O_DIRECT says
        return real(fd, data, offset)

    monkeypatch.setattr(direct_copy.os, "pwrite", pwrite)
    store = LargeFileStore(tmp_path / "large")
    src, out = tmp_path / "src.bin", tmp_path / "out.bin"
    src.write_bytes(os.urandom(3 << 20))
    key = store.put(src)
    store.restore(key, out, 0o600)
    assert refused and out.read_bytes() == src.read_bytes()
    assert out.stat().st_mode & 0o777 == 0o600


def test_a_source_truncated_during_the_copy_fails_the_copy_not_the_process(
    tmp_path: Path, monkeypatch
) -> None:
    # The copy reads the source through a mapping; a mapped page past the new end of file would
    # SIGBUS a reader in Python. Inside the write call it is an error that leaves nothing behind.
    from logician_kernel.snapshots import direct_copy

    monkeypatch.setattr(direct_copy, "CHUNK", 1 << 20)
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(4 << 20))
    real = os.pwrite

    def pwrite(fd: int, data, offset: int) -> int:  # type: ignore[no-untyped-def]
        if offset == 1 << 20:
            os.truncate(src, 4096)  # another process cuts the file short mid-copy
        return real(fd, data, offset)

    monkeypatch.setattr(direct_copy.os, "pwrite", pwrite)
    store = LargeFileStore(tmp_path / "large")
    with pytest.raises(OSError):
        store.put(src)
    assert not list(store.list()) and not list(store.tmp.iterdir())


def test_a_process_mapping_the_old_file_keeps_its_bytes_through_a_rewind(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    session = OpenThread.open(
        ws,
        env={"LOGICIAN_THREAD": "unit"},
        large=LargeLimits(threshold=1000, max_store_bytes=1 << 30),
    )
    old, new = os.urandom(1 << 20), os.urandom(1 << 20)  # whole blocks: copied with O_DIRECT
    frame(session, lambda ws: (ws / "big.bin").write_bytes(old))
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(new))
    reader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import hashlib, mmap, sys\n"
            "f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
            "print('mapped', flush=True); sys.stdin.readline()\n"
            "print(hashlib.sha256(m[:]).hexdigest(), flush=True)",
            str(session.workspace / "big.bin"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout.readline().strip() == "mapped"  # type: ignore[union-attr]
        frame_rewind.rewind(session.checkpoints, closed.frame)
        assert (session.workspace / "big.bin").read_bytes() == old
        out, _ = reader.communicate("go\n", timeout=30)
    finally:
        reader.kill()
        session.close()
    assert reader.returncode == 0, "the reader died (SIGBUS?) when the file was rewound"
    assert out.strip() == hashlib.sha256(new).hexdigest()  # its mapping still shows what it mapped


KILL_MID_COPY = """
import os, signal, sys
from pathlib import Path
from logician_kernel.snapshots import direct_copy
from logician_kernel.snapshots.large_store import LargeFileStore
direct_copy.CHUNK = 1 << 20
real = os.pwrite
def pwrite(fd, data, offset):
    if offset >= 1 << 20:  # the first megabyte is written: die as a power cut or kill -9 would
        os.kill(os.getpid(), signal.SIGKILL)
    return real(fd, data, offset)
direct_copy.os.pwrite = pwrite
store = LargeFileStore(Path(sys.argv[1]))
if sys.argv[2] == "put":
    store.put(Path(sys.argv[3]))
else:
    store.restore(sys.argv[3], Path(sys.argv[4]), 0o644)
"""


def test_kill_9_in_the_middle_of_a_copy_leaves_the_old_bytes_and_no_object(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    src, dest = tmp_path / "src.bin", tmp_path / "data.bin"
    src.write_bytes(os.urandom(3 << 20))
    dest.write_bytes(b"the version before the rewind" * 1000)
    before = dest.read_bytes()
    run = [sys.executable, "-c", KILL_MID_COPY, str(store.root)]
    assert subprocess.run([*run, "put", str(src)]).returncode == -9
    assert not list(store.list())  # a half-made object never gets its name
    store.sweep()
    assert not list(store.tmp.iterdir())

    key = store.put(src)
    assert subprocess.run([*run, "restore", key, str(dest)]).returncode == -9
    assert dest.read_bytes() == before  # the rewind had not renamed anything yet
    store.restore(key, dest, 0o644)  # run again (a resumed rewind): the leftover is overwritten
    assert dest.read_bytes() == src.read_bytes()
    assert not (tmp_path / ".data.bin.logician-restore").exists()


def test_a_restore_replaces_only_the_name_whatever_stood_there(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(1 << 20))
    key = store.put(src)
    linked, alias = tmp_path / "linked.bin", tmp_path / "alias.bin"
    linked.write_bytes(b"old bytes")
    os.link(linked, alias)
    fifo, target, link = tmp_path / "pipe", tmp_path / "target", tmp_path / "link"
    os.mkfifo(fifo)  # holding the old file open must not block on a FIFO nobody writes
    target.write_bytes(b"the symlink's target")
    link.symlink_to(target)
    for dest in (linked, fifo, link):
        store.restore(key, dest, 0o644)
        assert dest.is_file() and not dest.is_symlink() and dest.read_bytes() == src.read_bytes()
    assert alias.read_bytes() == b"old bytes"  # another name of the old file keeps its bytes
    assert target.read_bytes() == b"the symlink's target"


def test_a_planted_or_changed_object_is_refused_and_the_file_left_alone(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    src = tmp_path / "a.bin"
    src.write_bytes(os.urandom(50_000))
    key = store.put(src)
    obj = next(p for p in store.objects.rglob("*") if p.is_file())
    obj.chmod(0o600)
    obj.write_bytes(os.urandom(50_000))  # same size, other bytes
    out = tmp_path / "out.bin"
    out.write_bytes(b"the user's current bytes")
    with pytest.raises(OSError, match="failed its check") as err:
        store.restore(key, out, 0o644)
    assert "Errno" not in str(err.value)
    assert out.read_bytes() == b"the user's current bytes"
    assert [p.name for p in tmp_path.iterdir() if "logician-restore" in p.name] == []


def test_a_preseeded_object_is_replaced_by_the_real_copy(tmp_path: Path) -> None:
    store = LargeFileStore(tmp_path / "large")
    src = tmp_path / "a.bin"
    src.write_bytes(os.urandom(50_000))
    key = hash_file(src)
    planted = store._path(key)
    planted.parent.mkdir(parents=True)
    planted.write_bytes(os.urandom(50_000))
    assert store.put(src) == key
    assert planted.read_bytes() == src.read_bytes()
    out = tmp_path / "out.bin"
    store.restore(key, out, 0o644)
    assert out.read_bytes() == src.read_bytes()
