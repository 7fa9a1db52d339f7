"""Cells that run while the first full snapshot is still being taken (in the background, from
kernel start): one that touches no file never waits for it; one that writes waits at its
first write, so that write can still be rewound.

A frame needs the workspace as it was before its cell's first change. While the first
snapshot is running that state is not known yet, but the kernel learns of a change in two
ways, both before anything is lost:

- Python announces every write it makes (`open` for writing, remove, rename, chmod, sqlite3,
  a process spawn...) as an audit event *before* it happens. A frame opened during the first
  snapshot arms a gate on those events: the first one (from the cell, a tool, a thread it
  started) waits for the first snapshot, takes the frame's pre-snapshot, and then lets the
  write go on. The cell says so in its output when the wait is one a user notices (longer
  than `QUIET_WAIT`), and says what it waits on: a write, or a program it starts (which may
  only read: `!ls` is not said to write).
- inotify (the change detector) names every path changed since the frame opened, including
  what no audit event announced (a C library writing by itself, another program). Those
  paths are read here without being taken from the snapshotter (`CarryingDetector`): the next
  snapshot still re-reads them. A frame that closes with none of them and no gated write
  changed nothing, and closes at once, the first snapshot still running. Paths changed before
  the gate (or with no gate at all) have no known earlier content: the frame says so in its
  capture error rather than record a guess.

With a stat-scan detector (network volumes) there is no cheap "what changed" to ask, so cells
wait for the first snapshot as before.

Must never: raise out of the audit hook (it would break the user's `open`), hold the gate for
the kernel's own writes (its store, a rewind), or drop a change from the snapshotter's view.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from .change_detection import AutoDetector, Detector
from .watcher import WorkspaceWatcher
from .write_audit import _PATH_EVENTS, _SPAWN_EVENTS, AUDIT, DURABLE_LAYER, _writes

if TYPE_CHECKING:
    from .git_snapshot import GitSnapshotter, Snapshot

_GATED = frozenset(_PATH_EVENTS) | _SPAWN_EVENTS | {"open"}
# The kernel's own background work (the agent's worker is not: its tools write for the user).
_OWN_THREADS = frozenset(
    {
        "logician-warmup",
        "logician-large-capture",
        "logician-large-key",
        "logician-variables-write",
        "logician-mcp",
        "logician-compaction",
        "logician-merge",
    }
)
WAIT_NOTICE = (
    "Logician: this cell writes to the workspace while its first snapshot is still being "
    "taken; it waits for it (once, after the kernel starts) so the write can be rewound."
)
SPAWN_WAIT_NOTICE = (
    "Logician: this cell starts a program while the workspace's first snapshot is still being "
    "taken; it waits for it (once, after the kernel starts) so what the program writes can be "
    "rewound."
)
QUIET_WAIT = 0.5
"""Seconds a held write waits for the first snapshot before the cell says so: a first
snapshot about to finish is not worth a line in the cell."""


class CarryingDetector:
    """The snapshotter's detector with a second reader: `peek()` says what changed since the
    last peek, and the snapshotter's next `drain()` still answers every change since its own
    last drain (what a peek read is carried to it)."""

    def __init__(self, inner: Detector) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._carried: set[str] = set()
        self._lost = False

    def peek(self) -> set[str] | None:
        """Paths changed since the last peek; None when that cannot be told precisely."""
        if getattr(self.inner, "kind", "inotify") != "inotify":
            return None  # a stat scan's drain is a walk of the workspace, not a cheap look
        with self._lock:
            got = self.inner.drain()
            if got is None:
                self._lost = True
                return None
            self._carried |= got
            return got

    def drain(self, *args: Any, **kwargs: Any) -> set[str] | None:
        with self._lock:
            got = self.inner.drain(*args, **kwargs)
            carried, lost = self._carried, self._lost
            self._carried, self._lost = set(), False
        return None if got is None or lost else got | carried

    def start(self) -> bool:
        return self.inner.start()

    def close(self) -> None:
        self.inner.close()

    @property
    def watching(self) -> bool:
        return self.inner.watching

    @property
    def notice(self) -> str | None:
        return getattr(self.inner, "notice", None)

    @notice.setter
    def notice(self, value: str | None) -> None:
        if hasattr(self.inner, "notice"):
            self.inner.notice = value  # type: ignore[union-attr]

    def __getattr__(self, name: str) -> Any:  # defer, early, kind: whatever the inner one has
        return getattr(self.inner, name)


@dataclass
class Deferred:
    """A frame opened while the first snapshot ran, its pre-snapshot not taken yet."""

    pre: Snapshot | None = None
    """The pre-snapshot, taken at the cell's first write (None: it wrote nothing we saw)."""
    unseen: set[str] = field(default_factory=set)
    """Paths changed during the frame that no gated write preceded: earlier content unknown."""
    lost: bool = False
    """The detector lost track (queue overflow): what changed is unknown."""
    error: str | None = None
    """Why the pre-snapshot taken at the first write failed, if it did."""


