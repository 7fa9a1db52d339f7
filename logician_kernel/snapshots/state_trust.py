"""Whose `.logician/` is it: the ownership check made before the kernel reads, runs or writes
anything of its state (like ssh's StrictModes and git's `safe.directory`).

Owns one decision, made on every open of the state directory and of the private store: the
state may be used only when no other account could have written it. That means
- the workspace (the directory holding `.logician/`) is owned by root or by the kernel's user,
  and no other account can write it, or it is sticky like /tmp (another account could
  otherwise rename our `.logician/` away and put its own in its place);
- `.logician/` is a real directory (not a symlink), owned by the kernel's user, writable by
  nobody else;
- each entry directly in it, and each entry directly in the store `.logician/git`, is owned by
  the kernel's user, writable by nobody else, and not a symlink.
Deeper files are not walked (a store holds 100k objects): once the check passes, the session
tightens `.logician/` to 0700, so from then on no other account can reach anything in it. What
may have been written deeper before (an archive unpacked with other owners kept) is treated
like any shipped `.logician/`: as data (store_config.py rewrites what git reads as
configuration; blobs are authenticated before use).

"Writable by nobody else" allows group write when no other account is in the group (neither
listed as a member nor by primary gid): the user's private group with umask 002 (as Debian's
ssh allows), or a single-user container whose volume Kubernetes made group-writable (fsGroup).

In a team folder (`durable/state_dir.py`) the shared `.logician/` is sticky and writable by
the team; a member's own state is `.logician/users/<uid>/`, checked like `.logician/` above,
beneath a `users/` owned by root or by the shared directory's owner.

Must never: follow a symlink while checking, create or change anything (the caller decides),
or accept a path it could not examine.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from collections.abc import Iterable
from pathlib import Path

from ..durable.state_dir import STATE_DIR, USERS_DIR, is_shared


class UntrustedStateError(OSError):
    """The state (or a file in it) could have been written by another account.

    The message names the path, what is wrong (its owner or mode) and the fix."""

    def __init__(self, path: Path, problem: str, fix: str) -> None:
        self.path, self.problem, self.fix = path, problem, fix
        super().__init__(f"{path} {problem}; {fix}")


def _name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _private_group(gid: int, uid: int) -> bool:
    """Whether no account but `uid` is in group `gid` (listed as a member, or by primary gid):
    the user's private group (umask 002), or a single-user container's volume group
    (Kubernetes' fsGroup makes every file group-writable)."""
    try:
        user, group = pwd.getpwuid(uid).pw_name, grp.getgrgid(gid)
        accounts = pwd.getpwall()
    except (KeyError, OSError):
        return False
    if not set(group.gr_mem) <= {user}:
        return False
    return not any(a.pw_gid == gid and a.pw_uid != uid for a in accounts)


def _others_can_write(st: os.stat_result, uid: int) -> bool:
    if st.st_mode & stat.S_IWOTH:
        return True
    return bool(st.st_mode & stat.S_IWGRP) and not _private_group(st.st_gid, uid)


def _lstat(path: Path) -> os.stat_result:
    try:
        return os.lstat(path)
    except OSError as exc:
        raise UntrustedStateError(
            path, f"cannot be examined ({exc.strerror or exc})", "check that it is readable"
        ) from exc


def check_workspace(workspace: Path) -> None:
    """The directory that holds `.logician/`: nobody else may replace what is in it."""
    uid = os.geteuid()
    st = _lstat(workspace)
    if st.st_uid not in (0, uid):
        raise UntrustedStateError(
            workspace,
            f"is owned by {_name(st.st_uid)}, who could replace the kernel's state in it",
            "frames need a workspace of your own (copy or clone the project)",
        )
    if _others_can_write(st, uid) and not st.st_mode & stat.S_ISVTX:
        raise UntrustedStateError(
            workspace,
            f"is writable by other accounts (mode {stat.filemode(st.st_mode)}), who could "
            "replace the kernel's state in it",
            f"run `chmod +t {workspace}` (sticky, like /tmp) or `chmod go-w {workspace}`",
        )


def check_owned(path: Path, *, fix_root: Path) -> None:
    """`path` is ours alone: not a symlink, owned by us, writable by nobody else."""
    uid = os.geteuid()
    st = _lstat(path)
    fix = (
        f"remove it (`rm -rf {fix_root}`) if you did not create it, or if it is yours run "
        f"`chown -R {_name(uid).split(' ')[0]} {fix_root} && chmod -R go-w {fix_root}`"
    )
    if stat.S_ISLNK(st.st_mode):
        raise UntrustedStateError(path, "is a symlink, which the kernel's state never is", fix)
    if st.st_uid != uid:
        raise UntrustedStateError(
            path, f"is owned by {_name(st.st_uid)}, not by you ({_name(uid)})", fix
        )
    if _others_can_write(st, uid):
        raise UntrustedStateError(
            path,
            f"is writable by other accounts (mode {stat.filemode(st.st_mode)})",
            f"run `chmod -R go-w {fix_root}` if nobody else wrote it, or remove it "
            f"(`rm -rf {fix_root}`)",
        )


def _entries(directory: Path) -> Iterable[Path]:
    try:
        with os.scandir(directory) as it:
            return [Path(e.path) for e in it]
    except OSError as exc:
        raise UntrustedStateError(
            directory, f"cannot be listed ({exc.strerror or exc})", "check that it is readable"
        ) from exc


def check_state_dir(workspace: Path, state: Path) -> None:
    """Raise `UntrustedStateError` unless the state directory (when it exists) and the
    workspace holding it are safe to use; see the module docstring for the rules. `state` is
    `.logician/` itself, or a member's `.logician/users/<uid>/` in a team folder
    (`durable/state_dir.py`)."""
    check_workspace(workspace)
    base = Path(workspace) / STATE_DIR
    if Path(state).parent == base / USERS_DIR:
        _check_team_path(base, Path(state))
        if not os.path.lexists(state):
            return
        check_owned(state, fix_root=state)
    elif not os.path.lexists(state):
        return
    else:
        st = _lstat(state)
        if Path(state) == base and st.st_uid == os.geteuid() and is_shared(st):
            # Its owner's own state in a team folder: the sticky bit keeps members' entries
            # (users/) from touching ours; every entry but users/ must be ours alone.
            for entry in _entries(state):
                if entry.name != USERS_DIR:
                    check_owned(entry, fix_root=state)
            check_store(state / "git", state)
            return
        check_owned(state, fix_root=state)
    if not stat.S_ISDIR(os.lstat(state).st_mode):
        raise UntrustedStateError(state, "is not a directory", f"remove it (`rm {state}`)")
    for entry in _entries(state):
        check_owned(entry, fix_root=state)
    check_store(state / "git", state)


def _check_team_path(base: Path, state: Path) -> None:
    """A member's state under a team's shared `.logician/`: the shared directory and its
    `users/` are sticky (nobody renames another's entry) and `users/` is its owner's or root's."""
    st = _lstat(base)
    if not is_shared(st) or stat.S_ISLNK(st.st_mode):
        raise UntrustedStateError(
            base,
            "is not a team folder's shared state directory (sticky, group-writable)",
            "see docs/deploy.md, Team folders",
        )
    users = base / USERS_DIR
    if not os.path.lexists(users):
        return  # nothing of a member's yet: the kernel says who makes users/ (open_thread.py)
    ust = _lstat(users)
    if not stat.S_ISDIR(ust.st_mode) or ust.st_uid not in (0, st.st_uid):
        raise UntrustedStateError(
            users,
            f"is owned by {_name(ust.st_uid)}, not by root or {_name(st.st_uid)} (who shares {base})",
            f"have {_name(st.st_uid).split(' ')[0]} remove it; their next kernel makes it again",
        )
    if _others_can_write(ust, os.geteuid()) and not ust.st_mode & stat.S_ISVTX:
        raise UntrustedStateError(
            users,
            f"is writable by other accounts without the sticky bit (mode {stat.filemode(ust.st_mode)}), "
            "so any member could replace another's state",
            f"run `chmod +t {users}`",
        )


def check_store(store: Path, state: Path) -> None:
    """The private store: a real directory of ours, its top-level files ours alone."""
    if not os.path.lexists(store):
        return
    check_owned(store, fix_root=state)
    if not stat.S_ISDIR(os.lstat(store).st_mode):
        raise UntrustedStateError(
            store,
            "is not a directory (a `gitdir:` file would point git elsewhere)",
            f"remove it (`rm {store}`)",
        )
    for entry in _entries(store):
        check_owned(entry, fix_root=state)
