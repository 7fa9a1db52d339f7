"""No tool process outlives its kernel: a guard process, a subreaper kernel, a record of groups.

Owns three safety nets for the processes a kernel starts (tools, hooks, MCP servers, cell
subprocesses). First, the kernel makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`,
Linux): a process that double-forks or calls `setsid` to leave its group is reparented to the
kernel, not to init, so it stays in the kernel's process tree. Second, a small guard process per
kernel (`_guard_script`), in a session of its own, watches that tree and holds the read end of a
pipe whose only writer is the kernel: when the kernel is gone, however it died (kill -9
included), the guard kills every process of the tree and every registered tool group, and
leaves a count for the next kernel. `prctl(PR_SET_PDEATHSIG)` would not do: it follows the
parent *thread*, and it reaches only the direct child, not what the shell started. Third, each
live tool group is written to `.logician/processes/<pgid>.json` with the call that started it,
so a restarted kernel kills a group that survived even the guard (the guard was killed with it)
and tells the user. Anyone who can write the workspace can write those records, so each carries
a MAC made with the user's state key (`durable/blob_key.py`); a record without a valid one names
no group to kill.

A subreaper must reap what it adopts: a thread reaps the kernel's zombie children that are
adopted (in a group neither the kernel's nor their own), never one the kernel started itself,
whose exit status its `Popen` still waits for. Without Linux (no prctl, no /proc) only the
group records and the pipe remain, as before.

Must never: kill a group this kernel did not start, a group a live kernel still owns, or a
group named by a record whose MAC does not verify.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import hmac
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..durable import BlobKey, pid_alive, private_dir, write_private
from ..durable.state_dir import state_path
from . import _guard_script as script

_RECORD_DOMAIN = b"logician process record v1\0"

PROCESS_DIR = Path(".logician") / "processes"
"""Where live tool process groups are recorded, under the workspace (the kernel's state dir)."""

_PR_SET_CHILD_SUBREAPER = 36
_REAP_SECONDS = 1.0
"""How often adopted zombies are reaped (each is one process-table slot until then)."""
_GUARD_WAIT_SECONDS = 10.0
"""How long a new kernel waits for the guard of a dead one to finish its count."""

_lock = threading.Lock()
_guard: subprocess.Popen[str] | None = None
_preamble: list[str] = []
"""What every guard (a restarted one too) is told first: tree mode and the state directory."""


def _tell_guard(line: str | None) -> None:
    global _guard
    with _lock:
        for _attempt in range(2):
            fresh = _guard is None or _guard.poll() is not None
            if fresh:
                me = script.process_stat(os.getpid())
                _guard = subprocess.Popen(  # noqa: S603 - our own interpreter and script
                    [
                        sys.executable,
                        "-I",
                        "-S",
                        script.__file__,
                        str(os.getpid()),
                        str(me[3] if me is not None else -1),
                    ],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    start_new_session=True,  # a kill of the kernel's group must not take it
                )
            assert _guard is not None
            lines = [*(_preamble if fresh else ()), *([line] if line is not None else [])]
            try:
                assert _guard.stdin is not None
                _guard.stdin.write("".join(f"{item}\n" for item in lines))
                _guard.stdin.flush()
                return
            except OSError:
                _guard = None  # it died: start a new one and say it again


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux); whether it now is one."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # no libc to load or no prctl in it: not Linux after all
        return False


def guard_kernel_tree() -> bool:
    """At kernel start: the kernel becomes a subreaper and the guard watches its whole tree,
    so even a `setsid` double-fork of a tool or a cell dies with the kernel. Whether the
    tree is guarded (False off Linux: only tool groups are, as before)."""
    if not become_subreaper():
        return False
    me = script.process_stat(os.getpid())
    if me is not None:  # inherited by every process started from here on, the guard included
        os.environ[script.TREE_MARK] = f"{os.getpid()}:{me[3]}"
    with _lock:
        if "T" not in _preamble:
            _preamble.insert(0, "T")
    _tell_guard("T")
    threading.Thread(target=_reap_adopted_loop, name="logician-reaper", daemon=True).start()
    return True


def note_state_dir(workspace: Path) -> None:
    """Tell the tree guard where to leave its count for the next kernel
    (`.logician/processes`); nothing where no tree is guarded (`%load_ext` in an IPython)."""
    with _lock:
        if "T" not in _preamble:
            return
    directory = state_path(workspace) / PROCESS_DIR.name
    try:
        private_dir(directory)
    except OSError:
        return  # no count for the next kernel; the guard still kills
    with _lock:
        _preamble[:] = [line for line in _preamble if not line.startswith("W")]
        _preamble.append(f"W{directory}")
    _tell_guard(f"W{directory}")


def _reap_adopted_loop() -> None:
    while True:
        time.sleep(_REAP_SECONDS)
        # A tool may have killed the guard (same user): start a new one, which takes a fresh
        # look at the tree, rather than wait for the next tool call to notice.
        _tell_guard(None)
        reap_adopted_zombies()


