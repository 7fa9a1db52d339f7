"""One open thread of a workspace: its `.logician/`, its ledger, its frames and variables.

Owns opening (or failing to open, visibly) the thread ledger and the snapshot store for one
workspace, recovering what a dead kernel left behind, and naming the thread. `Workspace`
holds one `OpenThread` at a time (`use_thread` swaps it); nothing above the workspace sees it.
Everything here is Jupyter-free; the kernel feeds it the notebook's name and cell metadata.

Must never: raise out of `open` (a broken `.logician/` downgrades to "capture unavailable"
with a notice), or read configuration itself (it is handed the resolved values).
"""

from __future__ import annotations

import os
import re
import stat
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from .._version import __version__
from ..config._effective import user_config_dir
from ..durable.blob_key import BlobKey, KeyFileError
from ..durable.journal import JournalError
from ..durable.lease import TEST_HOST, LeaseHeld, ThreadLease
from ..durable.private import PRIVATE_FILE, private_dir, write_private
from ..durable.state_dir import STATE_DIR, USERS_DIR, is_shared, state_path
from ..frames.file_checkpoints import FileCheckpoints
from ..frames.rewind_incomplete import interrupted_notice
from ..frames.variable_checkpoints import VariableCheckpoints
from ..ledger.run_store import resolve_dangling_calls
from ..ledger.settle import resolve_pending_approvals
from ..ledger.thread_ledger import (
    ProjectionItem,
    Recovery,
    SessionStart,
    ThreadLedger,
    UnknownRecordError,
)
from ..snapshots.change_detection import ChangeDetection
from ..snapshots.git_snapshot import GitSnapshotter, SnapshotError
from ..snapshots.large_files import LargeFiles, LargeLimits
from ..snapshots.large_store import LargeFileStore
from ..snapshots.state_trust import UntrustedStateError, check_state_dir
from .threads import ThreadChoice, ThreadSource, choose_thread, named_thread, recent_notice

Reaper = Callable[[Path, BlobKey], list[str]]
"""Kills what the tools of a dead kernel left running in `workspace`; one notice each."""


def index_name_for(thread_id: str) -> str:
    """The private index of one thread's kernel, in the shared store."""
    return f"logician-index-{thread_id}"


def thread_id_for(env: Mapping[str, str]) -> tuple[str, bool]:
    """The thread the environment names, and whether it names one (`threads.named_thread`:
    the server's `JPY_SESSION_NAME` notebook path, else `LOGICIAN_THREAD`); without a name, a
    fresh id (a kernel then reopens the workspace's most recent thread, `choose_thread`)."""
    named = named_thread(env)
    if named is not None:
        return named.thread_id, True
    return f"session-{uuid.uuid4().hex[:12]}", False


def held_thread_fork(thread_id: str) -> str:
    """The id of a kernel's own thread when `thread_id` is held by another kernel: the held
    id with one fresh suffix. A suffix an earlier overlapping kernel added is replaced, not
    stacked: each unnamed kernel reopens the most recent thread, which is the last fork, and
    stacked suffixes grew past the 128 characters a thread id may have."""
    base = re.sub(r"(-[0-9a-f]{6})+$", "", thread_id)[:100]
    return f"{base}-{uuid.uuid4().hex[:6]}"


def refused_notice(exc: UntrustedStateError) -> str:
    """What the first cell says when the state is not this user's alone."""
    return (
        f"Logician: frames are off for this session: {exc.path} {exc.problem}, so the kernel "
        f"neither reads nor runs anything from it. Fix: {exc.fix}; `logician state check` "
        "checks again. Cells run normally as in a plain kernel; nothing is captured or "
        "rewindable until it is fixed and the kernel restarts."
    )


