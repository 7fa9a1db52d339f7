"""Where this account's state lives in a workspace: `.logician/` itself, or its own directory
under a `.logician/` shared by a team.

A `.logician/` that is missing, ours, or another account's private one is the state directory
as it always was (the ownership check then decides whether we may use it: state_trust.py).
A team folder's `.logician/` is shared: created by root or the group's admin, sticky (nobody
can rename or remove another member's entries) and group- or world-writable. Then each member
but its owner keeps everything in `.logician/users/<uid>/` (0700): frames, threads, store,
audit log, process records. The owner of a shared `.logician/` keeps the layout it had (no
migration: a single-user `.logician/` made shared later keeps its owner's frames where they
are). `users/` itself is made by that owner (its kernel does it, or the admin).

Must never: create or change anything (the caller does), or follow a symlink.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

STATE_DIR = ".logician"
USERS_DIR = "users"


def is_shared(st: os.stat_result) -> bool:
    """A team's `.logician/`: a directory, sticky, writable by its group or by all."""
    return (
        stat.S_ISDIR(st.st_mode)
        and bool(st.st_mode & stat.S_ISVTX)
        and bool(st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))
    )


def state_path(workspace: Path) -> Path:
    """This account's state directory in `workspace` (module docstring)."""
    base = Path(workspace) / STATE_DIR
    try:
        st = os.lstat(base)
    except OSError:
        return base
    if st.st_uid == os.geteuid() or not is_shared(st):
        return base
    return base / USERS_DIR / str(os.geteuid())


def workspace_of(state: Path) -> Path:
    """The workspace a state directory (`state_path`'s answer) belongs to."""
    state = Path(state)
    if state.name == STATE_DIR:
        return state.parent
    if state.parent.name == USERS_DIR and state.parent.parent.name == STATE_DIR:
        return state.parent.parent.parent
    return state.parent
