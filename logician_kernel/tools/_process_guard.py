"""No tool process outlives its kernel: a guard process, and a record of every live group.

Owns two safety nets for the process groups tools start (`bash`, hook commands; MCP servers
later). First, a small guard process per kernel, in a session of its own, holds the read end of
a pipe whose only writer is the kernel: the pipe reaches end-of-file only when the kernel is gone,
however it died (kill -9 included), and the guard then SIGKILLs every group still registered.
`prctl(PR_SET_PDEATHSIG)` would not do: it follows the parent *thread*, and it reaches only the
direct child, not what the shell started. Second, each live group is written to
`.logician/processes/<pgid>.json` with the call that started it, so a restarted kernel kills a
group that survived even the guard (the guard was killed with it) and tells the user. Anyone
who can write the workspace can write those records, so each carries a MAC made with the
user's state key (`session/blob_key.py`); a record without a valid one names no group to kill.

Must never: kill a group this kernel did not start, a group a live kernel still owns, or a
group named by a record whose MAC does not verify.
"""

from __future__ import annotations

import atexit
import contextlib
import hmac
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from ..session._private import private_dir, write_private
from ..session.blob_key import BlobKey

_RECORD_DOMAIN = b"logician process record v1\0"

PROCESS_DIR = Path(".logician") / "processes"
"""Where live tool process groups are recorded, under the workspace (the kernel's state dir)."""

_GUARD = r"""
import os, signal, sys
groups = set()
for line in sys.stdin:
    sign, pgid = line[0], int(line[1:])
    (groups.add if sign == "+" else groups.discard)(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_guard: subprocess.Popen[str] | None = None


def _tell_guard(line: str) -> None:
    global _guard
    with _lock:
        for _attempt in range(2):
            if _guard is None or _guard.poll() is not None:
                _guard = subprocess.Popen(  # noqa: S603 - our own interpreter and script
                    [sys.executable, "-c", _GUARD],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    start_new_session=True,  # a kill of the kernel's group must not take it
                )
            try:
                assert _guard.stdin is not None
                _guard.stdin.write(line + "\n")
                _guard.stdin.flush()
                return
            except OSError:
                _guard = None  # it died: start a new one and say it again


@atexit.register
def _stop_guard() -> None:
    """At interpreter exit, do now what the guard would do once we are gone: close its pipe (it
    kills the groups still registered) and reap it, so no guard is left running unwaited for."""
    global _guard
    with _lock:
        guard, _guard = _guard, None
    if guard is None:
        return
    with contextlib.suppress(OSError):
        if guard.stdin is not None:
            guard.stdin.close()
    try:
        guard.wait(timeout=2)
    except subprocess.TimeoutExpired:
        guard.kill()
        guard.wait()


def watch(pgid: int, workspace: Path, *, tool: str, describe: str) -> None:
    """A tool started process group `pgid`: it dies with the kernel from now on."""
    _tell_guard(f"+{pgid}")
    record: dict[str, object] = {"pgid": pgid, "kernel_pid": os.getpid(), "tool": tool,
                                 "call": describe}  # fmt: skip
    try:
        record["mac"] = _record_mac(record, state_key())
        directory = workspace / PROCESS_DIR
        private_dir(directory)
        write_private(directory / f"{pgid}.json", json.dumps(record).encode())
    except OSError:
        pass  # the guard still covers it; the record is the second net only


def release(pgid: int, workspace: Path) -> None:
    """The group is gone (or deliberately outlives the call, still guarded): forget the record
    only when no process of it is left."""
    from ._bash import _group_alive

    if _group_alive(pgid):
        return
    _tell_guard(f"-{pgid}")
    try:
        (workspace / PROCESS_DIR / f"{pgid}.json").unlink()
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def state_key() -> BlobKey:
    """The user's state key, in the config dir this kernel's environment names."""
    from ..config._effective import user_config_dir  # config imports session: not at the top

    return BlobKey.in_dir(user_config_dir())


def _record_mac(record: dict[str, object], key: BlobKey) -> str:
    mac = key.mac(_RECORD_DOMAIN)
    fields = {k: v for k, v in record.items() if k != "mac"}
    mac.update(json.dumps(fields, sort_keys=True).encode())
    return mac.hexdigest()


def reap_orphans(workspace: Path, key: BlobKey | None = None) -> list[str]:
    """On kernel start: kill recorded groups whose kernel is dead; a notice for each. Records
    that fail their check are removed, and said so in one notice: they kill nothing."""
    from ._bash import _group_alive

    directory = workspace / PROCESS_DIR
    notices: list[str] = []
    try:
        files = sorted(directory.glob("*.json"))
    except OSError:
        return notices
    if not files:
        return notices
    key = key or state_key()
    try:
        key.secret()
    except OSError as exc:
        return [f"Logician: the records in {directory} were not checked, no process was "
                f"killed: {exc.strerror or exc}."]  # fmt: skip
    refused = 0
    for path in files:
        try:
            record = json.loads(path.read_text())
            pgid, owner = int(record["pgid"]), int(record["kernel_pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        mac = record.get("mac")  # bytes compared: compare_digest raises on non-ASCII text
        if not isinstance(mac, str) or not hmac.compare_digest(
            mac.encode("utf-8", "surrogatepass"), _record_mac(record, key).encode()
        ):
            refused += 1
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        if owner != os.getpid() and _pid_alive(owner) and _owner_is_kernel(owner, pgid):
            continue  # another kernel on this workspace still owns it
        if _group_alive(pgid):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
            notices.append(
                f"Logician: the {record.get('tool', 'tool')} call `{record.get('call', '')}` was "
                f"still running (process group {pgid}) after its kernel died; it was killed now."
            )
        try:
            path.unlink()
        except OSError:
            pass
    if refused:
        notices.append(f"Logician: {refused} record(s) in {directory} failed their check (not "
                       "written by your kernel): removed; no process was killed for them.")  # fmt: skip
    return notices


def _owner_is_kernel(pid: int, pgid: int) -> bool:
    """A recycled pid is not the owner: the owner is a live process that is not in the group."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True  # no /proc: trust the pid
    fields = stat[stat.rfind(b")") + 2 :].split()
    return len(fields) >= 3 and int(fields[2]) != pgid and fields[0] != b"Z"
