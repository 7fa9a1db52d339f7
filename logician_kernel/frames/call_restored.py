"""What the live `rewind --call` rewinds of some frames put back, per path.

A frame rewind after a call rewind of one of the frames it pops must not read the paths that
call rewind restored as "changed since the frame recorded it" (or as changed between two
frames): they are in the state the call rewind's recorded plan brought them to, which is a
change the ledger knows about, not someone else's. `frame_rewind.plan_rewind` accepts these
states besides the frame's own `after`.

Must never: count a call rewind that did not complete, or one that `%logician undo` took back
(its paths are back to the frame's `after`, which is accepted anyway).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..ledger.thread_ledger import ProjectionItem, RewindPlanned
from ..types.path_states import PathState


def restored_by_calls(
    entries: Sequence[object], frames: Iterable[int]
) -> dict[str, list[PathState]]:
    """Per path, the states live call rewinds of `frames` restored it to (oldest first)."""
    wanted = set(frames)
    plans = {
        e.seq: e
        for e in entries
        if isinstance(e, RewindPlanned) and e.call_id is not None and e.frame in wanted
    }
    if not plans:
        return {}
    done = [e for e in entries if isinstance(e, ProjectionItem) and e.plan in plans]
    undone = {e.undoes for e in entries if isinstance(e, ProjectionItem) and e.undoes}
    out: dict[str, list[PathState]] = {}
    for item in done:
        if item.seq in undone or item.plan is None:
            continue
        for step in plans[item.plan].steps:
            out.setdefault(step.path, []).append(step.target)
    return out


def is_call_restored(
    states: dict[str, list[PathState]], path: str, state: PathState | None
) -> bool:
    """Whether `state` is what a live call rewind left `path` in."""
    if state is None:
        return False
    return any(state.same_as(s) for s in states.get(path, ()))
