"""One writer per thread across hosts, through real kernels: two kernels that play two hosts on
one folder (`LOGICIAN_TEST_HOST`: each its own host identity and, as on a network mount, its
own flock) never both write one thread; the second is told in its first cell and in
`%logician threads`; a holder killed with -9 is taken over once its lease is stale; a holder
that was only paused and lost its lease refuses to append when it wakes."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.durable.lease import TEST_HOST, TEST_STALE, read_lease
from logician_kernel.ledger.repair import check
from logician_kernel.ledger.thread_ledger import read_entries

pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def _ledger(workspace: Path, thread: str) -> Path:
    return workspace / ".logician" / "threads" / f"{thread}.jsonl"


def _wait_stale(lease: Path, seconds: float, timeout: float = 120) -> None:
    """Until the lease's heartbeat is older than `seconds` (its holder stopped beating)."""
    deadline = time.monotonic() + timeout
    while True:
        record = read_lease(lease)
        if record is not None and time.time() - record.heartbeat > seconds + 0.5:
            return
        assert time.monotonic() < deadline, f"{lease} kept beating: {record}"
        time.sleep(0.2)


def _assert_clean(ledger: Path) -> None:
    report = check(ledger)
    assert report.healthy, "\n".join(report.lines())
    seqs = [e.seq for e in read_entries(ledger)]
    assert seqs == list(range(1, len(seqs) + 1)), seqs


def test_a_kernel_on_a_second_host_records_its_own_thread_and_says_so(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    thread = kernel_env["LOGICIAN_THREAD"]
    a = Kernel(workspace, {**kernel_env, TEST_HOST: "host-a"})
    b: Kernel | None = None
    try:
        assert a.run("open('a.txt', 'w').write('a')").status == "ok"
        b = Kernel(workspace, {**kernel_env, TEST_HOST: "host-b"})
        first = b.run("open('b.txt', 'w').write('b')")
        assert first.status == "ok", first.text
        assert f"thread {thread!r} is held by the kernel pid" in first.stderr, first.stderr
        assert "on host host-a" in first.stderr
        assert "records a thread of its own" in first.stderr
        assert "is held by" not in b.run("print(1)").stderr  # said once
        listing = b.run("%logician threads").text
        assert f"{thread}: held by the kernel pid" in listing and "host-a" in listing, listing
        assert f"Thread {thread!r} is held by" in listing, listing  # how b came by its thread
        # Both keep writing their own ledgers; the shared thread stays whole and in order.
        assert a.run("open('a.txt', 'a').write('2')").status == "ok"
        assert b.run("open('b.txt', 'a').write('2')").status == "ok"
        frames = a.run("%logician frames").text
        assert "a.txt" in frames and "b.txt" not in frames, frames
        _assert_clean(_ledger(workspace, thread))
    finally:
        if b is not None:
            b.shutdown()
        a.shutdown()


def test_a_killed_holder_is_taken_over_once_its_lease_is_stale(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    thread = kernel_env["LOGICIAN_THREAD"]
    env = {**kernel_env, TEST_STALE: "4"}
    a = Kernel(workspace, {**env, TEST_HOST: "host-a"})
    try:
        assert a.run("open('a.txt', 'w').write('a')").status == "ok"
    finally:
        a.kill9()
    lease = _ledger(workspace, thread).with_suffix(".lease")
    _wait_stale(lease, 4)  # another host cannot see a dead pid: only the heartbeat tells
    b = Kernel(workspace, {**env, TEST_HOST: "host-b"})
    try:
        first = b.run("open('b.txt', 'w').write('b')")
        assert first.status == "ok", first.text
        assert f"took thread {thread!r} over from the kernel pid" in first.stderr, first.stderr
        assert "on host host-a: no heartbeat for" in first.stderr
        listing = b.run("%logician frames").text
        assert "a.txt" in listing and "b.txt" in listing, listing  # one thread, both frames
        assert b.run("%logician rewind 1").status == "ok"
        assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
        _assert_clean(_ledger(workspace, thread))
    finally:
        b.shutdown()


def test_a_paused_holder_that_lost_its_lease_stops_appending(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    thread = kernel_env["LOGICIAN_THREAD"]
    env = {**kernel_env, TEST_STALE: "4"}
    a = Kernel(workspace, {**env, TEST_HOST: "host-a"})
    b: Kernel | None = None
    pid = a.km.provisioner.process.pid  # type: ignore[union-attr]
    try:
        assert a.run("open('a.txt', 'w').write('a')").status == "ok"
        os.kill(pid, signal.SIGSTOP)  # a VM paused, a laptop asleep: alive, but not beating
        try:
            _wait_stale(_ledger(workspace, thread).with_suffix(".lease"), 4)
            b = Kernel(workspace, {**env, TEST_HOST: "host-b"})
            took = b.run("open('b.txt', 'w').write('b')")
            assert f"took thread {thread!r} over" in took.stderr, took.stderr
        finally:
            os.kill(pid, signal.SIGCONT)
        woke = a.run("open('late.txt', 'w').write('x')")
        assert woke.status == "ok"  # the cell runs; it is only not recorded
        assert "this cell is not a frame" in woke.stderr, woke.stderr
        assert f"thread {thread!r} was taken over by the kernel pid" in woke.stderr
        assert "on host host-b" in woke.stderr
        listing = a.run("%logician threads").text
        assert "no longer writes that thread" in listing, listing
        assert b.run("open('b.txt', 'a').write('2')").status == "ok"
        _assert_clean(_ledger(workspace, thread))
        assert "late.txt" not in _ledger(workspace, thread).read_text()
    finally:
        if b is not None:
            b.shutdown()
        a.shutdown()
