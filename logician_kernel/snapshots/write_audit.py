"""Positive evidence that this kernel's own process changed a workspace path: a `sys.addaudithook`
hook that notes writes (open for writing, remove, rename, truncate, chmod, symlink, mkdir,
shutil copies and removals, sqlite3 connections) and process spawns while a frame is open,
with the tool call they happened in.

Audit hooks cannot be removed, so the hook is installed once per process and is cheap when
off: one set lookup per audit event, then a flag. Paths are only resolved for the few
write-like events, and only while a frame is open.

What it cannot see (said in docs/architecture.md): writes by C code inside the kernel that
raise no audit event (pyarrow, h5py, torch's C++ writer) and which files a spawned process
wrote. The first are helped by `open_in_process` (the kernel still holding the file open),
the second are recorded as "a process this frame started" so attribution can say so.

Must never: raise out of the hook (an exception there would break the user's `open`), hold a
lock, or record anything while no frame is open.
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._fs import open_files

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# event -> (index of a path argument it changes, index of its dir_fd argument or None)
_PATH_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.remove": ((0, 1),),
    "os.rename": ((0, 2), (1, 3)),
    "os.truncate": ((0, None),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.symlink": ((1, 2),),
    "os.link": ((1, 3),),
    "os.mkdir": ((0, 2),),
    "os.rmdir": ((0, 1),),
    "os.utime": ((0, 3),),
    "shutil.copyfile": ((1, None),),
    "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),),
    "shutil.copytree": ((1, None),),
    "shutil.rmtree": ((0, None),),
    "shutil.move": ((0, None), (1, None)),
    "shutil.unpack_archive": ((1, None),),
    "sqlite3.connect": ((0, None),),
}
# events whose path argument names a whole directory tree
_TREE_EVENTS = frozenset(
    {"shutil.copytree", "shutil.rmtree", "shutil.move", "shutil.unpack_archive"}
)
_SPAWN_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.posix_spawn",
        "os.spawn",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
    }
)
_EVENTS = frozenset(_PATH_EVENTS) | _SPAWN_EVENTS | {"open"}

CELL = ""
"""The call id recorded for the cell's own code (not inside any tool call)."""

_current_call: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "logician_tool_call", default=None
)


