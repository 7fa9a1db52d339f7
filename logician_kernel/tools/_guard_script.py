"""The per-kernel guard process: when the kernel ends, everything it started ends with it.

Runs as a script (`python -I -S _guard_script.py`, standard library only, so it starts fast
and imports nothing of the workspace), a child of the kernel in a session of its own, so a
signal to the kernel's process group does not reach it. The kernel is a child subreaper
(`PR_SET_CHILD_SUBREAPER`, see `_process_guard`): a process that leaves its group with
`setsid` and double-forks is still reparented to the kernel, never to init, so the kernel's
process tree holds every process it started, however started. The guard takes a snapshot of
that tree every `POLL_SECONDS`; when the kernel is gone (its pipe reaches end-of-file, or the
guard was reparented away from it: kill -9 included), it stops every process of the last
snapshot and of their current subtrees (SIGSTOP first, so none can fork while it is walked),
then SIGKILLs them all and writes how many to the state directory, where the next kernel reads
it and tells the user once.

A process born and orphaned in the last moment before the kernel died may not be in any
snapshot, and by then it is init's child: so every process started under the kernel also
carries `TREE_MARK` (the kernel's pid and start time) in its environment, which a process
cannot change in `/proc/<pid>/environ` afterwards; the guard kills the marked ones too. Only a
process that scrubbed its environment *and* lived less than one look escapes both.

Started as `_guard_script.py KERNEL_PID KERNEL_START`: the kernel names itself, because a
guard that starts slowly may find its parent already gone (`os.getppid()` is then init, whose
tree is every process on the machine); such a guard looks at no tree, only at the groups and
the mark. Nothing that started before the kernel is ever signalled, whatever the tree says.

Protocol, one line each on stdin: `+<pgid>` / `-<pgid>` a tool's process group to kill / to
forget; `T` guard the whole tree of the parent; `W<dir>` the private directory for the records;
`Q` the kernel is exiting in order (kill, but record nothing).

Must never: signal itself, the kernel, init, a process older than the kernel, or one that was
not the kernel's descendant (every pid is checked against the start time it had when seen, so a
recycled pid is left alone).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys

POLL_SECONDS = 0.25
"""How often the kernel's tree is looked at; a process born and orphaned within the last look
before the kernel died may be missed (the pgid records and the next kernel's reap remain)."""

TREE_MARK = "LOGICIAN_GUARD_TREE"
"""Environment variable the kernel sets to `<pid>:<start time>`, inherited by its tree."""

GUARD_RECORD = "guard-{kernel}.json"
"""The guard's own record while it runs, so the next kernel can wait for its count."""
REAPED_RECORD = "reaped-{kernel}.json"
"""How many processes the guard killed after its kernel died, for the next kernel's notice."""


def process_table() -> dict[int, tuple[str, int, int, int]]:
    """pid -> (state, ppid, pgrp, start time) of every process in /proc (one scan: this
    kernel has no `/proc/<pid>/task/<tid>/children` to read)."""
    table: dict[int, tuple[str, int, int, int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if name.isdigit() and (stat := process_stat(int(name))) is not None:
            table[int(name)] = stat
    return table


def process_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgrp, start time) of one process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session tty tpgid flags ... starttime(22)": comm may hold
    # spaces and parentheses, so fields are counted from the last ")".
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19])
    except (IndexError, ValueError):
        return None


def descendants(root: int, table: dict[int, tuple[str, int, int, int]]) -> dict[int, int]:
    """pid -> start time of every live (non-zombie) descendant of `root` in `table`."""
    children: dict[int, list[int]] = {}
    for pid, (_state, ppid, _pgrp, _start) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    frontier = list(children.get(root, ()))
    while frontier:
        pid = frontier.pop()
        if pid in found:
            continue
        state, _ppid, _pgrp, start = table[pid]
        if state != "Z":
            found[pid] = start
        frontier.extend(children.get(pid, ()))
    return found


def marked(mark: str) -> dict[int, int]:
    """pid -> start time of every live process whose initial environment carries
    `TREE_MARK=mark` (those we may read: our own user's)."""
    needle = f"{TREE_MARK}={mark}".encode()
    found: dict[int, int] = {}
    for pid, (state, _ppid, _pgrp, start) in process_table().items():
        if state == "Z":
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue  # another user's, or gone
        if needle in environ.split(b"\0"):
            found[pid] = start
    return found


