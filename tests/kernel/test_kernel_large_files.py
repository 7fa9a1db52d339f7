"""Large data files through a real kernel: captured in the side store, rewound exactly, within a
disk budget that says what it evicted."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from kernel_harness import Kernel
from test_kernel_approvals import Sidebar, create_subshell
from test_kernel_comm import valid

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

MB = 1 << 20


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(8 * MB):
            digest.update(chunk)
    return digest.hexdigest()


def side_store(workspace: Path, kernel: Kernel) -> list[Path]:
    """The side store's objects, once the last cell's copies (made after its reply) are done."""
    assert "Logician storage" in kernel.run("%logician storage").text
    return sorted(
        p for p in (workspace / ".logician" / "large" / "objects").rglob("*") if p.is_file()
    )


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str]):
    k = Kernel(workspace, kernel_env)
    yield k
    k.shutdown()


def test_a_6mb_csv_and_a_300mb_binary_are_rewound_exactly_and_stored_once(
    kernel: Kernel, workspace: Path
) -> None:
    r = kernel.run(
        "import os, hashlib\n"
        "rows = ''.join(f'{i},{i * 7 % 1000},name-{i}\\n' for i in range(330_000))\n"
        "open('sales.csv', 'w').write('id,amount,name\\n' + rows)\n"
        "print(os.path.getsize('sales.csv'))"
    )
    assert r.status == "ok", r.text
    assert int(r.stdout) > 6_000_000
    original_csv = (workspace / "sales.csv").read_bytes()
    r = kernel.run("open('sales.csv', 'w').write('id,amount\\n1,2\\n')")
    assert r.status == "ok", r.text
    r = kernel.run("%logician rewind --last")
    assert r.status == "ok", r.text
    assert "skipped" not in r.text and "larger than" not in r.text, r.text
    assert (workspace / "sales.csv").read_bytes() == original_csv
    assert not list((workspace / ".logician" / "git" / "objects").rglob("*.tmp"))

    # 300 MB: written, rewritten, the same content written again under another name.
    r = kernel.run(
        "block_a, block_b = os.urandom(1 << 20), os.urandom(1 << 20)\n"
        "with open('model.bin', 'wb') as f:\n"
        "    for _ in range(300): f.write(block_a)"
    )
    assert r.status == "ok", r.text
    first = sha256(workspace / "model.bin")
    r = kernel.run(
        "with open('model.bin', 'wb') as f:\n"
        "    for _ in range(300): f.write(block_b)\n"
        "os.chmod('model.bin', 0o755)"
    )
    assert r.status == "ok", r.text
    stored = side_store(workspace, kernel)
    big = [p for p in stored if p.stat().st_size == 300 * MB]
    assert len(big) == 2, [p.name for p in stored]
    r = kernel.run(
        "import shutil\n"
        "with open('model-copy.bin', 'wb') as f:\n"
        "    for _ in range(300): f.write(block_b)"
    )
    assert r.status == "ok", r.text
    assert side_store(workspace, kernel) == stored  # the same content costs no second copy

    assert "Rewound" in kernel.run("%logician rewind --last").text
    assert not (workspace / "model-copy.bin").exists()
    r = kernel.run("%logician rewind --last")
    assert r.status == "ok" and "model.bin" in r.text, r.text
    assert sha256(workspace / "model.bin") == first
    assert not (workspace / "model.bin").stat().st_mode & 0o111
    r = kernel.run("%logician rewind --last")
    assert r.status == "ok", r.text
    assert not (workspace / "model.bin").exists()


def test_an_sqlite_database_held_open_by_another_connection_is_copied_consistently(
    kernel: Kernel, workspace: Path
) -> None:
    # WAL mode: committed rows live in the -wal file until a checkpoint, so a plain copy of
    # shop.db while connections are open would hold none of them; the backup API holds all.
    r = kernel.run(
        "import sqlite3\n"
        "con = sqlite3.connect('shop.db')\n"
        "con.execute('pragma journal_mode=wal')\n"
        "con.execute('create table orders (id integer primary key, item text)')\n"
        "con.executemany('insert into orders (item) values (?)', [(f'item{i}',) for i in range(100)])\n"
        "con.commit()"
    )
    assert r.status == "ok", r.text
    other = sqlite3.connect(workspace / "shop.db")  # another process holds it too
    try:
        assert other.execute("select count(*) from orders").fetchone() == (100,)
        r = kernel.run(
            "con.executemany('insert into orders (item) values (?)', [('late',)] * 50)\n"
            "con.commit()"
        )
        assert r.status == "ok", r.text
        assert other.execute("select count(*) from orders").fetchone() == (150,)
        r = kernel.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert "shop.db" in r.text and "aside" in r.text, r.text
    finally:
        other.close()
    fresh = sqlite3.connect(workspace / "shop.db")
    try:
        assert fresh.execute("pragma integrity_check").fetchone() == ("ok",)
        assert fresh.execute("select count(*) from orders").fetchone() == (100,)
    finally:
        fresh.close()


def test_a_tiny_budget_evicts_the_oldest_pre_images_and_says_so(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    env = dict(kernel_env)
    env["LOGICIAN_CHECKPOINTS__LARGE_FILE_BYTES"] = "100000"
    env["LOGICIAN_CHECKPOINTS__MAX_STORE_BYTES"] = "1000000"
    env["LOGICIAN_CHECKPOINTS__KEEP_RECENT_FRAMES"] = "1"
    k = Kernel(workspace, env)
    try:
        write = "open('f.bin', 'wb').write(bytes([{v}]) * 300_000)"
        assert k.run(write.format(v=1)).status == "ok"  # frame 1 creates f.bin (v1 stored)
        r = k.run(write.format(v=2) + "\nopen('note.txt', 'w').write('2')")  # frame 2: pre v1
        assert r.status == "ok", r.text
        assert k.run(write.format(v=3)).status == "ok"  # frame 3: pre v2
        r4 = k.run(write.format(v=4))  # frame 4: pre v3; v4 does not fit: v1 goes
        assert r4.status == "ok", r4.text
        assert len(side_store(workspace, k)) == 3
        # v4 is copied as frame 4's reply goes out: its output, or the next cell's, says so.
        r = k.run("x = 1")
        notice = "evicted 0.3 MB of large pre-images of frame(s) 2"
        assert notice in r4.stderr + r.stderr, r4.text + r.text

        frames = k.run("%logician frames").text.splitlines()
        marked = [ln.split()[0] for ln in frames if "large files evicted" in ln]
        assert marked == ["2"], frames
        # The sidebar's rows (the `logician` comm) say the same, naming the evicted path.
        sidebar = Sidebar(k, create_subshell(k))
        sidebar.send({"type": "frames.list", "offset": 0, "limit": 10, "id": "l"})
        listed = sidebar.wait_for("frames")
        rows = listed["rows"]
        assert {r["frame"] for r in rows} >= {1, 2, 3, 4}, rows
        assert {r["frame"]: r["evicted"] for r in rows if "evicted" in r} == {2: ["f.bin"]}, rows
        valid([listed])

        storage = k.run("%logician storage").text
        assert "budget 1.0 MB" in storage, storage
        assert "large files evicted: f.bin" in storage and "evicted so far: 1 object(s)" in storage

        r = k.run("%logician rewind 2")
        assert r.status == "ok", r.text
        assert "f.bin" in r.text and "was evicted" in r.text, r.text
        assert not (workspace / "note.txt").exists()  # the rest was restored
        assert (workspace / "f.bin").read_bytes()[:1] == bytes([4])

        r = k.run("%logician gc --keep 0")
        assert r.status == "ok", r.text
        assert "gc: freed 0.6 MB" in r.text, r.text
        assert len(side_store(workspace, k)) == 1  # only the current f.bin is left
        assert "nothing to free" in k.run("%logician gc").text
        assert "--keep must be 0 or more" in k.run("%logician gc --keep -1").text

        r = k.run("%logician config set checkpoints.min_free_bytes 1000000000000000")
        assert r.status == "ok", r.text
        first = k.run("open('g.bin', 'wb').write(b'g' * 200_000)")
        r = k.run("open('g.bin', 'ab').write(b'more')")
        assert "large-file capture paused" in first.stderr + r.stderr, first.text + r.text
        plan = k.run("%logician rewind --last --dry-run").text
        assert "g.bin" in plan and "the disk was nearly full" in plan, plan
    finally:
        k.shutdown()
