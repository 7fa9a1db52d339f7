"""`%logician undo`: take back the most recent rewind exactly, from its plan record.

The rewind's `rewind_plan` record holds, for every path it restored, what stood there before
(stored, with its permission bits): the undo brings each path back to that state, files it
deleted back, files it recreated gone, and the empty directories it made removed. Variables
come back from the manifests of the frames the rewind took back (they count again), and the
conversation is the projection as it was when the rewind was planned. One `restore`
projection item that `undoes` the rewind records it all; the popped frames are active again.

Must never: undo a rewind twice, or overwrite a path changed since the rewind (unless
forced): an undo that meets such a path refuses and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ledger.rewind_state import rewind_state
from ..ledger.thread_ledger import (
    ProjectionItem,
    RestoredPath,
    RestoredVariable,
    RewindPlanned,
    RewindProgress,
    RewindStep,
    VariableRecord,
    VariablesCaptured,
    project,
)
from . import rewind_plan
from .file_checkpoints import FileCheckpoints, RewindError
from .rewind_incomplete import failed_of, given_up, pending_text, record_incomplete, retry_steps
from .rewind_types import RewindIncomplete
from .variable_checkpoints import VariableCheckpoints, history


def undoable(checkpoints: FileCheckpoints) -> tuple[ProjectionItem, RewindPlanned]:
    """The most recent rewind and its plan, or a one-line reason why there is nothing to undo."""
    entries = checkpoints.ledger.entries
    waiting = pending_text(rewind_state(checkpoints.ledger), "undo")
    if waiting is not None:
        raise RewindError(waiting)
    last = next(
        (e for e in reversed(entries) if isinstance(e, ProjectionItem) and e.reason == "rewind"),
        None,
    )
    if last is None:
        raise RewindError("undo: there is no rewind to undo in this notebook's thread")
    undone = next(
        (e for e in entries if isinstance(e, ProjectionItem) and e.undoes == last.seq), None
    )
    what = f"frame(s) {', '.join(map(str, last.frames))}" if last.frames else "the conversation"
    if undone is not None:
        raise RewindError(
            f"undo: the last rewind ({what}, ledger entry {last.seq}) was already undone at "
            f"{undone.time[:19]} UTC (entry {undone.seq}); nothing was changed"
        )
    record = next((e for e in entries if isinstance(e, RewindPlanned) and e.seq == last.plan), None)
    if record is None:
        raise RewindError(
            f"undo: the last rewind ({what}, ledger entry {last.seq}) kept no undo snapshot "
            "(it was made by an older logician_kernel); nothing was changed"
        )
    return last, record


def undo_rewind(
    checkpoints: FileCheckpoints,
    variables: VariableCheckpoints | None,
    *,
    force: bool = False,
    skip_failed: bool = False,
    on_path: Callable[[str], None] | None = None,
    progress: rewind_plan.ProgressFn | None = None,
) -> ProjectionItem:
    """Undo the most recent rewind: files, then variables, then the conversation. Done only
    when every path is (see rewind_incomplete.py): an undo left incomplete retries exactly
    its failed paths, or with `skip_failed` finishes without them, naming each."""
    last, record = undoable(checkpoints)
    ledger = checkpoints.ledger
    state = rewind_state(ledger)
    earlier = state.undo_failed if state.pending_undo is not None else []
    if skip_failed and not earlier:
        raise RewindError(
            "undo --skip-failed: no undo is incomplete; `%logician undo` undoes the last rewind"
        )
    results: list[RestoredPath] = list(state.undo_results) if earlier else []
    if skip_failed:
        results += given_up(earlier, undo=True)
    elif record.files and record.steps:
        if checkpoints.snapshotter is None:
            raise RewindError(
                f"undo: file capture is unavailable ({checkpoints.capture_disabled_reason}); "
                "the rewound files cannot be brought back in this session"
            )
        checkpoints.settle()
        # A path the rewind found as it left it (a file a popped frame made and the next one
        # deleted) is not the undo's: whatever stands there now, written since, stays.
        todo = [s for s in (retry_steps(record, earlier) if earlier else record.steps) if _moved(s)]
        steps = todo if earlier or len(todo) != len(record.steps) else None
        if not force:
            _refuse_conflicts(checkpoints, record, steps)
        if not earlier:
            # Said on the next start if the kernel dies before the undo is recorded.
            ledger.append(RewindProgress, plan=record.seq, done=0, undo=True, durable=True)
        results += rewind_plan.carry_out(
            ledger,
            checkpoints.snapshotter,
            record,
            undo=True,
            verify=True,
            force=force,
            on_path=on_path,
            progress=progress,
            steps=steps,
            dirs=[p for p in last.paths if p.path.endswith("/") and p.action == "deleted"],
        )
        if failed_of(results):
            raise RewindIncomplete(record_incomplete(ledger, record, results, undo=True))
    restored = redo_variables(variables, last.variable_frames)
    entries = ledger.entries
    at = next(i for i, e in enumerate(entries) if e.seq == record.seq)
    messages = project(entries[:at]) if record.conversation else ledger.messages()
    item: ProjectionItem = ledger.append(
        ProjectionItem,
        reason="restore",
        messages=messages,
        frames=last.frames,
        paths=sorted(results, key=lambda r: r.path),
        note=f"undo of the rewind in ledger entry {last.seq}"
        + (" --force" if force else "")
        + (" --skip-failed" if skip_failed else ""),
        variables=restored,
        variable_frames=last.variable_frames,
        undoes=last.seq,
        durable=True,
    )
    return item


def _moved(step: RewindStep) -> bool:
    """Whether the rewind changed this path (else its undo has nothing to put back)."""
    return not (step.target.same_as(step.current) and step.target.perms == step.current.perms)


def _refuse_conflicts(
    checkpoints: FileCheckpoints, record: RewindPlanned, steps: list[RewindStep] | None = None
) -> None:
    """An undo is exact or it does not start: paths changed since the rewind stop it."""
    snap = checkpoints.snapshotter
    assert snap is not None
    changed = [
        s.path
        for s in (record.steps if steps is None else steps)
        if s.current.kind != "uncaptured"
        and not rewind_plan.matches(snap, s.path, now := snap.hash_path(s.path), s.target)
        and not rewind_plan.matches(snap, s.path, now, s.current)
    ]
    if changed:
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        raise RewindError(
            f"undo: {len(changed)} file(s) changed since the rewind ({', '.join(changed[:5])}"
            f"{more}); nothing was changed. `%logician undo --force` overwrites them with what "
            "stood there before the rewind"
        )


def redo_variables(
    variables: VariableCheckpoints | None, frames: list[int]
) -> list[RestoredVariable]:
    """Give every name the frames touched its latest value with those frames counting again."""
    if variables is None or variables.namespace is None or not frames:
        return []
    entries = variables.ledger.entries
    counted = history(entries).records
    for entry in entries:
        if isinstance(entry, VariablesCaptured) and entry.frame in frames:
            counted.setdefault(entry.frame, []).extend(entry.records)
    latest: dict[str, VariableRecord] = {}
    touched: set[str] = set()
    for frame in sorted(counted):
        for record in counted[frame]:
            if record.name == "*":
                continue
            latest[record.name] = record
            if frame in frames and record.action != "shared":
                touched.add(record.name)
    namespace = variables.namespace
    groups: dict[str, dict[str, Any] | str] = {}
    out: list[RestoredVariable] = []
    for name in sorted(touched):
        record = latest[name]
        if record.action == "deleted":
            namespace.pop(name, None)
            variables.capture.forget(name)
            out.append(RestoredVariable(name=name, action="deleted", detail="as before the rewind"))
            continue
        if record.blob is None:
            out.append(
                RestoredVariable(
                    name=name,
                    action="not-restored",
                    detail=record.not_captured or "its value was not stored",
                )
            )
            continue
        if record.blob not in groups:  # a blob that fails its check is refused, never loaded
            groups[record.blob] = variables.store.load(record.blob, namespace)
        group = groups[record.blob]
        if isinstance(group, str) or name not in group:
            out.append(
                RestoredVariable(
                    name=name,
                    action="not-restored",
                    detail=(group if isinstance(group, str) else "missing from its stored group"),
                )
            )
            continue
        namespace[name] = group[name]
        variables.capture.restored(name, group[name], record.digest)
        out.append(RestoredVariable(name=name, action="restored", detail="as before the rewind"))
    return out