class FirstSnapshotWait:
    """Frames of one FileCheckpoints while its first snapshot runs (see the module docstring)."""

    def __init__(
        self,
        snapshotter: GitSnapshotter,
        snap_lock: threading.Lock,
        warmup: Callable[[], threading.Thread | None],
        record: Callable[[Snapshot], None],
        say: Callable[[str, TextIO | None], None] | None = None,
    ) -> None:
        """`record(pre)`: make the frame's pre-snapshot durable before its write goes on (a
        kernel killed mid-cell is then recovered by diffing from it, as any frame is). `say`
        tells the user the cell waits (the workspace's notice sink; default: the stream)."""
        self.snapshotter = snapshotter
        self._snap_lock = snap_lock
        self._warmup = warmup
        self._record = record
        self._say = say
        self._gate = _GATE

    def install(self) -> None:
        """Let frames learn what changed during the first snapshot (inotify detectors only)."""
        watcher = self.snapshotter._watcher  # wrapped once, before the warm-up starts
        if isinstance(watcher, WorkspaceWatcher | AutoDetector):
            self.snapshotter._watcher = CarryingDetector(watcher)  # type: ignore[assignment]

    def _detector(self) -> CarryingDetector | None:
        watcher = self.snapshotter._watcher
        return watcher if isinstance(watcher, CarryingDetector) else None

    def can_defer(self) -> bool:
        """A frame opening now need not wait: the first snapshot runs and inotify watches."""
        thread = self._warmup()
        detector = self._detector()
        return (
            thread is not None
            and thread.is_alive()
            and detector is not None
            and detector.inner.watching
            and getattr(detector.inner, "kind", "inotify") == "inotify"
        )

    def open(self) -> Deferred | None:
        """Open a frame without its pre-snapshot, if that is safe now; None: take it as usual."""
        if not self.can_defer():
            return None
        detector = self._detector()
        assert detector is not None
        if detector.peek() is None:  # changes so far belong to no frame; only later ones count
            return None
        return Deferred()

    def arm(self, deferred: Deferred, stream: TextIO | None = None) -> None:
        """Hold the frame's first write (once the frame is recorded as open)."""
        self._gate.arm(
            str(self.snapshotter.workspace),
            lambda spawn: self._first_write(deferred, stream, spawn=spawn),
        )

    def _first_write(self, deferred: Deferred, stream: TextIO | None, *, spawn: bool) -> None:
        """The gate fired (`spawn`: by a process start): wait for the first snapshot, then
        take the frame's pre-snapshot."""
        thread = self._warmup()
        if thread is not None and thread.is_alive():
            thread.join(QUIET_WAIT)
        if thread is not None and thread.is_alive():
            said = SPAWN_WAIT_NOTICE if spawn else WAIT_NOTICE
            if self._say is not None:
                self._say(said, stream or sys.stderr)
            else:
                print(said, file=stream or sys.stderr, flush=True)
            thread.join()
        self._note_changes(deferred)
        with self._snap_lock:
            try:
                deferred.pre = self.snapshotter.snapshot()
            except (OSError, RuntimeError) as exc:  # SnapshotError: the close says it
                deferred.error = str(exc)
                self.snapshotter.reset()
                return
        AUDIT.restamp()  # the held write happens after this, whatever the audit noted
        try:
            self._record(deferred.pre)
        except OSError as exc:  # JournalError: the frame still closes, from this snapshot
            deferred.error = f"its pre-snapshot could not be recorded ({exc})"

    def _note_changes(self, deferred: Deferred) -> None:
        detector = self._detector()
        changed = detector.peek() if detector is not None else None
        if changed is None:
            deferred.lost = True
        else:
            deferred.unseen |= changed

    def close(self, deferred: Deferred) -> str | None:
        """Disarm the gate; what the frame's capture error must say, if anything."""
        self._gate.disarm()
        if deferred.pre is None:
            self._note_changes(deferred)
        said = [deferred.error] if deferred.error else []
        if deferred.lost:
            said.append(
                "file changes made while the first snapshot of the workspace was being "
                "taken could not be told apart (the change queue overflowed); they were "
                "not captured"
            )
        elif deferred.unseen:
            names = ", ".join(sorted(deferred.unseen)[:3])
            more = f" and {len(deferred.unseen) - 3} more" if len(deferred.unseen) > 3 else ""
            said.append(
                f"{len(deferred.unseen)} path(s) changed while the first snapshot of the "
                f"workspace was being taken, by no write this kernel's Python saw first "
                f"(a C library, another program): their earlier content was not "
                f"captured ({names}{more})"
            )
        return "; ".join(said) or None


