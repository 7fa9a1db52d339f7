"""Who wrote a workspace path during a frame, beyond the kernel's own process: its process tree
(every descendant, `setsid`'d and re-parented ones included) or someone else.

One mechanism per kernel, chosen once (`TreeWatch.choose`) and shown by `%logician status`:

- **exact (fanotify)**: a `fanotify` filesystem mark (needs `CAP_SYS_ADMIN`: root in most
  containers) reports every create, modify, attribute change, rename and delete with the
  writer's pid, read by a thread while the frame is open; each pid is judged as its batch is
  read (`_Processes.who`). The thread rests `READ_REST` after each batch, so a cell writing
  thousands of files is not slowed by a reader taking the GIL for every event (they queue in
  the kernel meanwhile; `end` reads what is left).
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
from typing import Literal, Protocol

from ..types.process_marks import TREE_MARK
from ._fanotify import Fanotify, ForkLog
from ._processes import Processes, Who, stat_of

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
READ_REST = 0.02
"""Seconds the fanotify reader rests after each batch it read (a write storm's events queue)."""


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


class EventSink(Protocol):
    """Told of each fanotify event as it is read (`frames/call_watch.py`: a `bash` call's writes,
    recorded while it runs)."""

    def event(self, rel: str, who: Who | None, kernel: bool) -> None:
        """`rel` was changed by a process judged `who` (None: gone before it could be asked;
        `kernel`: the kernel's own process)."""

    def read_done(self, lost: bool) -> None:
        """A batch of events was read (`lost`: the queue overflowed, events are missing)."""


class TreeWatch:
    """The process's one watcher of writes by the kernel's process tree, switched on per frame."""

    def __init__(self) -> None:
        self.mode: Mode | None = None
        self.reason = ""
        """Why a weaker mechanism than fanotify was chosen ("" when fanotify runs)."""
        self.token = secrets.token_hex(8)
        self._procs = Processes(os.getpid(), self.token)
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
        self.sink: EventSink | None = None
        """Told of every fanotify event while set (one `bash` call's watch)."""

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
            if stat_of(os.getpid()) is not None:
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

    def drain(self) -> bool:
        """Read the events queued so far now (a call watch begins or ends); whether the frame is
        watched exactly (fanotify, no event lost)."""
        evidence = self._evidence
        if evidence is None or evidence.mode != "fanotify" or self._fan is None:
            return False
        self._take_events(evidence)
        return not evidence.lost

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
                # Rest before the next batch: during a cell's write storm, reading each event
                # as it comes takes the GIL from the cell. Events queue in the kernel meanwhile
                # (its queue holds far more than a rest's worth); `end` wakes us at once.
                self._stop.wait(READ_REST)

    def _take_events(self, evidence: TreeEvidence) -> None:
        with self._lock:
            assert self._fan is not None
            events, lost = self._fan.read()
            # The forks after the events: every writer of an event read forked before it
            # wrote, so its fork is queued by now. Read first, a short-lived process could
            # fork, write and exit between the two reads (a loaded machine preempts this
            # thread there) and, missing from a fork log taken as complete, be judged another
            # program's (the tour's `sh -c 'echo ... > file'` was left alone by its rewind).
            if self._forks is not None and not self._forks.read(self._procs.forks):
                self._procs.complete = False
            evidence.lost |= lost
            now, sink, kernel = time.time(), self.sink, self._procs.kernel
            # A write storm is tens of thousands of events from a handful of processes (three
            # per file created: create, modify, close): each process is judged once per batch,
            # and its paths share one record of it (frozen; `now` is the batch's time anyway).
            judged: dict[int, tuple[Who | None, dict[str, TreeWrite], TreeWrite]] = {}
            for pid, full in events:
                rel = self._relative(full)
                if rel is None:
                    continue
                seen = judged.get(pid)
                if seen is None:
                    seen = judged[pid] = self._judge(evidence, pid, now)
                who, into, write = seen
                if sink is not None:
                    sink.event(rel, who, pid == kernel)
                if rel not in into:
                    into[rel] = write
        if sink is not None and (events or lost):
            sink.read_done(lost)  # outside the lock: it may write to the ledger

    def _judge(
        self, evidence: TreeEvidence, pid: int, now: float
    ) -> tuple[Who | None, dict[str, TreeWrite], TreeWrite]:
        """Who `pid` is, where its writes go in `evidence`, and the record each path gets."""
        who = self._procs.who(pid)
        if who is None:
            return None, evidence.unknown, TreeWrite(pid, f"pid {pid}", now)
        if who.server:
            evidence.servers.add(who.server)
        into = evidence.earlier if who.earlier else evidence.own if who.own else evidence.foreign
        return who, into, TreeWrite(pid, who.command, now, who.server)

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