def reap_adopted_zombies() -> int:
    """Reap this process's zombie children that it adopted as a subreaper; how many.

    Adopted means: in a process group that is neither ours nor its own. What this process
    starts inherits our group, or leads its own (`start_new_session`, `process_group=0`),
    and its `Popen` must keep its exit status; an orphan of a tool's group or a `setsid`
    double-fork is in its old leader's group. An adopted one that led its own group or
    shares ours is left as a zombie until the kernel exits: safe, merely one slot."""
    try:
        # One cheap call first: with no zombie child at all there is nothing to look at.
        if os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            return 0
    except ChildProcessError:
        return 0  # no children at all
    me, my_group = os.getpid(), os.getpgrp()
    reaped = 0
    for pid, (state, ppid, pgrp, _start) in script.process_table().items():
        if ppid != me or state != "Z" or pgrp in (my_group, pid):
            continue
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                reaped += 1
    return reaped


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
            guard.stdin.write("Q\n")  # an orderly exit: kill what is left, record nothing
            guard.stdin.close()
    try:
        guard.wait(timeout=2)
    except subprocess.TimeoutExpired:
        guard.kill()
        guard.wait()


def watch(pgid: int, workspace: Path, *, tool: str, describe: str) -> None:
    """A tool started process group `pgid`: it dies with the kernel from now on."""
    _tell_guard(f"+{pgid}")
    record: dict[str, object] = {
        "pgid": pgid,
        "kernel_pid": os.getpid(),
        "tool": tool,
        "call": describe,
    }
    try:
        record["mac"] = _record_mac(record, state_key())
        directory = state_path(workspace) / PROCESS_DIR.name
        private_dir(directory)
        write_private(directory / f"{pgid}.json", json.dumps(record).encode())
    except OSError:
        pass  # the guard still covers it; the record is the second net only


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies awaiting a reaper do not count:
    in a container, orphans may never be reaped)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True  # cannot tell zombies apart here; the grace simply runs out
    with os.scandir(proc) as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:
                continue
            # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] != b"Z":
                return True
    return False


def release(pgid: int, workspace: Path) -> None:
    """The group is gone (or deliberately outlives the call, still guarded): forget the record
    only when no process of it is left."""
    if group_alive(pgid):
        return
    _tell_guard(f"-{pgid}")
    try:
        (state_path(workspace) / PROCESS_DIR.name / f"{pgid}.json").unlink()
    except OSError:
        pass


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
    directory = state_path(workspace) / PROCESS_DIR.name
    notices = _guard_counts(directory)
    try:
        files = sorted(path for path in directory.glob("*.json") if path.stem.isdigit())
    except OSError:
        return notices
    if not files:
        return notices
    key = key or state_key()
    try:
        key.secret()
    except OSError as exc:
        return [
            *notices,
            f"Logician: the records in {directory} were not checked, no process "
            f"was killed: {exc.strerror or exc}.",
        ]
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
        if owner != os.getpid() and pid_alive(owner) and _owner_is_kernel(owner, pgid):
            continue  # another kernel on this workspace still owns it
        if group_alive(pgid):
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
        notices.append(
            f"Logician: {refused} record(s) in {directory} failed their check (not "
            "written by your kernel): removed; no process was killed for them."
        )
    return notices


def _guard_counts(directory: Path) -> list[str]:
    """The count each dead kernel's guard left: one notice per dead kernel, said once. A guard
    still killing (its kernel just died, we are the restart) is waited for, within a bound."""
    deadline = time.monotonic() + _GUARD_WAIT_SECONDS
    try:
        guards = sorted(directory.glob(script.GUARD_RECORD.format(kernel="*")))
    except OSError:
        guards = []
    for path in guards:
        try:
            record = json.loads(path.read_text())
            kernel, guard = int(record["kernel_pid"]), int(record["guard_pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not ours to judge; a torn record is rewritten by its guard
        if _running(kernel):
            continue  # a live kernel's guard (ours included): still on duty
        while path.exists() and _running(guard) and time.monotonic() < deadline:
            time.sleep(0.02)
        with contextlib.suppress(OSError):
            path.unlink()  # its guard was killed before it could say; nothing to wait for
    notices: list[str] = []
    try:
        counts = sorted(directory.glob(script.REAPED_RECORD.format(kernel="*")))
    except OSError:
        return notices
    for path in counts:
        try:
            record = json.loads(path.read_text())
            count, kernel = int(record["count"]), int(record["kernel_pid"])
        except (OSError, ValueError, KeyError, TypeError):
            count, kernel = 0, 0  # unreadable: dropped below, never shown twice
        with contextlib.suppress(OSError):
            path.unlink()
        if count > 0:
            noun = "process" if count == 1 else "processes"
            notices.append(
                f"Logician: the previous kernel (pid {kernel}) died with {count} {noun} it had "
                f"started still running (tools, cell subprocesses or what they started); "
                f"{'it was' if count == 1 else 'they were'} killed."
            )
    return notices


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie is finished, only not yet reaped)."""
    if not Path("/proc").is_dir():
        return pid_alive(pid)
    stat = script.process_stat(pid)
    return stat is not None and stat[0] != "Z"


def _owner_is_kernel(pid: int, pgid: int) -> bool:
    """A recycled pid is not the owner: the owner is a live process that is not in the group."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True  # no /proc: trust the pid
    fields = stat[stat.rfind(b")") + 2 :].split()
    return len(fields) >= 3 and int(fields[2]) != pgid and fields[0] != b"Z"


def reap_for_workspace(workspace: Path, key: BlobKey) -> list[str]:
    """What a workspace hands in as its reaper (`OpenThread.open(reap=...)`): note
    where this kernel's guard leaves its count, then kill the groups a dead kernel left."""
    note_state_dir(workspace)
    return reap_orphans(workspace, key)
