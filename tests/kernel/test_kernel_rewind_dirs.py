"""Directories follow their files, and undo is byte-exact, through a real kernel: a cell that
runs `git init` is rewound to an empty folder and undone to the same tree, and a SQLite
database a cell wrote comes back byte for byte."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


def whole_tree(ws: Path) -> dict[str, tuple[str, int]]:
    """Every directory and file under `ws` but our own store, nested `.git` folders included:
    sha256 (or "dir") and the full mode bits."""
    out: dict[str, tuple[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        rel_dir = Path(dirpath).relative_to(ws)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in (".logician", ".git")]
        for name in dirnames:
            full = Path(dirpath, name)
            out[str(full.relative_to(ws)) + "/"] = ("dir", os.lstat(full).st_mode & 0o7777)
        for name in filenames:
            full = Path(dirpath, name)
            out[str(full.relative_to(ws))] = (
                hashlib.sha256(full.read_bytes()).hexdigest(),
                os.lstat(full).st_mode & 0o7777,
            )
    return out


GIT = (
    "!git init -q d && git -C d -c user.name=t -c user.email=t@t commit -q --allow-empty -m x"
    " && git clone -q d d2"
)


def test_git_init_is_rewound_to_nothing_and_undone_to_the_same_tree(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("x = 1").status == "ok"
        before = whole_tree(workspace)
        r = k.run(GIT)
        assert r.status == "ok", r.text
        assert (workspace / "d" / ".git" / "objects" / "pack").is_dir()
        after = whole_tree(workspace)
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        left = sorted(set(whole_tree(workspace)) - set(before))
        assert left == [], f"left behind: {left}\n{r.text}"
        assert "inside a nested git repository" not in r.text, r.text
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert "recreated d/.git/objects/pack/ (a directory the rewind removed)" in r.text
        now = whole_tree(workspace)
        assert sorted(set(after) ^ set(now)) == []
        assert now == after
        assert k.run("!git -C d2 log --format=%s").stdout.strip() == "x"
    finally:
        k.shutdown()


@pytest.mark.parametrize("detector", ["inotify", "scan"])
def test_directories_made_with_no_file_are_removed_by_a_rewind_and_made_again_by_undo(
    workspace: Path, kernel_env: dict[str, str], detector: str
) -> None:
    """Before: `os.makedirs('a/b')` left `a/b` behind after the rewind (no file to find it by),
    and only the directories above a restored file went."""
    (workspace / "old").mkdir()
    env = {**kernel_env, "LOGICIAN_CHECKPOINTS__CHANGE_DETECTION": detector}
    k = Kernel(workspace, env)
    try:
        assert k.run("import os\nos.makedirs('kept/here')").status == "ok"
        before = whole_tree(workspace)
        r = k.run("os.makedirs('a/b/c')\nos.makedirs('old/deep/er', mode=0o750)")
        assert r.status == "ok", r.text
        assert k.run("open('x.txt', 'w').write('x')").status == "ok"
        after = whole_tree(workspace)
        r = k.run("%logician rewind 2")
        assert r.status == "ok", r.text
        assert "deleted   a/b/c/ (an empty directory the rewound frames made)" in r.text, r.text
        assert whole_tree(workspace) == before  # kept/here, made by frame 1, stays
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert whole_tree(workspace) == after  # modes included
    finally:
        k.shutdown()


NESTED = (
    "!git init -q gitdemo && echo hi > gitdemo/a.txt && git -C gitdemo add a.txt"
    " && git -C gitdemo -c user.name=t -c user.email=t@t commit -q -m first"
    " && git clone -q gitdemo gitdemo2"
)


def test_a_nested_repository_over_three_frames_is_rewound_and_undone_exactly(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    shutil.rmtree(workspace / ".git")
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("x = 1").status == "ok"
        before = whole_tree(workspace)
        r = k.run(NESTED)
        assert r.status == "ok", r.text
        r = k.run("!git -C gitdemo -c user.name=t -c user.email=t@t commit -q --allow-empty -m 2")
        assert r.status == "ok", r.text
        r = k.run("!echo more > gitdemo/b.txt")
        after = whole_tree(workspace)
        r = k.run("%logician rewind 2")
        assert r.status == "ok", r.text
        assert r.text.count("gitdemo/ ") == 1 and "not captured" not in r.text, r.text
        now = whole_tree(workspace)
        assert sorted(set(now) ^ set(before)) == [], r.text
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert whole_tree(workspace) == after
    finally:
        k.shutdown()


SQL = """
import sqlite3
con = sqlite3.connect('shop.db')
con.execute('create table t (a integer, b text)')
con.executemany('insert into t values (?, ?)', [(i, str(i) * 3) for i in range(200)])
con.commit()
"""


def test_a_sqlite_database_comes_back_byte_for_byte(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run(SQL + "con.close()").status == "ok"
        r = k.run(
            "con = sqlite3.connect('shop.db'); con.execute('insert into t values (1, 2)')"
            "; con.commit(); con.close()"
        )
        assert r.status == "ok", r.text
        written = (workspace / "shop.db").read_bytes()
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (workspace / "shop.db").read_bytes() != written
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert (workspace / "shop.db").read_bytes() == written
        assert "header may differ" not in r.text
    finally:
        k.shutdown()


def test_a_database_a_connection_still_holds_comes_back_byte_for_byte(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    """The notebook's `con` stays open: the copy is taken under a read lock, not rebuilt."""
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run(SQL + "con.close()").status == "ok"
        r = k.run(
            "con = sqlite3.connect('shop.db'); con.execute('insert into t values (1, 2)')"
            "; con.commit()"
        )
        assert r.status == "ok", r.text
        written = (workspace / "shop.db").read_bytes()
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (workspace / "shop.db").read_bytes() != written
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert (workspace / "shop.db").read_bytes() == written
        assert "header bytes" not in r.text
    finally:
        k.shutdown()


def test_a_wal_database_held_open_is_restored_and_says_its_header_may_differ(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    """In WAL mode the commits live in `-wal`: only the backup API gives a whole copy."""
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run(SQL + "con.close()").status == "ok"
        r = k.run(
            "con = sqlite3.connect('shop.db'); con.execute('pragma journal_mode=wal')"
            "; con.execute('insert into t values (1, 2)'); con.commit()"
        )
        assert r.status == "ok", r.text
        assert (workspace / "shop.db-wal").exists()
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert "header bytes (change counter, schema cookie) may differ" in r.text, r.text
        r = k.run(
            "c2 = sqlite3.connect('file:shop.db?mode=ro', uri=True)"
            "; print(c2.execute('select count(*) from t').fetchone()[0]); c2.close()"
        )
        assert r.stdout.strip() == "201", r.text
    finally:
        k.shutdown()
