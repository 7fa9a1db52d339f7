"""A SQLite database's capture: its own bytes whenever a whole copy can be taken, even with a
connection open; the backup API only in WAL mode, remembered across sessions."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from logician_kernel.snapshots.large_files import LargeFiles
from logician_kernel.snapshots.large_store import LargeFileStore


def _db(path: Path, *, wal: bool) -> sqlite3.Connection:
    con = sqlite3.connect(path)
    if wal:
        con.execute("pragma journal_mode=wal")
    con.execute("create table t (a)")
    con.executemany("insert into t values (?)", [(i,) for i in range(100)])
    con.commit()
    return con


def _stored_bytes(store: LargeFileStore, key: str) -> bytes:
    return store._path(key).read_bytes()


def test_a_database_held_open_is_stored_byte_for_byte(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    con = _db(ws / "shop.db", wal=False)  # still open, as a notebook's `con` is
    try:
        large = LargeFiles(ws, LargeFileStore(tmp_path / "store"))
        state = large.capture("shop.db", os.stat(ws / "shop.db"))
        assert state.kind == "large" and state.sha is not None
        assert _stored_bytes(large.store, state.sha) == (ws / "shop.db").read_bytes()
        assert state.sha not in large.via_backup
        con.execute("insert into t values (1)")  # the read lock was let go
        con.commit()
    finally:
        con.close()


def test_a_wal_database_held_open_goes_through_the_backup_api_and_is_remembered(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    con = _db(ws / "shop.db", wal=True)
    try:
        large = LargeFiles(ws, LargeFileStore(tmp_path / "store"))
        state = large.capture("shop.db", os.stat(ws / "shop.db"))
        assert state.kind == "large" and state.sha in large.via_backup
    finally:
        con.close()
    later = LargeFiles(ws, LargeFileStore(tmp_path / "store"))  # a new session
    assert state.sha in later.via_backup
