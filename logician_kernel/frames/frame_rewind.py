"""The rewind side of the frame stack: which frame a request names, what rewinding it would
do (per path: restore, conflict, external, skipped), and carrying that out through a recorded
plan (`rewind_plan.py`). `FileCheckpoints` (file_checkpoints.py) owns the frames themselves;
these functions are handed it (no mixin: the frame stack does not know how it is rewound).

Must never: touch a path no popped frame changed, revert a change made outside this kernel
unless asked (`include_external`), overwrite a conflict unless forced, plan a path behind
a parent that became a symlink (a conflict even when forced), or, in a kernel that is not
root, change a file another account owns (in a shared folder, `--include-external --force`
included: it is listed as "owned by bob ...: left alone"). A root kernel (a container on a
host's files, where every file has another owner) may; the files it replaces keep their owner
(`snapshots/beneath.py`), and its undo gives the files it deleted back to the owner the plan
recorded (`rewind_plan.py`).
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..ledger.rewind_state import rewind_state
from ..ledger.thread_ledger import (
    FrameOpen,
    ProjectionItem,
    RestoredPath,
    RestoredVariable,
    RewindPlanned,
    project,
)
from ..snapshots.beneath import Beneath
from ..snapshots.stat_memory import timed_look
from ..types.path_states import PathChange, PathState
from . import rewind_plan
from .call_restored import is_call_restored, restored_by_calls
from .chain_verdict import clock, judge_chain
from .late_saves import with_late_save
from .restore import SKIP_TEXT, still_as_left
from .rewind_incomplete import (
    failed_of,
    given_up,
    pending_text,
    record_incomplete,
    retry_steps,
)
from .rewind_types import RewindError, RewindIncomplete, RewindPlan

if TYPE_CHECKING:
    from ..ledger.frame_view import FrameView
    from .file_checkpoints import FileCheckpoints


def resolve_target(checkpoints: FileCheckpoints, spec: int | str) -> int:
    """Turn a frame id, or a user's `7`, `--last` or `cell:N`, into an active frame's id,
    or say exactly why not."""
    frames = checkpoints.frames()
    active = checkpoints.active_frames()
    if isinstance(spec, int):
        return _check_target(frames, spec)
    if spec in ("--last", "last"):
        if not active:
            raise RewindError("nothing to rewind: no frame of this notebook is recorded yet")
        return active[-1].frame
    if spec.startswith("cell:"):
        count = spec[5:]
        matches = [f.frame for f in active if str(f.execution_count) == count]
        if not matches:
            raise RewindError(
                f"rewind: no frame left for cell In [{count}] (it did no work, was already "
                "rewound, or ran in an earlier kernel session; see `%logician frames`)"
            )
        return matches[-1]
    try:
        frame_id = int(spec)
    except ValueError:
        raise RewindError(
            f"rewind: {spec!r} is not a frame id; use a number from `%logician frames` or --last"
        ) from None
    return _check_target(frames, frame_id)


def _check_target(frames: dict[int, FrameView], frame_id: int) -> int:
    if frame_id not in frames:
        last = max(frames, default=None)
        known = f"frames are 1..{last}" if last else "no frame is recorded yet"
        raise RewindError(f"rewind: there is no frame {frame_id} ({known})")
    view = frames[frame_id]
    if view.status == "rewound":
        raise RewindError(
            f"rewind: frame {frame_id} was already rewound at {view.rewound_at} "
            f"(ledger entry {view.rewound_by})"
        )
    if view.status == "open":
        raise RewindError(f"rewind: frame {frame_id} is still running")
    return frame_id


def plan_rewind(
    checkpoints: FileCheckpoints,
    frame_id: int,
    *,
    force: bool = False,
    include_external: bool = False,
    keep_uncertain: bool = False,
) -> RewindPlan:
    checkpoints.settle()
    popped = [f for f in checkpoints.active_frames() if f.frame >= frame_id]
    chains: dict[str, list[tuple[int, PathChange]]] = {}
    saves = checkpoints.saves.recent()  # a save reported after its frame closed
    for view in popped:
        for change in view.changes:
            if saves:
                change = with_late_save(change, view, saves)
            chains.setdefault(change.path, []).append((view.frame, change))
    plan = RewindPlan(frames=[f.frame for f in popped])
    by_calls = restored_by_calls(checkpoints.ledger.entries, plan.frames)  # not conflicts
    for view in popped:
        for skip in view.skipped:
            plan.skipped.append(
                RestoredPath(
                    path=skip.path,
                    action="skipped",
                    detail=f"not captured by frame {view.frame}: {SKIP_TEXT[skip.reason]}",
                )
            )
    tree = Beneath(checkpoints.snapshotter.workspace) if checkpoints.snapshotter else None
    uid = os.geteuid()
    confirmed: list[PathState] = []  # post-images found still in place
    for path, full_chain in sorted(chains.items()):
        verdict = judge_chain(
            full_chain, include_external=include_external, keep_uncertain=keep_uncertain
        )
        if verdict.start is None:
            plan.external.append(
                RestoredPath(path=path, action="external", detail=verdict.external)
            )
            continue
        # A parent that became a symlink (or a file) is never followed, --force or not
        # (beneath.py), unless the popped frames made it so: then the rewind itself
        # deletes it first (restore_order), and the restore checks again.
        why, st, looked = timed_look(tree, path) if tree is not None else (None, None, None)
        if why is not None and getattr(why, "where", "").rstrip("/") not in chains:
            plan.conflicts.append(RestoredPath(path=path, action="conflict", detail=str(why)))
            continue
        if (foreign := _owned_by_another(st, uid)) is not None:
            plan.conflicts.append(RestoredPath(path=path, action="conflict", detail=foreign))
            continue
        chain = full_chain[verdict.start :]
        target = chain[0][1].before
        if (
            target.kind == "large"
            and checkpoints.budget
            and not checkpoints.budget.large.store.has(target.sha or "")
        ):
            plan.skipped.append(
                RestoredPath(
                    path=path,
                    action="skipped",
                    detail=f"its large pre-image from before frame {chain[0][0]} was evicted from "
                    "the side store (checkpoints.max_store_bytes); see `%logician storage`",
                )
            )
            continue
        if target.kind == "uncaptured":
            plan.skipped.append(
                RestoredPath(
                    path=path,
                    action="skipped",
                    detail=f"its state before frame {chain[0][0]} was not captured "
                    f"({SKIP_TEXT[target.reason or 'not-a-file']})",
                )
            )
            continue
        conflict = verdict.conflict or None
        for (f1, c1), (f2, c2) in zip(chain, chain[1:], strict=False):
            if conflict is not None:
                break
            if not c1.after.same_as(c2.before) and not is_call_restored(by_calls, path, c2.before):
                conflict = f"changed outside the kernel between frame {f1} and frame {f2}"
                break
        if conflict is None:
            after = chain[-1][1].after
            if checkpoints.budget is not None:
                after = checkpoints.budget.large.resolve(path, after)
            snap = checkpoints.snapshotter
            if snap is not None and snap.remembers(path, st, after):
                # Its lstat is what this session stored as `after` (stat_memory.py): not
                # read again, nor a state built for it (20,000 of them in a dialog's plan).
                confirmed.append(after)
                plan.restore.append((path, target))
                if looked is not None:  # the plan's record stores it by this look too
                    plan.looks[path] = looked
                continue
            # The look above, taken beneath the root, serves the hash: not taken again.
            current = snap.hash_path(path, looked) if snap is not None else None
            if still_as_left(current, after):
                # The frame stored these bytes: the plan's pre-image need not store them again.
                confirmed.append(after)
            elif not is_call_restored(by_calls, path, current):
                saved = checkpoints.saves.last_save(path)
                conflict = f"changed since frame {chain[-1][0]} recorded it" + (
                    f" (saved in JupyterLab at {clock(saved)})" if saved else ""
                )
        if conflict is not None and not force:
            plan.conflicts.append(RestoredPath(path=path, action="conflict", detail=conflict))
            continue
        plan.restore.append((path, target))
        if looked is not None:
            plan.looks[path] = looked
        if conflict is None and chain[-1][1].after.kind == "absent" and target.kind != "absent":
            plan.recreate.add(path)  # still as the cell left it: absent
    if tree is not None:
        tree.close()
    if checkpoints.snapshotter is not None:
        checkpoints.snapshotter.stored(confirmed)
    before = _messages_before(checkpoints, frame_id)
    plan.messages_dropped = max(0, len(project(checkpoints.ledger.entries)) - len(before))
    return plan


def _owned_by_another(st: os.stat_result | None, uid: int) -> str | None:
    """Why a path another account owns is left alone (module docstring), or None; `st` is
    its own stat now (None: absent, or behind a parent that changed, which the restore's
    own checks refuse)."""
    if st is None or uid == 0 or st.st_uid == uid:
        return None
    try:
        owner = f"{pwd.getpwuid(st.st_uid).pw_name} (uid {st.st_uid})"
    except KeyError:
        owner = f"uid {st.st_uid}"
    return (
        f"owned by {owner}, not by you: another account's file is left alone "
        "(--force and --include-external included)"
    )


def _messages_before(checkpoints: FileCheckpoints, frame_id: int) -> list[dict]:
    for index, entry in enumerate(checkpoints.ledger.entries):
        if isinstance(entry, FrameOpen) and entry.frame == frame_id:
            return project(checkpoints.ledger.entries[:index])
    return project(checkpoints.ledger.entries)


def rewind(
    checkpoints: FileCheckpoints,
    frame_id: int,
    *,
    force: bool = False,
    include_external: bool = False,
    keep_uncertain: bool = False,
    files: bool = True,
    conversation: bool = True,
    on_path: Callable[[str], None] | None = None,
    progress: rewind_plan.ProgressFn | None = None,
    variables: Callable[[], tuple[list[RestoredVariable], list[int]]] | None = None,
) -> ProjectionItem:
    """Rewind to just before `frame_id`: its files (popping frames `frame_id..latest`,
    restoring per file), then its variables (`variables` restores them and says which
    frames it took back), then its conversation (the messages as they were when the frame
    opened), in any combination; recorded durably as one `rewind` projection item."""
    if not (files or conversation or variables):
        raise RewindError("rewind: nothing to do (neither files nor conversation)")
    if files and checkpoints.snapshotter is None:
        raise RewindError(
            f"rewind: file capture is unavailable ({checkpoints.capture_disabled_reason}); "
            "nothing can be restored (`--conversation-only` still works)"
        )
    if (waiting := pending_text(rewind_state(checkpoints.ledger), "rewind")) is not None:
        raise RewindError(waiting)
    plan = (
        plan_rewind(
            checkpoints,
            frame_id,
            force=force,
            include_external=include_external,
            keep_uncertain=keep_uncertain,
        )
        if files
        else None
    )
    popped = [checkpoints.frames()[f] for f in plan.frames] if plan is not None else []
    record = rewind_plan.write_plan(
        checkpoints.ledger,
        checkpoints.snapshotter,
        frame_id,
        plan,
        since=popped[0].opened_at if popped else None,
        since_fs=popped[0].opened_fs if popped else None,
        files=files,
        conversation=conversation,
        variables=variables is not None,
        force=force,
        include_external=include_external,
    )
    return complete(checkpoints, record, on_path=on_path, progress=progress, variables=variables)


def complete(
    checkpoints: FileCheckpoints,
    record: RewindPlanned,
    *,
    resume: bool = False,
    force: bool = False,
    skip_failed: bool = False,
    on_path: Callable[[str], None] | None = None,
    progress: rewind_plan.ProgressFn | None = None,
    variables: Callable[[], tuple[list[RestoredVariable], list[int]]] | None = None,
) -> ProjectionItem:
    """Carry out a recorded rewind plan: files, then variables, then the conversation;
    `resume` after a crash reads each path first (what was restored is not a conflict).

    Done only when every path is: a pass that leaves paths failed records them and raises
    `RewindIncomplete` before variables or the conversation move. Resuming an incomplete
    rewind retries exactly its failed paths; `skip_failed` finishes it without them (after
    the retry, with `resume`), naming each one."""
    results: list[RestoredPath] = []
    state = rewind_state(checkpoints.ledger)
    mine = state.pending is not None and state.pending.seq == record.seq
    earlier = state.failed if mine else []  # an incomplete pass: retry exactly these
    if record.files:
        if checkpoints.snapshotter is None and not skip_failed:
            raise RewindError(
                f"rewind: file capture is unavailable "
                f"({checkpoints.capture_disabled_reason}); the rewind's files cannot "
                "be restored in this session (`--skip-failed` gives them up)"
            )
        results = list(state.results) if earlier else []
        if checkpoints.snapshotter is not None and (resume or not earlier):
            steps = retry_steps(record, earlier) if earlier else None
            with checkpoints.snap_lock:
                results += rewind_plan.carry_out(
                    checkpoints.ledger,
                    checkpoints.snapshotter,
                    record,
                    verify=resume,
                    force=force,
                    on_path=on_path,
                    progress=progress,
                    steps=steps,
                )
        else:
            results += earlier
        failed = failed_of(results)
        if failed and not skip_failed:
            raise RewindIncomplete(
                record_incomplete(checkpoints.ledger, record, results, undo=False)
            )
        if failed:
            results = [r for r in results if r.action != "failed"] + given_up(failed, undo=False)
    restored, variable_frames = variables() if variables is not None else ([], [])
    notes = [
        "--force" if record.force or force else "",
        "--resume" if resume else "",
        "--skip-failed" if skip_failed else "",
        "--include-external" if record.include_external else "",
        f"--call {record.call_id}"
        if record.call_id
        else f"--{record.scope.single}-only"
        if record.scope.single
        else "",
    ]
    messages = (
        _messages_before(checkpoints, record.frame)
        if record.conversation
        else checkpoints.ledger.messages()
    )
    return rewind_plan.finish(
        checkpoints.ledger,
        record,
        results,
        messages=messages,
        restored=restored,
        variable_frames=variable_frames,
        scope=record.scope,
        note=" ".join(n for n in notes if n),
    )
