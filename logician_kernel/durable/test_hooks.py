"""Hooks that let a test stop the kernel at an exact point, so a crash is reproducible.

`LOGICIAN_TEST_KILL_IN_CALL=<tool>` kills this process (SIGKILL, as `kill -9` does) right
after a call of that tool has had its effect and before its result is recorded. Unset (always,
outside tests) it costs one environment lookup per tool call.

`LOGICIAN_TEST_KILL_BEFORE_FSYNC=<kind>` (a ledger record kind, e.g. `frame_close`) kills it
after a record of that kind is written to the ledger file and before the fsync that would make
it durable, wherever that fsync runs (in the append, or a later `sync`). First it writes
`<ledger>.synced`: how many bytes of the file the last fsync covered, so a test can also cut
what a power loss could have taken. Unset it costs one environment lookup per ledger append.

`LOGICIAN_TEST_HOLD_FULL_SCAN=<file>` holds every full snapshot (the first one, taken in the
background from kernel start, above all) before it writes its objects, until `<file>` exists
(two minutes at most): a test of what happens while the first snapshot runs is then exact.

`LOGICIAN_TEST_KILL_MID_PACK=<N>` kills it in the middle of writing the first pack of at least
`N` blobs a frame's snapshot stores (`snapshots/git_pack.py`): half of the pack's bytes are in
its temporary file, nothing under its name. Unset it costs one environment lookup per pack.
`LOGICIAN_TEST_SLOW_FIRST_SNAPSHOT=<seconds>` makes the packers of a first snapshot wait that
long after each file they read, so its progress reports are many and a test sees them rise.

`LOGICIAN_TEST_FAULT=<op>:<N>:<what>` makes the Nth durable `<op>` of this process after
the variable was set (`write`, `fsync` or `rename`, counted in `durable/fsync.py`, which every
durable write goes through) fail with `<what>` (`ENOSPC` or `EIO`), or `kill` the process
there (SIGKILL). Several faults are separated by commas; `N` may be `N+` (the Nth and every
later one, a disk that stays full). `LOGICIAN_TEST_FAULT_LOG=<file>` gets one line per
fault that fired (`<op> <n> <what> <where>`), so a test knows whether its N was reached. Unset
it costs one environment lookup per durable operation.

Must never: be set by the kernel itself, or do anything when unset.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
import time
from pathlib import Path

KILL_IN_CALL = "LOGICIAN_TEST_KILL_IN_CALL"
KILL_BEFORE_FSYNC = "LOGICIAN_TEST_KILL_BEFORE_FSYNC"
HOLD_FULL_SCAN = "LOGICIAN_TEST_HOLD_FULL_SCAN"
KILL_MID_PACK = "LOGICIAN_TEST_KILL_MID_PACK"
SLOW_FIRST_SNAPSHOT = "LOGICIAN_TEST_SLOW_FIRST_SNAPSHOT"
FAULT = "LOGICIAN_TEST_FAULT"
FAULT_LOG = "LOGICIAN_TEST_FAULT_LOG"
FAULT_OPS = ("write", "fsync", "rename")

_faults_seen: dict[str, object] = {"spec": None}
_fault_counts: dict[str, int] = {}
_fault_lock = threading.Lock()


def inject_fault(op: str, where: object = "") -> None:
    """Fail (or die) here if a test armed a fault for this durable `op` (module docstring)."""
    spec = os.environ.get(FAULT)
    if not spec:
        return
    with _fault_lock:
        if spec != _faults_seen["spec"]:  # a new arming counts from zero
            _faults_seen["spec"] = spec
            _fault_counts.clear()
        count = _fault_counts[op] = _fault_counts.get(op, 0) + 1
    for fault in spec.split(","):
        kind, _, rest = fault.strip().partition(":")
        nth, _, what = rest.partition(":")
        if kind != op or not nth:
            continue
        hit = count >= int(nth[:-1]) if nth.endswith("+") else count == int(nth)
        if not hit:
            continue
        if log := os.environ.get(FAULT_LOG):
            with open(log, "a") as fh:
                fh.write(f"{op} {count} {what} {where}\n")
        if what == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        code = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO}[what]
        raise OSError(code, f"{os.strerror(code)} (injected: {op} #{count})", str(where) or None)


def stop_inside_call(tool: str) -> None:
    """Die here if a test asked for it for `tool`."""
    if os.environ.get(KILL_IN_CALL) == tool:
        os.kill(os.getpid(), signal.SIGKILL)


def arms_fsync_kill(kind: object) -> bool:
    """Whether a test asked to die before the fsync of a record of this `kind`."""
    wanted = os.environ.get(KILL_BEFORE_FSYNC)
    return wanted is not None and wanted == kind  # unset: never (records without a kind too)


def stop_before_fsync(ledger: Path, synced: int) -> None:
    """Die here (an armed record is written, not fsynced), saying what the disk holds for sure."""
    ledger.with_name(f"{ledger.name}.synced").write_text(f"{synced}\n")
    os.kill(os.getpid(), signal.SIGKILL)


def stop_mid_pack(temp: str, data: bytes, blobs: int) -> None:
    """Die here with half of `data` written to `temp`, if a test asked for packs of `blobs`."""
    wanted = os.environ.get(KILL_MID_PACK)
    if not wanted or blobs < int(wanted):
        return
    with open(temp, "wb") as fh:
        fh.write(data[: len(data) // 2])
        fh.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def hold_full_scan() -> None:
    """Wait here while a test holds full snapshots (see the module docstring)."""
    release = os.environ.get(HOLD_FULL_SCAN)
    deadline = time.monotonic() + 120
    while release and not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.05)


def first_snapshot_delay() -> float:
    """Seconds a first snapshot's packer waits after each file (0 unless a test asked)."""
    return float(os.environ.get(SLOW_FIRST_SNAPSHOT) or 0)
