"""Moving an `AgentSession` between the workspace's threads.

`%logician thread use ID`, scripts (`AgentSession.use_thread`) and the kernel following VS
Code's notebook name all go through `switch`: the workspace closes the thread's ledger and
opens the other's (refused while a frame is open); the agent's status and budget start over,
and its conversation is the new thread's, rebuilt from that ledger.

Must never: create a thread by accident (an unknown id is an error unless asked to create),
or move a kernel that already recorded frames in this session without being asked.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..durable.state_dir import state_path
from ..events.runtime_state import RuntimeState
from ..frames.file_checkpoints import RewindError
from ..workspace.threads import (
    VSCODE_NOTEBOOK,
    ThreadChoice,
    ThreadInfo,
    list_threads,
    named_thread,
)
from .errors import AgentError

if TYPE_CHECKING:
    from ..workspace import Workspace
    from .session import AgentSession

_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def listing(workspace: Workspace) -> list[ThreadInfo]:
    """The workspace's threads, most recently used first."""
    return list_threads(state_path(workspace.root) / "threads")


def use(session: AgentSession, thread_id: str, *, create: bool = False) -> list[str]:
    """Switch to `thread_id` (an existing thread, or a new one with `create`)."""
    thread_id = thread_id.strip()
    if not _THREAD_ID.match(thread_id):
        raise AgentError(f"thread {thread_id!r}: use letters, digits, '.', '_' or '-'")
    if thread_id == session.workspace.thread_id:
        raise AgentError(f"this kernel is already on thread {thread_id!r}")
    known = {t.thread_id: t for t in listing(session.workspace)}
    if thread_id in known and create:
        raise AgentError(f"thread {thread_id!r} exists already; `thread use {thread_id}` opens it")
    if thread_id not in known and not create:
        import difflib  # 7 ms to import: loaded when first used

        close = difflib.get_close_matches(thread_id, list(known), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise AgentError(
            f"no thread {thread_id!r} in this workspace; {hint}`%logician threads` lists them "
            "(`%logician thread new NAME` starts one)"
        )
    notebook = known[thread_id].notebook if thread_id in known else None
    return switch(session, ThreadChoice(thread_id, "explicit", notebook=notebook))


def switch(session: AgentSession, choice: ThreadChoice) -> list[str]:
    """Move the session to `choice`'s thread; the new thread's notices."""
    return use_thread(session.workspace, choice, session)


def use_thread(
    workspace: Workspace, choice: ThreadChoice, session: AgentSession | None = None
) -> list[str]:
    """Move the workspace to `choice`'s thread, and the session when one is loaded (its
    status was about the other thread's runs); the new thread's notices."""
    try:
        notices = workspace.use_thread(choice)
    except RewindError as exc:
        raise AgentError(str(exc)) from None
    if session is not None:
        session.state = RuntimeState()
        session.budget = None
    return notices


def follow_vscode(
    workspace: Workspace,
    namespace: dict[str, object],
    *,
    framed: bool,
    session: AgentSession | None = None,
) -> str | None:
    """Follow VS Code's `__vsc_ipynb_file__` to that notebook's thread, before the kernel's
    first frame; a notice for the next cell, or None when there is nothing to say. The agent
    need not be loaded (`session`: the loaded one, whose status the switch resets)."""
    path = namespace.get(VSCODE_NOTEBOOK)
    if (
        not isinstance(path, str)
        or not path.strip()
        or workspace.thread_source in ("jupyter", "vscode")
    ):
        return None
    choice = named_thread(workspace.env, vscode_file=path.strip())
    if choice is None or choice.thread_id == workspace.thread_id:
        return None
    if framed:
        return (
            f"Logician: VS Code names this notebook {path}, but this kernel already recorded "
            f"frames on thread {workspace.thread_id!r}, so it stays there; "
            f"`%logician thread use {choice.thread_id}` moves to the notebook's thread."
        )
    try:
        notices = use_thread(workspace, choice, session)
    except AgentError as exc:
        return f"Logician: could not follow VS Code's notebook {path}: {exc}"
    for text in notices:
        workspace.notice(text)
    return (
        f"Logician: VS Code names this notebook {path}; this kernel uses its thread "
        f"{choice.thread_id!r} (one timeline per notebook, kept across restarts)."
    )