@dataclass
class OpenThread:
    """One thread of one workspace, opened for one kernel (or `%load_ext`, or script)."""

    workspace: Path
    thread_id: str
    stable_thread: bool
    ledger: ThreadLedger | None
    checkpoints: FileCheckpoints | None
    notices: list[str] = field(default_factory=list)
    _lock: FileLock | None = None
    variables: VariableCheckpoints | None = None
    """The thread's variable capture (None when the ledger is unavailable)."""
    thread_source: ThreadSource = "explicit"
    """Where the thread id came from (a kernel follows VS Code's notebook name only when
    nothing stronger named the thread)."""
    notebook: str | None = None
    """The notebook the thread is named after, when known."""
    lease: ThreadLease | None = None
    """This kernel's lease on the thread (one writer per thread, across hosts)."""
    lease_note: str | None = None
    """What `%logician threads` says about how this kernel came by its thread: another kernel
    held the one it was named, or it took a stale one over."""

    @classmethod
    def unavailable(cls, workspace: Path, env: Mapping[str, str], notice: str) -> OpenThread:
        """A thread with frames off for `notice`'s reason; nothing under `workspace` is made."""
        choice = named_thread(env) or ThreadChoice(thread_id_for(env)[0], "new")
        return cls(
            Path(workspace),
            choice.thread_id,
            False,
            None,
            None,
            [notice],
            thread_source=choice.source,
            notebook=choice.notebook,
        )

    @classmethod
    def open(
        cls,
        workspace: Path,
        *,
        env: Mapping[str, str],
        capture_enabled: bool = True,
        max_file_bytes: int = 2 * 1024**3,
        extra_ignores: tuple[str, ...] = (),
        kernel_session: str = "",
        large: LargeLimits | None = None,
        change_detection: ChangeDetection = "auto",
        variables: dict[str, object] | None = None,
        thread: ThreadChoice | None = None,
        state_key: BlobKey | None = None,
        reap: Reaper | None = None,
    ) -> OpenThread:
        """`thread` overrides the choice from `env` (`%logician thread use`, VS Code's name).
        `state_key` authenticates the variable blobs (default: `state.key` in the user config
        dir that `env` names). `reap` settles what a dead kernel's tools left running (the
        process guard's records; handed in by the caller that has tools)."""
        workspace = Path(workspace).resolve()
        state = state_path(workspace)  # `.logician/`, or ours under a team's shared one
        try:  # before anything of `.logician/` is read: another account may have written it
            check_state_dir(workspace, state)
        except UntrustedStateError as exc:
            choice = thread or named_thread(env) or ThreadChoice(thread_id_for(env)[0], "new")
            return cls(
                workspace,
                choice.thread_id,
                False,
                None,
                None,
                [refused_notice(exc)],
                thread_source=choice.source,
                notebook=choice.notebook,
            )
        choice = thread or choose_thread(env, state / "threads")
        thread_id, stable = choice.thread_id, True
        lock: FileLock | None = None
        lease: ThreadLease | None = None
        lease_note: str | None = None
        notices: list[str] = [choice.notice] if choice.notice else []
        try:
            _make_state(workspace / STATE_DIR, state)
            private_dir(state / "threads")
            ignore = state / ".gitignore"
            if not ignore.exists():  # keeps our state out of the user's `git status`
                write_private(ignore, b"# Logician Kernel state; see ARCHITECTURE.md\n*\n")
            try:
                lock, lease = _hold(state / "threads", thread_id, env)
            except (Timeout, LeaseHeld) as held:
                other = thread_id
                thread_id, stable = held_thread_fork(thread_id), False
                lease_note = held_note(other, thread_id, held)
                notices.append(f"Logician: {lease_note}.")
                lock, lease = _hold(state / "threads", thread_id, env)
            took = lease.taken_from
            if took is not None and not took.released and took.pid != lease.record.pid:
                lease_note = (
                    f"this kernel took thread {thread_id!r} over from "
                    f"{took.describe()}: {lease.taken_because}; its fencing token "
                    f"is now {lease.record.token}, so that kernel can no longer append to it"
                )
                notices.append(f"Logician: {lease_note}.")
            _check_view(state / "threads" / f"{thread_id}.jsonl", lease)
            ledger = ThreadLedger(state / "threads", thread_id, fence=lease.check)
            lease.progress = lambda: ledger.journal.size
        except UnknownRecordError as exc:
            _let_go(lock, lease)
            notices.append(f"Logician: frames are off for this session: {exc}.")
            return cls(
                workspace,
                thread_id,
                stable,
                None,
                None,
                notices,
                thread_source=choice.source,
                notebook=choice.notebook,
            )
        except (OSError, JournalError, Timeout, LeaseHeld) as exc:
            _let_go(lock, lease)
            notices.append(
                f"Logician: frames are off for this session: cannot use {state} "
                f"({getattr(exc, 'strerror', None) or exc}). Cells run normally; nothing is "
                "captured or rewindable until that directory is writable and the kernel restarts."
            )
            return cls(
                workspace,
                thread_id,
                stable,
                None,
                None,
                notices,
                thread_source=choice.source,
                notebook=choice.notebook,
            )

        if ledger.recovered_tail is not None:
            notices.append(
                f"Logician: {ledger.entries[-1].detail}; cut bytes kept in "  # type: ignore[union-attr]
                f"{ledger.recovered_tail.side_file}"
            )
        notices.extend(f"Logician: {e.detail}." for e in ledger.damaged)
        if ledger.checkpoint_notice:
            notices.append(f"Logician: {ledger.checkpoint_notice}.")
        start = ledger.append(
            SessionStart,
            kernel_session=kernel_session or uuid.uuid4().hex,
            pid=os.getpid(),
            workspace=str(workspace),
            version=__version__,
            notebook=choice.notebook,
        )
        snapshotter: GitSnapshotter | None = None
        reason = None
        if capture_enabled:
            snapshotter = GitSnapshotter(
                workspace,
                state / "git",
                max_file_bytes=max_file_bytes,
                extra_ignores=extra_ignores,
                large=LargeFiles(
                    workspace, LargeFileStore(state / "large"), large or LargeLimits()
                ),
                index_name=index_name_for(thread_id),
            )
            try:
                snapshotter.ensure_store()
                snapshotter.watch(change_detection)
                if cleared := snapshotter.clear_stale_user_lock():
                    notices.append(cleared)
            except (SnapshotError, OSError) as exc:
                reason = f"the snapshot store could not be set up: {exc}"
                notices.append(f"Logician: file capture is off for this session: {reason}.")
                snapshotter = None
        else:
            reason = "checkpoints.enabled is false in the configuration"
        checkpoints = FileCheckpoints(ledger, snapshotter, capture_disabled_reason=reason)
        if choice.source == "recent":
            notices.insert(0, recent_notice(thread_id, len(checkpoints.active_frames())))
        since = len(ledger.entries)  # what is appended from here on: no need to read history
        if checkpoints.recover_incomplete():
            notices.extend(
                f"Logician: {e.detail}."
                for e in ledger.entries[since:]
                if isinstance(e, Recovery) and e.what == "incomplete-frame" and e.seq > start.seq
            )
        notices.extend(resolve_pending_approvals(ledger))  # before the calls: none of them ran
        notices.extend(resolve_dangling_calls(ledger))
        if interrupted := interrupted_notice(ledger):
            notices.append(interrupted)
        if state_key is None:
            state_key = BlobKey.in_dir(user_config_dir(env))
        if reap is not None:  # a quarantined process group must not live on
            notices.extend(reap(workspace, state_key))
        if stable and ledger.messages():
            # A restart rebuilt the conversation from the ledger: say so in it (`restore`).
            ledger.append(
                ProjectionItem,
                reason="restore",
                messages=ledger.messages(),
                note=f"kernel session {kernel_session or 'new'}",
            )
        checkpoints.start_warmup()
        var_checkpoints = VariableCheckpoints(ledger, state, key=state_key, **(variables or {}))  # type: ignore[arg-type]
        if checkpoints.budget is not None:  # one disk budget for large files and variables
            checkpoints.budget.attach_variables(var_checkpoints.store, lambda: ledger.entries)
            var_checkpoints.after_store = checkpoints.budget.fit
        if var_checkpoints.enabled:
            try:  # made on first use, so a refused key is said once, here, not per cell
                state_key.secret()
            except KeyFileError as exc:
                notices.append(f"Logician: variables are not captured or restored: {exc}.")
        return cls(
            workspace,
            thread_id,
            stable,
            ledger,
            checkpoints,
            notices,
            lock,
            var_checkpoints,
            thread_source=choice.source,
            notebook=choice.notebook,
            lease=lease,
            lease_note=lease_note,
        )

    def close(self) -> None:
        if self.checkpoints is not None:
            self.checkpoints.idle.close()
        if self.checkpoints is not None and self.checkpoints.snapshotter is not None:
            self.checkpoints.settle()
            self.checkpoints.snapshotter.close()
        if self.ledger is not None:
            self.ledger.close()
        _let_go(self._lock, self.lease)

    @property
    def lease_lost(self) -> str | None:
        """Why this kernel no longer writes its thread (another kernel took it over), or None."""
        return self.lease.lost if self.lease is not None else None


