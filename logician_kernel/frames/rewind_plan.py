"""Rewinds that survive a crash and can be taken back: the plan record and its progress.

Before a rewind touches the first path it appends one `rewind_plan` record (fsynced): every
path it will restore, in order, with the state it brings the path to and the state that stood
there - stored in the object store, permission bits and owner included. That one record is both the
rewind's undo snapshot (`frames/undo.py`) and what `--resume` completes after a crash.
`rewind_progress` records follow in batches (flushed, not fsynced: a resume re-reads every
path's state anyway, so progress is a report, never the source of truth). The rewind's own
`rewind` projection item names its plan; a plan without one is an interrupted rewind.

Must never: call a path conflicting because an interrupted pass already restored it, or
touch a path that neither the rewind's before- nor after-state describes (unless forced).
"""

from __future__ import annotations

import os
import re
import signal
import stat
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..ledger.thread_ledger import (
    ProjectionItem,
    RestoredPath,
    RestoredVariable,
    RewindPlanned,
    RewindProgress,
    RewindStep,
    ThreadLedger,
)
from ..snapshots.beneath import Beneath
from ..snapshots.git_snapshot import GitSnapshotter
from ..snapshots.perms import (
    current_perms,
    default_perms,
    fs_clock,
    make_directories,
    remove_debris,
    with_perms,
)
from ..snapshots.stat_memory import timed_look
from ..types.path_states import PathState
from ..types.rewind_scope import RewindScope
from .restore import SKIP_TEXT, restore_order, restore_path, still_as_left

if TYPE_CHECKING:
    from .rewind_types import RewindPlan

BATCH = 500
"""Paths restored between two progress records."""
ProgressFn = Callable[[int, int], None]
"""Told `(done, total)` paths before the first path and after each one: a report for the
people waiting (the lab extension's bar), never a record; it must be cheap and must not raise."""
KILL_AFTER_ENV = "LOGICIAN_TEST_REWIND_KILL_AFTER"
"""Test-only: a rewind (or undo) kills its own process with SIGKILL after this many paths, so
a test of an interrupted rewind is exact instead of racing a sleep."""


def write_plan(
    ledger: ThreadLedger,
    snap: GitSnapshotter | None,
    frame_id: int,
    plan: RewindPlan | None,
    *,
    since: str | None,
    since_fs: float | None = None,
    files: bool,
    conversation: bool,
    variables: bool,
    force: bool,
    include_external: bool = False,
    call_id: str | None = None,
) -> RewindPlanned:
    """Store what every path of the plan holds now and record the plan durably."""
    steps = []
    if plan is not None and snap is not None:
        order = restore_order(plan.restore)
        # Thousands of paths: one pack, before the record; one walk beneath the root, each
        # directory opened once, gives each path's `lstat` (a parent that is not a plain
        # directory: the store looks by name, and stores nothing behind it). A path the plan
        # just judged is stored by the plan's own look (its clock read before it: a write
        # since makes the file's identity differ, so no note of it can be trusted wrongly).
        looks = plan.looks
        with snap.blob_batch(len(order)), Beneath(snap.workspace) as tree:
            for path, target in order:
                looked = looks.get(path) or timed_look(tree, path)[2]
                # Its bits and owner from the `lstat` the store judged it by: one look a path.
                current, st = snap.store_looked(path, looked)
                bits, owner = _bits_and_owner(st)
                # Exact bits, usual ones too: an undo must put back a 0644 the rewind made 0600.
                current = with_perms(current, bits)
                # And its owner: an undo as root gives a file the rewind deleted back to them.
                uid, gid = owner or (None, None)
                steps.append(
                    RewindStep(path=path, target=target, current=current, uid=uid, gid=gid)
                )
    record: RewindPlanned = ledger.append(
        RewindPlanned,
        frame=frame_id,
        frames=plan.frames if plan is not None else [],
        files=files,
        conversation=conversation,
        variables=variables,
        force=force,
        include_external=include_external,
        call_id=call_id,
        steps=steps,
        known=(plan.conflicts + nested_once(plan.skipped, [s.path for s in steps]) + plan.external)
        if plan is not None
        else [],
        since=since,
        since_fs=since_fs,
        fs_time=fs_clock(),
        durable=True,
    )
    return record


