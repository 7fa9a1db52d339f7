"""Who changed each path of a frame: the cell's code, a named tool call, or someone outside
this kernel (the user's save in JupyterLab, another program, another kernel); what a rewind
may therefore put back is chain_verdict.py's.

Evidence, strongest first: a save JupyterLab reported over the comm (external, with its time);
a write the kernel's own process made (`write_audit.py`: the cell's code or the tool call it
ran in); a file the kernel process still holds open; a write by a process of the kernel's tree
or by another program, as the tree watcher saw it (`tree_watch.py`: exact with fanotify, only
files held open with sampling); a process the frame started, when nothing else says who wrote:
the change is the cell's (or that tool call's) but *uncertain*, and says so. A tool server's
(MCP) write belongs to the call running when it was made. A change with none of these is
external: the kernel did not make it.

An uncertain change is rewound by default, unless an editor's trace lies next to it (a swap,
backup or atomic-save file: `editor_trace`), which makes it a conflict; `keep_uncertain`
leaves every uncertain change alone (chain_verdict.py).

Must never: do I/O beyond `/proc/self/fd` and a look for editor traces beside an uncertain
path, or credit the kernel with a change no evidence ties to it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from ..ledger.entries import FrameOpen, ToolIntent
from ..snapshots.stat_memory import Identity
from ..snapshots.tree_watch import TreeEvidence, TreeWrite
from ..snapshots.write_audit import CELL, FrameEvidence, open_in_process
from ..types.path_states import PathChange
from .chain_verdict import clock
from .late_write import LATE_WRITE_SLACK, device, written_later

SERVER_SEPARATOR = "__"
"""Between a tool server's name and its tool's (`fs__write_file`, as mcp/names.py spells it)."""

RECENT_SAVES = 256
"""Saves remembered between frames (to say "saved in JupyterLab at ..." in a conflict)."""


class SaveLog:
    """Document saves the Lab reported, by workspace-relative path (any thread may report)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._frame: dict[str, str] = {}
        self._recent: dict[str, str] = {}
        self._open = False

    def begin(self) -> None:
        with self._lock:
            self._frame, self._open = {}, True

    def end(self) -> dict[str, str]:
        """Stop collecting for the frame; the saves reported while it was open."""
        with self._lock:
            saves, self._frame, self._open = self._frame, {}, False
            return saves

    def note(self, path: str, at: str) -> bool:
        """Record a save; True when a frame was open to attribute it to."""
        with self._lock:
            self._recent.pop(path, None)
            self._recent[path] = at
            while len(self._recent) > RECENT_SAVES:
                self._recent.pop(next(iter(self._recent)))
            if self._open:
                self._frame.setdefault(path, at)
            return self._open

    def last_save(self, path: str) -> str | None:
        with self._lock:
            return self._recent.get(path)

    def recent(self) -> dict[str, str]:
        """The saves remembered (the last `RECENT_SAVES`), by path: a copy."""
        with self._lock:
            return dict(self._recent)


def map_lab_path(
    saved: str,
    *,
    workspace: Path,
    launch_dir: Path,
    notebook: str | None,
    server_root: str | None = None,
) -> str | None:
    """The workspace-relative path of a document the Lab saved (`saved` is server-relative), or
    None when it lies outside the workspace. The server root is `server_root` when the Lab
    says it; else the kernel's launch directory minus the notebook's directory (the server
    starts a kernel in its notebook's directory)."""
    saved_rel = PurePosixPath(saved.lstrip("/"))
    if saved_rel.is_absolute() or ".." in saved_rel.parts or not saved_rel.parts:
        return None
    if server_root:
        root = Path(server_root).expanduser()
    else:
        nb_dir = PurePosixPath((notebook or "").lstrip("/")).parent.parts
        launch_parts = launch_dir.resolve().parts
        if nb_dir and tuple(launch_parts[-len(nb_dir) :]) != nb_dir:
            return None  # the kernel runs elsewhere than its notebook: no safe offset
        root = Path(*launch_parts[: len(launch_parts) - len(nb_dir)])
    full = (root / Path(*saved_rel.parts)).resolve()
    try:
        rel = full.relative_to(workspace.resolve())
    except ValueError:
        return None
    text = rel.as_posix()
    if text in ("", ".") or text.split("/", 1)[0] in (".logician", ".git"):
        return None
    return text