def kill_tree(seen: dict[int, int], *, spare: set[int], floor: int) -> int:
    """Stop every process in `seen` (pid -> start time) that is still the same process, and
    every descendant of one, then SIGKILL them all; how many there were. None started before
    `floor` (the kernel's start time) is ever signalled."""
    stopped: dict[int, int] = {}
    pending = dict(seen)
    while pending:
        for pid, start in pending.items():
            stat = process_stat(pid)
            if (
                pid in spare
                or pid <= 1
                or start < floor
                or stat is None
                or stat[3] != start
                or stat[0] == "Z"
            ):
                continue
            try:
                os.kill(pid, signal.SIGSTOP)  # a stopped process cannot fork while we look
            except OSError:
                continue
            stopped[pid] = start
        table = process_table()
        pending = {}
        for pid in list(stopped):
            for child, start in descendants(pid, table).items():
                if child not in stopped and child not in spare:
                    pending[child] = start
    for pid, start in stopped.items():
        stat = process_stat(pid)
        if stat is not None and stat[3] == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass  # it ended between the look and the kill: nothing left to do
    return len(stopped)


def _write_record(directory: str, name: str, record: dict[str, object]) -> None:
    path = os.path.join(directory, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(record))
        os.replace(tmp, path)
    except OSError:
        pass  # the kill happened; only the notice to the next kernel is lost


class _Said:
    """What the kernel has said on the pipe so far."""

    def __init__(self, kernel: int, me: int) -> None:
        self.kernel, self.me = kernel, me
        self.groups: set[int] = set()
        self.tree = False
        self.orderly = False
        self.state_dir: str | None = None
        self.buffer = b""

    def line(self, line: str) -> None:
        sign, rest = line[:1], line[1:]
        if sign in "+-" and rest.isdigit():
            (self.groups.add if sign == "+" else self.groups.discard)(int(rest))
        elif sign == "T":
            self.tree = True
        elif sign == "Q":
            self.orderly = True
        elif sign == "W" and rest:
            self.state_dir = rest
            _write_record(
                rest,
                GUARD_RECORD.format(kernel=self.kernel),
                {"kernel_pid": self.kernel, "guard_pid": self.me},
            )


def _read(fd: int, said: _Said) -> bool:
    """Read what is there and act on whole lines; False at end of input."""
    chunk = os.read(fd, 4096)
    if not chunk:
        return False
    said.buffer += chunk
    *lines, said.buffer = said.buffer.split(b"\n")
    for raw in lines:
        said.line(raw.decode(errors="replace"))
    return True


def main() -> None:
    # The kernel names itself (pid and start time): `os.getppid()` alone would be init's pid
    # if the kernel died while this process was starting, and init's tree is everyone's.
    try:
        kernel, kernel_start = int(sys.argv[1]), int(sys.argv[2])
    except (IndexError, ValueError):
        return  # not started by `_process_guard`: guard nothing rather than guess
    me = os.getpid()
    if kernel <= 1 or os.getppid() != kernel:
        tree_look = False  # already gone: no tree to look at, only the groups and the mark
    else:
        tree_look = True
    state = _Said(kernel, me)
    seen: dict[int, int] = {}
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([stdin], [], [], POLL_SECONDS)
        ended = bool(ready) and not _read(stdin, state)
        # Reparented: the kernel is gone, even if a forked copy of it still holds the pipe.
        if ended or os.getppid() != kernel:
            # What the kernel said last still counts (`T`, a group, `Q`): drain it, never block.
            while select.select([stdin], [], [], 0)[0] and _read(stdin, state):
                pass
            break
        if state.tree and tree_look:
            table = process_table()
            # Keep what is still the same process (the kernel may have died since the last look,
            # its children already moved to init), drop what ended, add what is new.
            seen = {
                pid: start for pid, start in seen.items() if pid in table and table[pid][3] == start
            }
            if kernel in table and table[kernel][3] == kernel_start:  # not a recycled pid
                seen.update(descendants(kernel, table))
    groups, tree, orderly, state_dir = state.groups, state.tree, state.orderly, state.state_dir
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass  # the group already ended
    killed = 0
    mark = os.environ.get(TREE_MARK, "")
    mark_pid, _, mark_start = mark.partition(":")
    if mark_pid != str(kernel) or not mark_start.isdigit():
        mark = ""  # not this kernel's mark: never used to find processes
    # Whatever the kernel started is younger than the kernel: nothing older is ever touched
    # (a last line of defence against a wrong tree: init and everyone else's are older).
    floor = int(mark_start) if mark else kernel_start
    if tree and floor >= 0:
        table = process_table()
        if tree_look and kernel in table and table[kernel][3] == kernel_start:
            seen.update(descendants(kernel, table))  # reparenting may not be done yet
        if mark:
            seen.update(marked(mark))  # born and orphaned since the last look
        killed = kill_tree(seen, spare={me, kernel}, floor=floor)
    if state_dir is not None:
        if killed and not orderly:
            _write_record(
                state_dir,
                REAPED_RECORD.format(kernel=kernel),
                {"kernel_pid": kernel, "count": killed},
            )
        try:
            os.unlink(os.path.join(state_dir, GUARD_RECORD.format(kernel=kernel)))
        except OSError:
            pass  # never written, or the workspace went away


if __name__ == "__main__":
    main()