def _bits_and_owner(st: os.stat_result | None) -> tuple[int | None, tuple[int, int] | None]:
    """`current_perms` and `current_owner` of one path from its `lstat` (None: absent)."""
    if st is None:
        return None, None
    regular = stat.S_ISREG(st.st_mode)
    owner = (st.st_uid, st.st_gid) if regular or stat.S_ISLNK(st.st_mode) else None
    return (st.st_mode & 0o7777 if regular else None), owner


_NESTED = re.compile(r"not captured by frame (\d+): " + re.escape(SKIP_TEXT["nested-repository"]))


def nested_once(skipped: list[RestoredPath], steps: list[str]) -> list[RestoredPath]:
    """The skips, each nested repository named once whatever the number of frames that saw
    it, and truthfully: when the plan restores files beneath it (frames that saw them one by
    one captured them), it is not "not captured" as a whole."""
    frames: dict[str, list[str]] = {}
    out: list[RestoredPath] = []
    for skip in skipped:
        found = _NESTED.fullmatch(skip.detail)
        if found is None:
            out.append(skip)
        elif skip.path not in frames:
            frames[skip.path] = [found.group(1)]
        elif found.group(1) not in frames[skip.path]:
            frames[skip.path].append(found.group(1))
    for path, seen in frames.items():
        which = f"frame{'s' if len(seen) > 1 else ''} {', '.join(seen)}"
        inside = sum(1 for s in steps if s.startswith(path + "/"))
        detail = (
            f"a nested git repository: {inside} of its files were captured and are restored; "
            f"what {which} changed in it was seen only as the repository and not captured"
            if inside
            else f"not captured by {which}: {SKIP_TEXT['nested-repository']}"
        )
        out.append(RestoredPath(path=path, action="skipped", detail=detail))
    return out


def carry_out(
    ledger: ThreadLedger,
    snap: GitSnapshotter,
    record: RewindPlanned,
    *,
    undo: bool = False,
    verify: bool = False,
    force: bool = False,
    on_path: Callable[[str], None] | None = None,
    progress: ProgressFn | None = None,
    steps: Sequence[RewindStep] | None = None,
    dirs: Sequence[RestoredPath] = (),
) -> list[RestoredPath]:
    """Bring every path of the plan to its target (or, `undo`, back to what stood there);
    `steps`, when given, only those (a retry of the paths an incomplete pass failed).
    `dirs` (an undo): the directories the rewind removed (`bits` set), made again.

    `verify` (a resume, an undo) first reads each path: one already as wanted is done, not a
    conflict; one in neither state changed under us and is left alone unless `force`.
    """
    kill_after = int(os.environ.get(KILL_AFTER_ENV) or 0)
    results: list[RestoredPath] = []
    todo = record.steps if steps is None else steps
    if progress is not None:
        progress(0, len(todo))
    # Blobs in restore order from one git process (a rewind of thousands of files).
    wanted = [
        w.sha for s in todo if (w := s.current if undo else s.target).kind == "blob" and w.sha
    ]
    # One walk beneath the workspace for the whole pass: each directory is opened once.
    with Beneath(snap.workspace) as tree, snap.blob_stream(wanted):
        for index, step in enumerate(todo, start=1):
            want, was = (step.current, step.target) if undo else (step.target, step.current)
            if undo and step.uid is not None and step.gid is not None:
                tree.owners[step.path] = (step.uid, step.gid)  # as root: theirs again
            results.append(
                _one(snap, tree, step.path, want, was, verify=verify, force=force, undo=undo)
            )
            if on_path is not None:
                on_path(step.path)
            if progress is not None:
                progress(index, len(todo))
            if kill_after and index == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            if index % BATCH == 0 and index < len(todo) and steps is None:
                ledger.append(RewindProgress, plan=record.seq, done=index, undo=undo)
        emptied = [s.path for s in record.steps if not (s.current if undo else s.target).exists]
        since = record.time if undo else record.since
        since_fs = record.fs_time if undo else record.since_fs
        # A rewind also looks at every directory the detector knows (a frame may have made
        # directories and no file); an undo only above its own paths: a directory born since
        # the rewind is not the rewind's.
        known = () if undo else snap.directories()
        for directory, bits in remove_debris(snap.workspace, emptied, since, tree, known, since_fs):
            results.append(
                RestoredPath(
                    path=directory + "/",
                    action="deleted",
                    detail=(
                        "an empty directory the rewind made"
                        if undo
                        else "an empty directory the rewound frames made"
                    ),
                    bits=bits,
                )
            )
        if undo:  # after the debris pass: these are born now, and may be empty
            made = [(d.path.rstrip("/"), d.bits) for d in dirs if d.bits is not None]
            failed = make_directories(tree, made)
            results.extend(
                RestoredPath(
                    path=path + "/",
                    action=failed[path][0] if path in failed else "recreated",
                    detail=failed[path][1] if path in failed else "a directory the rewind removed",
                )
                for path, _ in made
            )
    snap.invalidate()
    return results


