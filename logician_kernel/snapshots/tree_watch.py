"""Who wrote a workspace path during a frame, beyond the kernel's own process: its process tree
(every descendant, `setsid`'d and re-parented ones included) or someone else.

One mechanism per kernel, chosen once (`TreeWatch.choose`) and shown by `%logician status`:

- **exact (fanotify)**: a `fanotify` filesystem mark (needs `CAP_SYS_ADMIN`: root in most
  containers) reports every create, modify, attribute change, rename and delete with the
  writer's pid, read by a thread while the frame is open; each pid is judged at once
  (`_Processes.who`).
- **by process tree sampling**: while the frame has started a process or runs a tool call,
  the kernel's subtree is looked at every `SAMPLE_INTERVAL` s (all of `/proc` every
  `FULL_LOOK_EVERY`th time) for the workspace files our processes hold open for writing.
  A write that opens and closes between two scans is missed.
- **by time only**: nothing is watched; a change made while a process of ours ran cannot be
  told from someone else's.

A process is ours when the kernel is among its ancestors, or when its initial environment
carries this kernel's `TREE_MARK` token (a double-forked daemon re-parented to init still does).
A tool server (`TOOL_SERVER_MARK`) is ours too, but only inside its calls (attribution decides).

`LOGICIAN_ATTRIBUTION=fanotify|sampling|time` in the kernel's environment forces a mechanism
(the tests use it to exercise the fallbacks on a root machine).

Must never: raise into a frame (a watcher that fails falls back and says why), block a cell
(events are read by a daemon thread; the final drain is non-blocking), keep a filesystem mark
while no frame is open, or read anything but `/proc` and the fanotify descriptor.
"""

from __future__ import annotations

import atexit
import os
import secrets
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..types.process_marks import TOOL_SERVER_MARK, TREE_MARK
from ._fanotify import Fanotify, ForkLog

Mode = Literal["fanotify", "sampling", "time"]
LABELS: dict[Mode, str] = {
    "fanotify": "exact (fanotify)",
    "sampling": "by process tree sampling",
    "time": "by time only",
}
CHOICE_ENV = "LOGICIAN_ATTRIBUTION"
SAMPLE_INTERVAL = 0.05
"""Seconds between two looks at the kernel's processes while one runs (sampling mode)."""
FULL_LOOK_EVERY = 10
"""One look in this many walks every process on the machine, not only the kernel's subtree."""


@dataclass(frozen=True)
class TreeWrite:
    """One process's write to a path, as the watcher saw it."""

    pid: int
    command: str
    """Its command line, bounded."""
    at: float
    """When it was seen (time.time())."""
    server: str = ""
    """The tool server it belongs to ("" when none)."""


@dataclass
class TreeEvidence:
    """What the watcher saw during one frame (workspace-relative paths)."""

    mode: Mode = "time"
    own: dict[str, TreeWrite] = field(default_factory=dict)
    """Written by a process of this kernel's tree (first write seen)."""
    foreign: dict[str, TreeWrite] = field(default_factory=dict)
    """Written by a process outside it (first write seen)."""
    earlier: dict[str, TreeWrite] = field(default_factory=dict)
    """Written by a process of ours that ran since before the frame opened (an earlier cell's
    background job): not this frame's doing."""
    unknown: dict[str, TreeWrite] = field(default_factory=dict)
    """Written by a process gone before it could be asked whose it was."""
    servers: set[str] = field(default_factory=set)
    """Tool servers seen running during the frame."""
    lost: bool = False
    """The kernel dropped events (queue overflow): absence of an event proves nothing."""

    @property
    def exact(self) -> bool:
        return self.mode == "fanotify" and not self.lost


@dataclass(frozen=True)
class _Who:
    own: bool
    command: str
    server: str
    earlier: bool = False
    """Ours, but running since before the frame opened (or a child of such a process): an
    earlier cell's background process, not this frame's."""


