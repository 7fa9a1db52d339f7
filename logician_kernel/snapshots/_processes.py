"""Whose a process is: the kernel's own tree (by ancestry, by the kernel's fork log for one that
has exited, or by the `TREE_MARK` token in its initial environment), a tool server's, an
earlier cell's background job (ours, but running since before the frame), or another
program's. Read from `/proc` only; verdicts cached per frame by (pid, start time).

Must never: raise (a process may vanish between two reads: it is then "cannot be asked").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..types.process_marks import TOOL_SERVER_MARK, TREE_MARK


@dataclass(frozen=True)
class Who:
    """The verdict on one process."""

    own: bool
    """Of the kernel's tree (the kernel itself included)."""
    command: str
    """Its command line, bounded (or "pid N (exited)")."""
    server: str
    """The tool server it belongs to ("" when none)."""
    earlier: bool = False
    """Ours, but running since before the frame opened (or a child of such a process): an
    earlier cell's background process, not this frame's."""


class Processes:
    """Whose a pid is, cached by (pid, start time) so a reused pid is asked again."""

    def __init__(self, kernel: int, token: str) -> None:
        self.kernel = kernel
        self._mark = f"{TREE_MARK}={token}".encode()
        self._server = f"{TOOL_SERVER_MARK}=".encode()
        self._cache: dict[int, tuple[str, Who]] = {}
        self._kernel = Who(own=True, command="this kernel", server="")
        self.forks: dict[int, int] = {}
        """Process -> the process that forked it, as the kernel's fork log told (fanotify mode):
        the ancestry of a writer that exited before its event was read."""
        self.before: set[int] = set()
        """The kernel's descendants when the frame opened (with a fork log)."""
        self.complete = False
        """Whether every fork since the frame opened is in `forks`: then a process in neither
        `forks` nor `before` was running before the frame, and not as ours."""

    def begin_frame(self, fork_log: bool) -> None:
        """A frame opens: forget the last frame's forks and verdicts, and note the kernel's
        descendants now (the kernel is a child subreaper: orphans stay beneath it)."""
        self.forks.clear()
        self._cache.clear()  # "earlier" is relative to the frame
        self.complete = fork_log
        self.before = self.descendants()

    def descendants(self) -> set[int]:
        """The kernel's descendants now, through `/proc/<pid>/task/<tid>/children`."""
        found: set[int] = set()
        todo = [self.kernel]
        while todo and len(found) < 4096:
            pid = todo.pop()
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tasks:
                try:
                    with open(f"/proc/{pid}/task/{tid}/children", "rb") as file:
                        children = [int(c) for c in file.read().split()]
                except (OSError, ValueError):
                    continue
                for child in children:
                    if child not in found:
                        found.add(child)
                        todo.append(child)
        return found

    def who(self, pid: int) -> Who | None:
        """None: the process is gone (or never was) and cannot be asked."""
        if pid == self.kernel:
            return self._kernel
        stat = stat_of(pid)
        if stat is None or stat[2]:
            return self._by_forks(pid)
        ppid, start, _ = stat
        cached = self._cache.get(pid)
        if cached is not None and cached[0] == start:
            return cached[1]
        if len(self._cache) > 8192:
            self._cache.clear()
        own, earlier, parent = False, pid in self.before, ppid
        for _ in range(64):
            if parent == self.kernel:
                own = True
                break
            if parent <= 1:
                break
            earlier = earlier or parent in self.before
            up = stat_of(parent)
            parent = up[0] if up is not None else 0
        own = own or self._forked_by_us(pid)
        server = ""
        try:
            with open(f"/proc/{pid}/environ", "rb") as file:
                environ = file.read().split(b"\0")
        except OSError:
            environ = []
        for item in environ:
            if item == self._mark:
                own = True
            elif item.startswith(self._server):
                server = os.fsdecode(item[len(self._server) :]) or "?"
        who = Who(
            own=own,
            command=command_of(pid),
            server=server if own else "",
            earlier=own and earlier and not server,
        )
        self._cache[pid] = (start, who)
        return who

    def _forked_by_us(self, pid: int) -> bool:
        """Whether the fork log leads from `pid` up to the kernel (re-parented ones too)."""
        for _ in range(64):
            parent = self.forks.get(pid)
            if parent is None:
                return False
            if parent == self.kernel:
                return True
            pid = parent
        return False

    def _by_forks(self, pid: int) -> Who | None:
        """A writer that has exited: up its fork log ancestry to the kernel, a descendant of
        the kernel's when the frame opened, a process judged earlier, or a living ancestor;
        a process that ran before the frame and was none of ours is not ours (with a complete
        fork log). None when nothing is known."""
        exited = f"pid {pid} (exited)"
        p = pid
        for _ in range(64):
            if p == self.kernel or p in self.before:
                server = self._server_of(pid)
                return Who(True, exited, server, earlier=p in self.before and not server)
            cached = self._cache.get(p)
            if cached is not None:
                who = cached[1]
                return who if p == pid else Who(who.own, exited, who.server, who.earlier)
            parent = self.forks.get(p)
            if parent is None:
                if p != pid and (up := stat_of(p)) is not None and not up[2]:
                    living = self.who(p)
                    if living is not None:
                        return Who(
                            living.own,
                            f"a child of `{living.command}`",
                            living.server,
                            living.earlier,
                        )
                return Who(own=False, command=exited, server="") if self.complete else None
            p = parent
        return None

    def _server_of(self, pid: int) -> str:
        for _ in range(64):
            cached = self._cache.get(pid)
            if cached is not None and cached[1].server:
                return cached[1].server
            parent = self.forks.get(pid)
            if parent is None:
                return ""
            pid = parent
        return ""

    def children(self) -> bool:
        """Whether the kernel has a child process now (False when it cannot be read)."""
        try:
            tasks = os.listdir(f"/proc/{self.kernel}/task")
        except OSError:
            return False
        for tid in tasks:
            try:
                with open(f"/proc/{self.kernel}/task/{tid}/children", "rb") as file:
                    if file.read().strip():
                        return True
            except OSError:
                return True  # no such file (kernel config): assume there may be
        return False


def stat_of(pid: int) -> tuple[int, str, bool] | None:
    """(ppid, start time, exited) of a process, or None when it is gone. An exited process
    not yet reaped (a zombie) has lost its environment: it cannot say whose it is."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), fields[19].decode(), fields[0] in (b"Z", b"X")
    except (IndexError, ValueError):
        return None


def command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = file.read().rstrip(b"\0").replace(b"\0", b" ")
        if not argv:
            with open(f"/proc/{pid}/comm", "rb") as file:
                argv = file.read().strip()
    except OSError:
        return f"pid {pid}"
    return " ".join(os.fsdecode(argv).split())[:80]  # one line: a `-c` script has newlines