def _hold(threads: Path, thread_id: str, env: Mapping[str, str]) -> tuple[FileLock, ThreadLease]:
    """This host's lock and the cross-host lease of one thread; `Timeout` or `LeaseHeld`."""
    # A test playing two hosts on one machine gives each its own flock, as a network mount
    # does (an flock there is local to each client): only the lease then keeps them apart.
    host = env.get(TEST_HOST, "").strip()
    name = f"{thread_id}.{host}.lock" if host else f"{thread_id}.lock"
    lock = FileLock(threads / name, mode=PRIVATE_FILE)
    lock.acquire(timeout=0)
    try:
        return lock, ThreadLease.acquire(threads / f"{thread_id}.lease", env=dict(env))
    except BaseException:
        lock.release()
        raise


def _make_state(base: Path, state: Path) -> None:
    """Create this account's state directory: `.logician/` 0700 as always; in a team folder
    the owner's `.logician/` keeps its shared mode (and gets `users/`, as shared), a member's
    `users/<uid>/` is made 0700 beneath the `users/` its owner made."""
    if state == base:
        try:
            st = os.lstat(base)
        except FileNotFoundError:
            private_dir(base)
            return
        if not is_shared(st):
            private_dir(base)
            return
        users = base / USERS_DIR
        if not users.exists():
            users.mkdir()
            os.chmod(users, stat.S_IMODE(st.st_mode) | stat.S_ISVTX)
        return
    if not (base / USERS_DIR).is_dir():
        owner = base.stat().st_uid
        raise PermissionError(
            f"{base} is shared by a team, but has no {USERS_DIR}/ for members yet; its owner "
            f"(uid {owner}) makes it by starting a kernel here, or runs "
            f"`mkdir {base / USERS_DIR} && chmod {oct(stat.S_IMODE(base.stat().st_mode))[2:]} "
            f"{base / USERS_DIR}`"
        )
    private_dir(state)