def attribute(
    changes: Sequence[PathChange],
    evidence: FrameEvidence,
    saves: dict[str, str],
    *,
    workspace: Path,
    tool_names: dict[str, str],
    checkpointed: dict[str, str | None],
    tree: TreeEvidence | None = None,
    looked: Callable[[str], Identity | None] | None = None,
) -> list[PathChange]:
    """Each change with who made it (`by`, `call_id`, `tool`, `basis`, `saved_at`, and
    `uncertain` when a process of ours ran and nothing told its write from another's).
    `looked(path)`: the file as the frame's snapshot found it when it stored its bytes (the
    clock's question about a later write is asked of that, with no `lstat` of its own)."""
    real = Path(os.path.realpath(workspace))  # /proc/self/fd names real paths
    tree = tree if tree is not None else TreeEvidence()
    unknown = {
        str(real / c.path): c.path
        for c in changes
        if evidence.writer(c.path) is None and c.path not in checkpointed
    }
    held = {unknown[p] for p in open_in_process(set(unknown))} if unknown else set()
    # Calls that ran a process of ours: what the frame spawned, and tool server calls.
    spawned = dict(evidence.spawned)
    for call_id, name in tool_names.items():
        if SERVER_SEPARATOR in name and call_id not in spawned:
            spawned[call_id] = f"MCP server {name.split(SERVER_SEPARATOR, 1)[0]}"
    paths = {c.path for c in changes}
    exact_dev = device(real) if tree.exact else None
    out = []
    for change in changes:
        saved_at = saves.get(change.path)
        mine, other = tree.own.get(change.path), tree.foreign.get(change.path)
        call: str | None = None
        basis = uncertain = ""
        if change.path in checkpointed:
            call = checkpointed[change.path] or CELL
            basis = "captured by the tool before it wrote"
        elif (writer := evidence.writer(change.path)) is not None:
            call, basis = writer, "written by this kernel's process"
        elif change.path in held:
            call, basis = CELL, "held open by this kernel's process"
        elif mine is not None:
            call = _call_at(evidence, spawned, mine)
            how = "written" if tree.mode == "fanotify" else "held open for writing"
            basis = (
                f"{how} by `{mine.command}` (pid {mine.pid}), a process this kernel started"
                if call is not None
                else f"written by tool server {mine.server} outside any of its calls"
            )
        elif (old := tree.earlier.get(change.path)) is not None and saved_at is None:
            basis = (
                f"written by `{old.command}` (pid {old.pid}), a process an earlier cell started "
                "that is still running, not by this frame"
            )
        elif other is not None and tree.mode == "fanotify" and saved_at is None:
            basis = f"written by `{other.command}` (pid {other.pid}), not a process of this kernel"
        elif spawned and saved_at is None:
            call = _spawner(spawned, evidence.windows, workspace / change.path)
            if call is not None:
                basis = (
                    f"written while a process this frame started was running (`{spawned[call]}`)"
                )
                uncertain = _uncertain(spawned[call], tree, change.path)
        if call is None:
            if not basis:
                basis = (
                    f"saved in JupyterLab at {clock(saved_at)}"
                    if saved_at
                    else "no write by this kernel's process was seen (another program, the "
                    "user, or another kernel)"
                )
            out.append(
                change.model_copy(update={"by": "external", "basis": basis, "saved_at": saved_at})
            )
            continue
        update: dict[str, object] = {"by": "tool" if call else "cell", "basis": basis}
        if call:
            update |= {"call_id": call, "tool": tool_names.get(call)}
        if uncertain:
            update["uncertain"] = uncertain
        if saved_at:
            update |= {
                "saved_at": saved_at,
                "outside_write": f"saved in JupyterLab at {clock(saved_at)}",
            }
        elif other is not None and tree.mode == "fanotify":
            update["outside_write"] = (
                f"also written by `{other.command}` (pid {other.pid}), not a process of this kernel"
            )
        elif uncertain and (hint := editor_trace(real, change.path, paths)):
            update["outside_write"] = hint
        elif late := written_later(
            os.path.join(real, change.path),
            evidence.last.get(change.path),
            # fanotify saw every writer on the workspace's file system: another process's
            # write would be in `tree.foreign` (above), so the clock is not asked there.
            exact_dev if change.path not in tree.unknown else None,
            looked(change.path) if looked is not None else None,
        ):
            update["outside_write"] = late
        out.append(change.model_copy(update=update))
    return out