def _one(
    snap: GitSnapshotter,
    tree: Beneath,
    path: str,
    want: PathState,
    was: PathState,
    *,
    verify: bool,
    force: bool,
    undo: bool,
) -> RestoredPath:
    if want.kind == "uncaptured":
        return RestoredPath(
            path=path,
            action="skipped",
            detail=(
                "its state before the rewind was not captured (not a regular file, or over "
                "checkpoints.max_file_bytes)"
            ),
        )
    if verify and (blocked := tree.blocked(path)) is not None:
        return RestoredPath(path=path, action="conflict", detail=blocked)  # before reading it
    if verify:
        now = snap.hash_path(path)
        if matches(snap, path, now, want, exact=True):
            return RestoredPath(
                path=path,
                action="deleted" if not want.exists else "restored",
                detail="already done before the interruption"
                if not undo
                else "already as before the rewind",
            )
        if not force and not matches(snap, path, now, was):
            return RestoredPath(
                path=path,
                action="conflict",
                detail=(
                    "changed since the rewind; `%logician undo --force` overwrites it"
                    if undo
                    else "changed since the interrupted rewind planned it; `--force` overwrites it"
                ),
            )
    return restore_path(snap, path, want, tree)


def matches(
    snap: GitSnapshotter, path: str, now: PathState, state: PathState, *, exact: bool = False
) -> bool:
    """Whether `path` is as `state` says. A state without recorded bits had the bits its git
    mode and the umask give: `exact` holds the file to those (a path already restored must
    be restored with its mode too), else any bits match (a chmod alone is no conflict)."""
    if not still_as_left(now, state):
        return False
    bits = current_perms(snap.workspace / path)
    if state.perms is not None:
        return bits == state.perms
    if not exact or bits is None or state.kind not in ("blob", "large") or state.mode == "120000":
        return True
    return bits == default_perms(state.mode == "100755")


def finish(
    ledger: ThreadLedger,
    record: RewindPlanned,
    results: list[RestoredPath],
    *,
    messages: list[dict],
    restored: Sequence[RestoredVariable],
    variable_frames: list[int],
    scope: RewindScope,
    note: str,
) -> ProjectionItem:
    """The rewind's `rewind` projection item: it pops the frames and completes the plan."""
    item: ProjectionItem = ledger.append(
        ProjectionItem,
        reason="rewind",
        messages=messages,
        frames=record.frames if record.files else [],
        paths=sorted(list(record.known) + results, key=lambda r: r.path),
        note=note,
        scope=scope,
        variables=list(restored),
        variable_frames=variable_frames,
        plan=record.seq,
        durable=True,
    )
    return item