class _Processes:
    """Whose a pid is, cached by (pid, start time) so a reused pid is asked again."""

    def __init__(self, kernel: int, token: str) -> None:
        self.kernel = kernel
        self._mark = f"{TREE_MARK}={token}".encode()
        self._server = f"{TOOL_SERVER_MARK}=".encode()
        self._cache: dict[int, tuple[str, _Who]] = {}
        self._kernel = _Who(own=True, command="this kernel", server="")
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

    def who(self, pid: int) -> _Who | None:
        """None: the process is gone (or never was) and cannot be asked."""
        if pid == self.kernel:
            return self._kernel
        stat = _stat(pid)
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
            up = _stat(parent)
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
        who = _Who(
            own=own,
            command=_command(pid),
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

    def _by_forks(self, pid: int) -> _Who | None:
        """A writer that has exited: up its fork log ancestry to the kernel, a descendant of
        the kernel's when the frame opened, a process judged earlier, or a living ancestor;
        a process that ran before the frame and was none of ours is not ours (with a complete
        fork log). None when nothing is known."""
        exited = f"pid {pid} (exited)"
        p = pid
        for _ in range(64):
            if p == self.kernel or p in self.before:
                server = self._server_of(pid)
                return _Who(True, exited, server, earlier=p in self.before and not server)
            cached = self._cache.get(p)
            if cached is not None:
                who = cached[1]
                return who if p == pid else _Who(who.own, exited, who.server, who.earlier)
            parent = self.forks.get(p)
            if parent is None:
                if p != pid and (up := _stat(p)) is not None and not up[2]:
                    living = self.who(p)
                    if living is not None:
                        return _Who(
                            living.own,
                            f"a child of `{living.command}`",
                            living.server,
                            living.earlier,
                        )
                return _Who(own=False, command=exited, server="") if self.complete else None
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


def _stat(pid: int) -> tuple[int, str, bool] | None:
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


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = file.read().rstrip(b"\0").replace(b"\0", b" ")
        if not argv:
            with open(f"/proc/{pid}/comm", "rb") as file:
                argv = file.read().strip()
    except OSError:
        return f"pid {pid}"
    return " ".join(os.fsdecode(argv).split())[:80]  # one line: a `-c` script has newlines


class TreeWatch:
    """The process's one watcher of writes by the kernel's process tree, switched on per frame."""

    def __init__(self) -> None:
        self.mode: Mode | None = None
        self.reason = ""
        """Why a weaker mechanism than fanotify was chosen ("" when fanotify runs)."""
        self.token = secrets.token_hex(8)
        self._procs = _Processes(os.getpid(), self.token)
        self._fan: Fanotify | None = None
        self._forks: ForkLog | None = None
        self._lock = threading.Lock()
        self._evidence: TreeEvidence | None = None
        self._roots: tuple[str, ...] = ()
        self._exclude: tuple[str, ...] = ()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wake: tuple[int, int] | None = None
        self._busy: Callable[[], bool] = lambda: True

    # -- the choice -----------------------------------------------------------------------------

    def choose(self, workspace: os.PathLike[str] | str) -> Mode:
        """Pick the best mechanism the machine allows (once); mark the environment so every
        process started from now on carries this kernel's token."""
        if self.mode is not None:
            return self.mode
        os.environ[TREE_MARK] = self.token
        wanted = os.environ.get(CHOICE_ENV, "auto").strip().lower() or "auto"
        if wanted not in ("auto", *LABELS):
            self.reason = f"{CHOICE_ENV}={wanted!r} is not one of auto, fanotify, sampling, time"
            wanted = "auto"
        mode: Mode = "time"
        if wanted in ("auto", "fanotify"):
            try:
                self._fan = Fanotify(os.path.realpath(workspace))
                mode = "fanotify"
            except (OSError, AttributeError) as exc:
                self.reason = self.reason or f"fanotify is not allowed here ({exc})"
            try:
                self._forks = ForkLog() if mode == "fanotify" else None
            except OSError:  # writers that exit at once may then read as unknown (uncertain)
                self._forks = None
        if mode != "fanotify" and wanted != "time":
            if _stat(os.getpid()) is not None:
                mode = "sampling"
            else:
                self.reason = self.reason or "/proc cannot be read"
        if wanted == "sampling" or wanted == "time":
            self.reason = f"{CHOICE_ENV}={wanted}"
        self.mode = mode
        return mode

    def label(self) -> str:
        """`%logician status`'s words: "exact (fanotify)", or the fallback and why."""
        if self.mode is None:
            return "not chosen yet (no frame has run)"
        text = LABELS[self.mode]
        return f"{text} - {self.reason}" if self.reason else text

    # -- frames ---------------------------------------------------------------------------------

    def begin(
        self,
        workspace: os.PathLike[str] | str,
        exclude: tuple[str, ...] = (".logician", ".git"),
        busy: Callable[[], bool] = lambda: True,
    ) -> None:
        """Start watching for a frame (nothing runs in `time` mode). `busy`: whether the frame
        has started a process or runs a tool call - sampling looks only then (the kernel
        always has a child: its process guard)."""
        mode = self.choose(workspace)
        self._busy = busy
        given, real = os.path.abspath(workspace), os.path.realpath(workspace)
        self._roots = tuple(dict.fromkeys((real, given)))
        self._exclude = exclude
        self._evidence = TreeEvidence(mode=mode)
        if mode == "time":
            return
        self._stop.clear()
        if mode == "fanotify":
            assert self._fan is not None
            try:
                self._fan.forget_dirs(real)
                if self._forks is not None:
                    self._forks.listen(True)
                self._procs.begin_frame(self._forks is not None)
                self._fan.mark(add=True)
            except OSError as exc:
                self._fan.close()
                self._fan, self.mode, self.reason = None, "sampling", f"fanotify failed ({exc})"
                self._evidence.mode = mode = "sampling"
        if mode == "sampling":
            self._procs.begin_frame(False)
        if self._wake is None:
            self._wake = os.pipe()
        target = self._read_events if mode == "fanotify" else self._sample
        self._thread = threading.Thread(target=target, name="logician-tree-watch", daemon=True)
        self._thread.start()

    def end(self) -> TreeEvidence:
        """Stop watching; what the frame's process tree (and others) wrote."""
        evidence = self._evidence
        if evidence is None:
            return TreeEvidence(mode=self.mode or "time")
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            if self._wake is not None:
                os.write(self._wake[1], b"x")
            thread.join()
            if self._wake is not None:
                try:
                    os.read(self._wake[0], 4096)
                except OSError:
                    pass
        if self._fan is not None and evidence.mode == "fanotify":
            self._take_events(evidence)  # everything queued before the cell ended
            try:
                self._fan.mark(add=False)
                if self._forks is not None:
                    self._forks.listen(False)
            except OSError:
                pass
            self._take_events(evidence)
        self._evidence = None
        return evidence

    def close(self) -> None:
        """Release the fanotify group, the fork log and the wake pipe (a test's watcher)."""
        self.end()
        for closer in (self._fan, self._forks):
            if closer is not None:
                closer.close()
        self._fan = self._forks = None
        for fd in self._wake or ():
            os.close(fd)
        self._wake = None

    # -- fanotify -------------------------------------------------------------------------------

    def _read_events(self) -> None:
        fan, wake = self._fan, self._wake
        assert fan is not None and wake is not None
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([fan.fd, wake[0]], [], [], 1.0)
            except OSError:
                return
            if fan.fd in ready and (evidence := self._evidence) is not None:
                self._take_events(evidence)

    def _take_events(self, evidence: TreeEvidence) -> None:
        with self._lock:
            assert self._fan is not None
            # the forks first: the ancestry of the writers of the events read next
            if self._forks is not None and not self._forks.read(self._procs.forks):
                self._procs.complete = False
            events, lost = self._fan.read()
            evidence.lost |= lost
            now = time.time()
            for pid, full in events:
                rel = self._relative(full)
                if rel is None:
                    continue
                who = self._procs.who(pid)
                if who is None:
                    evidence.unknown.setdefault(rel, TreeWrite(pid, f"pid {pid}", now))
                    continue
                if who.server:
                    evidence.servers.add(who.server)
                into = (
                    evidence.earlier
                    if who.earlier
                    else evidence.own
                    if who.own
                    else evidence.foreign
                )
                into.setdefault(rel, TreeWrite(pid, who.command, now, who.server))

    # -- sampling -------------------------------------------------------------------------------

    def _sample(self) -> None:
        looks = 0
        while not self._stop.wait(SAMPLE_INTERVAL):
            evidence = self._evidence
            if evidence is None:
                return
            if self._busy() and self._procs.children():
                # The kernel's subtree each time (cheap: the kernel is a child subreaper, so
                # orphans stay in it); every process each `FULL_LOOK_EVERY`th time, for ours
                # that left it (a kernel that is no subreaper: `%load_ext` in a stock one).
                self._scan(evidence, full=looks % FULL_LOOK_EVERY == 0)
                looks += 1

    def _scan(self, evidence: TreeEvidence, *, full: bool) -> None:
        """One look at the kernel's processes (`full`: at every process on the machine)."""
        now = time.time()
        if full:
            pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
        else:
            pids = list(self._procs.descendants())
        for pid in pids:
            if pid == self._procs.kernel:
                continue
            who = self._procs.who(pid)
            if who is None or not who.own:
                continue
            if who.server:
                evidence.servers.add(who.server)
            into = evidence.earlier if who.earlier else evidence.own
            for rel in self._held_for_writing(pid):
                into.setdefault(rel, TreeWrite(pid, who.command, now, who.server))

    def _held_for_writing(self, pid: int) -> list[str]:
        out: list[str] = []
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return out
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            rel = self._relative(target.removesuffix(" (deleted)"))
            if rel is None:
                continue
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as file:
                    flags = int(file.read().split(b"flags:", 1)[1].split()[0], 8)
            except (OSError, IndexError, ValueError):
                continue
            if flags & 3:  # O_WRONLY or O_RDWR
                out.append(rel)
        return out

    def _relative(self, full: str) -> str | None:
        for root in self._roots:
            if full.startswith(root + os.sep):
                rel = full[len(root) + 1 :].replace(os.sep, "/")
                if rel.split("/", 1)[0] in self._exclude:
                    return None
                return rel
        return None


TREE = TreeWatch()
"""The process's one watcher (one fanotify group and one sampling thread per kernel)."""
atexit.register(TREE.close)
