"""Which thread a kernel opens, and the workspace's threads as a listing.

One timeline per notebook in every frontend: the thread is named after the notebook the
server passes (`JPY_SESSION_NAME`), else the one VS Code names in the namespace
(`__vsc_ipynb_file__`, which appears only after the kernel started: the kernel follows it
before its first frame), else `LOGICIAN_THREAD`; with none of them, the workspace's most
recently used thread is reopened and the first cell says so - never a silent fresh one.

Must never: open a ledger for writing (listings read files as they are), or guess a notebook.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from ..durable.lease import live_holder
from ..ledger.frame_view import derive_frames
from ..ledger.thread_ledger import MessageEntry, SessionStart, read_entries

ThreadSource = Literal["jupyter", "vscode", "explicit", "recent", "new"]
"""Where the thread id came from: the server's notebook path, VS Code's notebook file,
`LOGICIAN_THREAD`, the workspace's most recent thread, or a first thread for a workspace that
had none."""

VSCODE_NOTEBOOK = "__vsc_ipynb_file__"
"""The name VS Code binds to the notebook's path in the user namespace after start."""

FIRST_THREAD = "workspace"
"""The thread a workspace's first unnamed kernel opens (later unnamed kernels reopen it)."""

_NO_NAME = (
    "no notebook name reached this kernel (the server's JPY_SESSION_NAME, VS Code's "
    "__vsc_ipynb_file__ or LOGICIAN_THREAD)"
)


@dataclass(frozen=True)
class ThreadChoice:
    """The thread a kernel opens and why."""

    thread_id: str
    """The ledger's name under `.logician/threads/`."""
    source: ThreadSource
    """Where the id came from."""
    notebook: str | None = None
    """The notebook path the id was derived from, when one was known."""
    notice: str | None = None
    """What the first cell says about the choice (unnamed kernels only)."""


@dataclass(frozen=True)
class ThreadInfo:
    """One thread of the workspace, for `%logician threads` and `AgentSession.threads`."""

    thread_id: str
    """The thread's id (what `%logician thread use` takes)."""
    notebook: str | None
    """The notebook it was last opened for, when known."""
    frames: int
    """Frames on its stack (not rewound)."""
    messages: int
    """Conversation messages recorded."""
    last_used: str | None
    """UTC time of its last ledger entry, ISO 8601."""
    held_by: str | None = None
    """The live kernel whose lease holds the thread (`durable/lease.py`), e.g. "the kernel pid
    12 on host a"; None when no kernel holds it."""


def slug(text: str, limit: int) -> str:
    slugged = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return slugged[:limit]


def notebook_thread_id(path: str) -> str:
    """A notebook's thread: readable stem plus a hash of the full path, so two
    `analysis.ipynb` in different folders never share a thread, and Jupyter and VS Code
    opening the same file do."""
    stem = slug(Path(path).stem, 60) or "notebook"
    return f"{stem}-{hashlib.sha256(path.encode()).hexdigest()[:12]}"


def named_thread(env: Mapping[str, str], vscode_file: str | None = None) -> ThreadChoice | None:
    """The thread the frontend names, in order of precedence; None when nothing names one."""
    name = env.get("JPY_SESSION_NAME", "").strip()
    if name:
        return ThreadChoice(notebook_thread_id(name), "jupyter", notebook=name)
    if vscode_file:
        return ThreadChoice(notebook_thread_id(vscode_file), "vscode", notebook=vscode_file)
    explicit = env.get("LOGICIAN_THREAD", "").strip()
    if explicit:
        return ThreadChoice(slug(explicit, 100), "explicit")
    return None


def choose_thread(env: Mapping[str, str], threads_dir: Path) -> ThreadChoice:
    """The thread a starting kernel opens: the named one, else the most recent (said)."""
    named = named_thread(env)
    if named is not None:
        return named
    recent = most_recent(threads_dir)
    if recent is None:
        return ThreadChoice(
            FIRST_THREAD,
            "new",
            notice=(
                f"Logician: {_NO_NAME}; this workspace had no thread yet, so this kernel starts "
                f"thread {FIRST_THREAD!r}. A restart without a name reopens it; "
                "`%logician threads` lists the workspace's threads."
            ),
        )
    # The notice is written once the ledger is open (`recent_notice`): its frames come from
    # the ledger's folds, so choosing reads no history.
    return ThreadChoice(recent.thread_id, "recent")


def recent_notice(thread_id: str, frames: int) -> str:
    """What an unnamed kernel's first cell says about the thread it reopened."""
    return (
        f"Logician: {_NO_NAME}; reopened this workspace's most recent thread {thread_id!r} "
        f"({frames} frame(s) to rewind). `%logician threads` lists the others; "
        "`%logician thread use ID` switches."
    )


def _short_time(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return iso


def _ledgers(threads_dir: Path) -> list[Path]:
    try:
        return [p for p in threads_dir.glob("*.jsonl") if p.is_file()]
    except OSError:
        return []


def most_recent(threads_dir: Path) -> ThreadInfo | None:
    """The thread whose ledger was appended to last, by file time (no ledger is read)."""
    ledgers = _ledgers(threads_dir)
    if not ledgers:
        return None
    newest = max(ledgers, key=lambda p: (p.stat().st_mtime_ns, p.name))
    return ThreadInfo(thread_id=newest.stem, notebook=None, frames=0, messages=0, last_used=None)


def describe(ledger: Path) -> ThreadInfo:
    """One thread's listing row, read from its ledger file as it is (damage is skipped)."""
    try:
        entries = read_entries(ledger)
    except OSError:
        entries = []
    notebook = next(
        (e.notebook for e in reversed(entries) if isinstance(e, SessionStart) and e.notebook), None
    )
    frames = derive_frames(entries)
    holder = live_holder(ledger.with_suffix(".lease"))
    return ThreadInfo(
        thread_id=ledger.stem,
        notebook=notebook,
        frames=sum(1 for f in frames.values() if f.status == "active"),
        messages=sum(1 for e in entries if isinstance(e, MessageEntry)),
        last_used=entries[-1].time if entries else None,
        held_by=holder.describe() if holder is not None else None,
    )


def list_threads(threads_dir: Path) -> list[ThreadInfo]:
    """Every thread of the workspace, most recently used first."""
    infos = [describe(p) for p in _ledgers(threads_dir)]
    return sorted(infos, key=lambda i: (i.last_used or "", i.thread_id), reverse=True)


def render_threads(infos: list[ThreadInfo], current: str, note: str | None = None) -> str:
    """The plain-text table of `%logician threads`; `note` says how this kernel came by its
    thread when another kernel held it (`Workspace.thread_note`)."""
    if not infos:
        return "No threads in this workspace yet." + (f"\n{note}." if note else "")
    rows = [("", "thread", "notebook", "frames", "last used")]
    for i in infos:
        rows.append(
            (
                "*" if i.thread_id == current else "",
                i.thread_id,
                i.notebook or "-",
                str(i.frames),
                _short_time(i.last_used) if i.last_used else "-",
            )
        )
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    held = [
        f"{i.thread_id}: held by {i.held_by}" for i in infos if i.held_by and i.thread_id != current
    ]
    return "\n".join(
        [
            *lines,
            "(* this kernel's thread; `%logician thread use ID` switches)",
            *held,
            *([f"{note[0].upper()}{note[1:]}."] if note else []),
        ]
    )