def _check_view(path: Path, lease: ThreadLease) -> None:
    """Refuse a ledger this client sees shorter than a holder that did not release it left
    it: a network mount's cache (sshfs without `-o cache=no`) showing an older copy, which an
    append would write over. (A holder on this host that did not survive a reboot may have
    lost unsynced records: its ledger is legitimately shorter.)"""
    before = lease.taken_from
    if before is None or before.released:
        return
    if before.host == lease.record.host and before.boot_id != lease.record.boot_id:
        return
    try:
        seen = path.stat().st_size
    except FileNotFoundError:
        seen = 0
    if seen < before.ledger_bytes:
        lease.abandon()
        raise OSError(
            f"{path} shows {seen} bytes here, but its last writer ({before.describe()}) left "
            f"{before.ledger_bytes}: this mount shows an older copy (a client cache, such as "
            "sshfs without `-o cache=no`), and appending to it would overwrite records; "
            "restart the kernel once the mount shows the whole file"
        )


def _let_go(lock: FileLock | None, lease: ThreadLease | None) -> None:
    if lease is not None:
        lease.release()
    if lock is not None and lock.is_locked:
        lock.release()


def held_note(thread_id: str, new_id: str, held: Exception) -> str:
    """What the first cell and `%logician threads` say when another kernel holds the thread."""
    if isinstance(held, LeaseHeld) and held.holder is not None:
        holder = held.holder
        who = f"{holder.describe()} (heartbeat {held.age:.0f} s ago)"
    else:
        who = "another kernel on this host"
    return (
        f"thread {thread_id!r} is held by {who}; this kernel records a thread of its own, "
        f"{new_id!r}, so the two never interleave one ledger (it does not write {thread_id!r})"
    )