@dataclass
class FrameEvidence:
    """What the kernel's own process did to the workspace during one frame."""

    writes: dict[str, str] = field(default_factory=dict)
    """Workspace-relative path -> the call id that first changed it (`CELL` for cell code)."""
    trees: dict[str, str] = field(default_factory=dict)
    """Workspace-relative directory -> call id, for whole-tree operations (rmtree, copytree)."""
    last: dict[str, float] = field(default_factory=dict)
    """Workspace-relative path -> when (time.time()) the kernel's process last opened it for
    writing or otherwise changed it: a modification time well after it means someone else
    wrote later."""
    spawned: dict[str, str] = field(default_factory=dict)
    """Call id (`CELL` for cell code) -> the first process it started (its command, bounded)."""
    windows: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Tool call id -> when it started and ended (time.time()): a spawned process's writes
    fall inside its call's window (the call's process group dies with it)."""

    def callers(self) -> set[str]:
        """Every call id (and `CELL`) that wrote or spawned something."""
        return {*self.writes.values(), *self.trees.values(), *self.spawned}

    def writer(self, path: str) -> str | None:
        """The call id that wrote `path` (or a tree holding it), or None if no write was seen."""
        if path in self.writes:
            return self.writes[path]
        for tree, call in self.trees.items():
            if tree == "" or path == tree or path.startswith(tree + "/"):
                return call
        return None


class WriteAudit:
    """The process's one audit hook, switched on per frame."""

    def __init__(self) -> None:
        self._roots: tuple[str, ...] = ()
        self._exclude: tuple[str, ...] = ()
        self._evidence: FrameEvidence | None = None
        self._running: dict[str, str] = {}
        self._installed = False
        self._install_lock = threading.Lock()

    def install(self) -> None:
        with self._install_lock:
            if not self._installed:
                sys.addaudithook(self._make_hook())
                self._installed = True

    # -- frames and tool calls ----------------------------------------------------------------

    def begin(self, workspace: Path, exclude: tuple[str, ...] = (".logician", ".git")) -> None:
        """Start recording for a frame over `workspace` (both its given and its real path)."""
        self.install()
        given, real = os.path.abspath(workspace), os.path.realpath(workspace)
        self._roots = tuple(dict.fromkeys((given, real)))
        self._exclude = exclude
        self._evidence = FrameEvidence()

    def end(self) -> FrameEvidence:
        """Stop recording; what the frame's own process did."""
        evidence, self._evidence = self._evidence, None
        return evidence if evidence is not None else FrameEvidence()

    @property
    def recording(self) -> bool:
        return self._evidence is not None

    def busy(self) -> bool:
        """Whether the open frame started a process or runs a tool call now: when a process of
        the frame's may be writing (the tree watcher samples only then)."""
        evidence = self._evidence
        return evidence is not None and (bool(evidence.spawned) or bool(self._running))

    def restamp(self) -> None:
        """The write being announced was held (first_snapshot_wait.py): it happens now, not
        when its event was noted, or its file's newer mtime would look like someone else's."""
        evidence, now = self._evidence, time.time()
        if evidence is not None:
            for path in evidence.last:
                evidence.last[path] = now

    @contextmanager
    def tool_call(self, call_id: str, name: str) -> Iterator[None]:
        """Everything the process does inside this block belongs to the tool call `call_id`."""
        token = _current_call.set(call_id)
        self._running[call_id] = name
        started = time.time()
        try:
            yield
        finally:
            self._running.pop(call_id, None)
            _current_call.reset(token)
            if (evidence := self._evidence) is not None:
                evidence.windows[call_id] = (started, time.time())

    def current_call(self) -> str:
        """The tool call running in this context, or `CELL`. A `python` call runs on the main
        thread, outside the worker's context: when exactly one call runs, it is that one."""
        call = _current_call.get()
        if call is not None:
            return call
        running = list(self._running)
        return running[0] if len(running) == 1 else CELL

    # -- the hook -----------------------------------------------------------------------------

    def _make_hook(self) -> Any:
        # A closure over locals, not a bound method: every audited event in the process
        # (compile, import, open...) calls it, so the common "not ours" path is one set lookup.
        # Locals also survive interpreter shutdown, when module globals turn to None while the
        # (unremovable) hook still runs.
        events, audit = _EVENTS, self

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if event in events:
                evidence = audit._evidence
                if evidence is not None:
                    try:
                        audit._note(evidence, event, args)
                    except Exception:  # noqa: BLE001 - a hook that raises breaks the user's call
                        pass

        return hook

    def _note(self, evidence: FrameEvidence, event: str, args: tuple[Any, ...]) -> None:
        if event in _SPAWN_EVENTS:
            if not _ours():
                evidence.spawned.setdefault(self.current_call(), _command(event, args))
            return
        if event == "open":
            path, mode, flags = args
            if not _writes(mode, flags):
                return
            where: tuple[tuple[int, int | None], ...] = ((0, None),)
        else:
            where = _PATH_EVENTS[event]
        for i, fd_at in where:
            dir_fd = args[fd_at] if fd_at is not None and fd_at < len(args) else None
            rel = self._relative(args[i] if i < len(args) else None, dir_fd)
            if rel is None:
                continue
            target = evidence.trees if event in _TREE_EVENTS else evidence.writes
            target.setdefault(rel, self.current_call())
            evidence.last[rel] = time.time()

    def _relative(self, path: Any, dir_fd: Any) -> str | None:
        if isinstance(path, int) or path is None:
            return None
        text = os.fsdecode(os.fspath(path))
        if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(text):  # -1: none
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
        full = os.path.abspath(text)
        for root in self._roots:
            if full == root:
                return ""
            if full.startswith(root + os.sep):
                rel = full[len(root) + 1 :].replace(os.sep, "/")
                if rel.split("/", 1)[0] in self._exclude:
                    return None
                return rel
        return None


def _writes(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DURABLE_LAYER = tuple(
    os.path.join(_PACKAGE, room) + os.sep
    for room in ("durable", "ledger", "snapshots", "frames", "workspace")
)
"""The folders of the kernel's own durable code (by path, for stack walks)."""
_OWN_SPAWNERS = DURABLE_LAYER + tuple(
    os.path.join(_PACKAGE, *p)
    for p in (
        ("config", ""),
        ("tools", "_process_guard.py"),
    )
)


def _ours() -> bool:
    """Whether the spawn comes from the kernel's own machinery (git snapshots, the process
    guard, a key command) rather than the cell or a tool. Spawns are rare: a stack walk is
    affordable here and nowhere else."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name != __file__ and name.startswith(_OWN_SPAWNERS):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _command(event: str, args: tuple[Any, ...]) -> str:
    try:
        if event == "subprocess.Popen":
            argv = args[1]
            text = argv if isinstance(argv, str | bytes) else " ".join(map(str, argv or ()))
        elif event == "os.system":
            text = args[0]
        else:
            text = f"{event} {args[0] if args else ''}"
        return os.fsdecode(text)[:120] if isinstance(text, bytes) else str(text)[:120]
    except Exception:  # noqa: BLE001 - evidence only; never break the spawn
        return event


def open_in_process(full_paths: set[str], pids: tuple[int, ...] | None = None) -> set[str]:
    """Which of `full_paths` a process of ours holds open right now (`/proc/<pid>/fd`): extra
    positive evidence for a C-level writer inside the kernel that raised no audit event."""
    found: set[str] = set()
    for pid in pids or (os.getpid(),):
        found.update(target for _fd, target in open_files(pid) if target in full_paths)
    return found


AUDIT = WriteAudit()
"""The process's one audit (audit hooks are process-wide and cannot be removed)."""