def _call_at(evidence: FrameEvidence, spawned: dict[str, str], write: TreeWrite) -> str | None:
    """The tool call that ran a process (or a tool server) whose window holds a process-tree
    write (the one it falls inside, else the nearest within the slack: the event is read a
    moment after the write), else the cell's own code; a tool server's write outside its
    calls is no one's of ours (None)."""
    near: tuple[float, str] | None = None
    for call in spawned:
        start, end = evidence.windows.get(call, (0.0, 0.0))
        if call == CELL or not start:
            continue
        if start <= write.at <= end:
            return call
        gap = min(abs(write.at - start), abs(write.at - end))
        if gap <= LATE_WRITE_SLACK and (near is None or gap < near[0]):
            near = (gap, call)
    if near is not None:
        return near[1]
    return None if write.server else CELL


def _uncertain(command: str, tree: TreeEvidence, path: str) -> str:
    text = f"written while `{command}` ran; another program may have written it too"
    if tree.mode == "fanotify" and path in tree.unknown:
        return text + " (its writer exited before it could be asked whose it was)"
    if tree.mode == "fanotify":
        return text + " (no write to it was reported: another file system, or a memory map)"
    if tree.mode == "sampling":
        return text + " (no process of this kernel was seen holding it open)"
    return text + " (writers are not watched on this machine: by time only)"


EDITOR_TRACES = (".{}.swp", ".{}.swx", "{}~", "#{}#", ".#{}", "{}.bak", ".{}.kate-swp", "{}.tmp")
"""Files an editor keeps next to a file it has open or just saved (vim, emacs, kate, ...)."""


def editor_trace(real: Path, path: str, changed: set[str]) -> str:
    """ "an editor's `.notes.txt.swp` lies next to it" when a swap, backup or atomic-save file
    of `path` exists beside it or changed in the same frame; "" when none does."""
    parent, _, name = path.rpartition("/")
    for pattern in EDITOR_TRACES:
        trace = pattern.format(name)
        rel = f"{parent}/{trace}" if parent else trace
        if rel in changed or os.path.lexists(real / rel):
            return f"an editor's `{trace}` lies next to it: another program may have written it"
    return ""


def _spawner(
    spawned: dict[str, str], windows: dict[str, tuple[float, float]], full: Path
) -> str | None:
    """Which spawning call could have made this change: the cell's own code (its processes'
    lifetimes are unknown) or a tool call whose window holds the file's modification time. A
    file modified while none of them ran is someone else's (None)."""
    if CELL in spawned:
        return CELL
    try:
        mtime = os.lstat(full).st_mtime
    except OSError:  # deleted: no time to go by, so the first spawning call
        return next(iter(spawned))
    for call in spawned:
        start, end = windows.get(call, (float("-inf"), float("inf")))
        if start - LATE_WRITE_SLACK <= mtime <= end + LATE_WRITE_SLACK:
            return call
    return None


def tool_names(entries: Sequence[BaseModel], frame: int, calls: set[str | None]) -> dict[str, str]:
    """Tool names of the frame's calls, read back from the ledger's tool intents (only when a
    tool call wrote or spawned: a plain cell reads nothing)."""
    if not calls - {CELL, None}:
        return {}
    names: dict[str, str] = {}
    for entry in reversed(entries):
        if isinstance(entry, FrameOpen) and entry.frame == frame:
            break
        if isinstance(entry, ToolIntent) and entry.frame == frame:
            names[entry.call_id] = entry.name
    return names


def launch_dir() -> Path:
    """The directory the kernel started in (the server starts it in the notebook's)."""
    return _LAUNCH_DIR


_LAUNCH_DIR = Path(os.getcwd())