class _WriteGate:
    """The process's one audit hook for the gate: off, it costs one attribute test per event."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fire: Callable[[bool], None] | None = None
        self._done = threading.Event()
        self._done.set()
        self._root = ""
        self._installed = False

    def arm(self, root: str, fire: Callable[[bool], None]) -> None:
        """`fire(spawn)` runs at the first write inside `root` (`spawn`: a process start)."""
        with self._lock:
            if not self._installed:
                sys.addaudithook(self._make_hook())
                self._installed = True
            self._root = os.path.abspath(root)
            self._done = threading.Event()
            self._fire = fire

    def disarm(self) -> None:
        """Off; a first write being handled on another thread is waited for."""
        with self._lock:
            fired, self._fire = self._fire is None, None
            done = self._done
        if fired and not self._handling():
            done.wait()
        done.set()

    def _handling(self) -> bool:
        return getattr(self._local, "firing", False)

    _local = threading.local()

    def _make_hook(self) -> Any:
        gate, events = self, _GATED

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if gate._fire is not None and event in events:
                try:
                    gate._check(event, args)
                except Exception:  # noqa: BLE001 - a hook that raises breaks the user's call
                    pass

        return hook

    def _check(self, event: str, args: tuple[Any, ...]) -> None:
        name = threading.current_thread().name
        if self._handling() or name in _OWN_THREADS or name.startswith("logician-prepack-"):
            return  # the warm-up, a large-file copy, the gate itself: the kernel's own work
        if not self._writes_inside(event, args) or _from_durable_layer():
            return
        with self._lock:
            fire, self._fire = self._fire, None
            done = self._done
        if fire is None:
            done.wait()  # another thread is taking the pre-snapshot: its write waits too
            return
        self._local.firing = True
        try:
            fire(event in _SPAWN_EVENTS)
        finally:
            self._local.firing = False
            done.set()

    def _writes_inside(self, event: str, args: tuple[Any, ...]) -> bool:
        if event in _SPAWN_EVENTS:
            return True  # a process may write anywhere
        if event == "open":
            if not _writes(args[1], args[2]):
                return False
            where: tuple[tuple[int, int | None], ...] = ((0, None),)
        else:
            where = _PATH_EVENTS[event]
        for i, fd_at in where:
            path = args[i] if i < len(args) else None
            if path is None or isinstance(path, int):
                return True  # a descriptor: where it points is not known, so assume inside
            text = os.fsdecode(os.fspath(path))
            dir_fd = args[fd_at] if fd_at is not None and fd_at < len(args) else None
            if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(text):
                return True  # relative to a directory descriptor: assume inside
            full = os.path.abspath(text)
            if full == self._root or full.startswith(self._root + os.sep):
                rel = full[len(self._root) + 1 :]
                if rel.split(os.sep, 1)[0] not in (".logician", ".git"):
                    return True
        return False


def _from_durable_layer() -> bool:
    """Whether the write comes from the kernel's own durable layer (its stores, a rewind)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(DURABLE_LAYER) and name != __file__:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


_GATE = _WriteGate()
