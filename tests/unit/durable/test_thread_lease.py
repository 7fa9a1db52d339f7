"""The thread lease: taken over only when stale, never when fresh, and a holder whose lease was
taken over cannot append to the ledger (fencing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from logician_kernel.durable.lease import (
    TEST_HOST,
    TEST_STALE,
    LeaseHeld,
    LeaseLost,
    ThreadLease,
    live_holder,
    read_lease,
)
from logician_kernel.ledger.thread_ledger import SessionStart, ThreadLedger, read_entries

A = {TEST_HOST: "host-a"}
B = {TEST_HOST: "host-b"}


def _age(path: Path, seconds: float) -> None:
    """Make the lease's heartbeat `seconds` old, as a holder that stopped beating leaves it."""
    fields = json.loads(path.read_bytes())
    fields["heartbeat"] -= seconds
    path.write_bytes(json.dumps(fields).encode().ljust(511) + b"\n")


def _start(ledger: ThreadLedger) -> None:
    ledger.append(SessionStart, kernel_session="k", pid=os.getpid(), workspace="/w", version="0")


def test_a_fresh_lease_on_another_host_is_never_taken(tmp_path: Path) -> None:
    path = tmp_path / "t.lease"
    held = ThreadLease.acquire(path, env=A, stale_after=30, heartbeat=30)
    try:
        with pytest.raises(LeaseHeld) as exc:
            ThreadLease.acquire(path, env=B, stale_after=30)
        assert "pid" in str(exc.value) and "host-a" in str(exc.value)
        held.check()  # still the holder's
        holder = live_holder(path, env=B)
        assert holder is not None and holder.host == "host-a"
    finally:
        held.release()


def test_a_stale_lease_is_taken_over_with_the_next_token(tmp_path: Path) -> None:
    path = tmp_path / "t.lease"
    old = ThreadLease.acquire(path, env=A, stale_after=30, heartbeat=30)
    _age(path, 60)  # host A stopped beating a minute ago
    new = ThreadLease.acquire(path, env=B, stale_after=30, heartbeat=30)
    try:
        assert new.record.token == old.record.token + 1
        assert new.taken_from is not None and new.taken_from.host == "host-a"
        assert new.taken_because is not None and "no heartbeat for" in new.taken_because
        with pytest.raises(LeaseLost, match="taken over by the kernel pid .* on host host-b"):
            old.check()
        new.check()
        assert not list(tmp_path.glob("*.taken-*"))  # the aside copy is cleaned away
    finally:
        new.release()
        old.release()
    # The stale holder's release wrote nothing into the new holder's lease.
    record = read_lease(path)
    assert record is not None and record.host == "host-b" and record.released


def test_a_released_lease_is_taken_at_once_and_its_token_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.lease"
    first = ThreadLease.acquire(path, env=A)
    first.release()
    assert live_holder(path, env=B) is None
    second = ThreadLease.acquire(path, env=B)
    try:
        assert second.record.token == first.record.token + 1
        assert second.taken_because == "its holder released it"
    finally:
        second.release()


def test_a_dead_process_on_this_host_is_taken_over_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / "t.lease"
    code = (
        "import sys; from logician_kernel.durable.lease import ThreadLease; "
        "ThreadLease.acquire(sys.argv[1], env={'LOGICIAN_TEST_HOST': 'host-a'}); print('held')"
    )
    # The child takes the lease and exits without releasing it (as kill -9 would leave it).
    done = subprocess.run(
        [sys.executable, "-c", code.replace("print('held')", "import os; os._exit(0)"), str(path)],
        check=True,
        timeout=60,
    )
    assert done.returncode == 0
    record = read_lease(path)
    assert record is not None and not record.released
    lease = ThreadLease.acquire(path, env=A, stale_after=3600)  # same host: the pid is gone
    try:
        assert lease.taken_because == f"process {record.pid} is gone"
    finally:
        lease.release()


def test_the_heartbeat_keeps_a_lease_fresh(tmp_path: Path) -> None:
    path = tmp_path / "t.lease"
    lease = ThreadLease.acquire(path, env=A, stale_after=30, heartbeat=0.05)
    try:
        first = read_lease(path)
        assert first is not None
        deadline = time.monotonic() + 60
        while (now := read_lease(path)) is None or now.heartbeat == first.heartbeat:
            assert time.monotonic() < deadline, "the heartbeat never rewrote the lease"
            time.sleep(0.05)
        assert path.stat().st_size == 512  # fixed size: a client caching sizes reads it whole
    finally:
        lease.release()


def test_fencing_refuses_a_stale_holders_append(tmp_path: Path) -> None:
    lease_path = tmp_path / "t.lease"
    old = ThreadLease.acquire(lease_path, env=A, stale_after=30, heartbeat=30)
    ledger_a = ThreadLedger(tmp_path, "t", fence=old.check)
    _start(ledger_a)
    _age(lease_path, 60)
    new = ThreadLease.acquire(lease_path, env=B, stale_after=30, heartbeat=30)
    ledger_b = ThreadLedger(tmp_path, "t", fence=new.check)
    try:
        _start(ledger_b)
        with pytest.raises(LeaseLost, match="no longer writes that thread"):
            _start(ledger_a)
        with pytest.raises(LeaseLost):  # and it stays refused
            _start(ledger_a)
        _start(ledger_b)
        seqs = [e.seq for e in read_entries(tmp_path / "t.jsonl")]
        assert seqs == [1, 2, 3]  # dense, in order: nothing of A's after the takeover
    finally:
        ledger_a.close()
        ledger_b.close()
        new.release()
        old.release()


def test_a_ledger_seen_shorter_than_its_last_holder_left_it_is_not_written(
    tmp_path: Path,
) -> None:
    from logician_kernel.workspace.open_thread import OpenThread

    ws = tmp_path / "ws"
    ws.mkdir()
    env_a = {"LOGICIAN_THREAD": "t", TEST_STALE: "30", **A}
    first = OpenThread.open(ws, env=env_a, capture_enabled=False)
    assert first.ledger is not None and first.lease is not None
    lease = ws / ".logician" / "threads" / "t.lease"
    ledger = ws / ".logician" / "threads" / "t.jsonl"
    # Host A dies after a heartbeat that saw the whole ledger (no release, as kill -9).
    first.lease._stop.set()
    first.lease._write(
        replace(first.lease.record, heartbeat=time.time() - 60, ledger_bytes=ledger.stat().st_size)
    )
    whole = ledger.read_bytes()
    first.ledger.close()
    first._lock.release()  # type: ignore[union-attr]
    ledger.write_bytes(whole[:-10])  # what host B's stale cache of the file shows
    env_b = {"LOGICIAN_THREAD": "t", **B}
    for _ in range(2):  # refused again while the view stays short, not only once
        second = OpenThread.open(ws, env=env_b, capture_enabled=False)
        try:
            assert second.ledger is None
            assert any("this mount shows an older copy" in n for n in second.notices), (
                second.notices
            )
        finally:
            second.close()
    assert ledger.read_bytes() == whole[:-10]  # nothing appended on top of the stale view
    assert read_lease(lease) is not None
    ledger.write_bytes(whole)  # the mount catches up: the thread opens
    third = OpenThread.open(ws, env=env_b, capture_enabled=False)
    try:
        assert third.ledger is not None, third.notices
    finally:
        third.close()
