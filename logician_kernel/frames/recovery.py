"""Recovery that keeps what is known: what a dead kernel left half-done, settled on reopen.

Two cases the tool-call recovery of `run_store.resolve_dangling_calls` cannot tell apart by
itself:

- an approval the user never answered (`approval_request` without a resolution): the call
  never ran, so it is settled as a denial through `restart` and the user is told which call
  was waiting and what it would have done;
- a `restorable` call (write, edit) whose pre-image was recorded (`file_checkpoint` with its
  `call_id`): its effects are known to be those paths, so it is offered for
  `%logician rewind --call ID` (`rewind_call`) instead of only quarantined.

Must never: re-run a call, or restore a path the call did not capture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ledger.settle import captures_of
from ..ledger.thread_ledger import (
    CallRewound,
    FrameClose,
    RestoredPath,
    ThreadLedger,
)
from ..snapshots.beneath import Beneath
from ..snapshots.git_snapshot import GitSnapshotter
from .restore import restore_path, still_as_left


class CallRewindError(ValueError):
    """A `rewind --call` that cannot be carried out; the message is one line for the user."""


def rewind_call(
    ledger: ThreadLedger,
    snapshotter: GitSnapshotter | None,
    call_id: str,
    *,
    force: bool = False,
    on_path: Callable[[str], None] | None = None,
) -> CallRewound:
    """Put back every pre-image `call_id` recorded; a path changed since the kernel recorded
    the call's frame as killed is a conflict, left alone unless `force`."""
    if snapshotter is None:
        raise CallRewindError("rewind --call: file capture is unavailable for this session")
    with ledger.lock:
        captures = captures_of(ledger, call_id)
        if not captures:
            raise CallRewindError(
                f"rewind --call: no pre-image was recorded by a call {call_id!r} "
                "(`%logician frames` lists frames; the restart notice names restorable calls)"
            )
        for entry in ledger.entries:
            if isinstance(entry, CallRewound) and entry.call_id == call_id:
                raise CallRewindError(
                    f"rewind --call: call {call_id} was already rewound at {entry.time} "
                    f"(ledger entry {entry.seq})"
                )
        frame = captures[0].frame
        left = _left_by_frame(ledger, frame)
        results: list[RestoredPath] = []
        with Beneath(snapshotter.workspace) as tree:
            for capture in {c.path: c for c in reversed(captures)}.values():  # first one wins
                after = left.get(capture.path)
                if (
                    not force
                    and after is not None
                    and not still_as_left(snapshotter.hash_path(capture.path), after)
                ):
                    results.append(
                        RestoredPath(
                            path=capture.path,
                            action="conflict",
                            detail=f"changed since frame {frame} recorded it; --force restores anyway",
                        )
                    )
                    continue
                results.append(restore_path(snapshotter, capture.path, capture.before, tree))
                if on_path is not None:
                    on_path(capture.path)
        snapshotter.invalidate()
        return ledger.append(
            CallRewound,
            call_id=call_id,
            frame=frame,
            paths=sorted(results, key=lambda r: r.path),
            note="--force" if force else "",
            durable=True,
        )


def _left_by_frame(ledger: ThreadLedger, frame: int) -> dict[str, Any]:
    """The state each path was in when `frame` closed (for a killed frame: at the restart)."""
    for entry in ledger.entries:
        if isinstance(entry, FrameClose) and entry.frame == frame:
            return {c.path: c.after for c in entry.changes}
    return {}


def describe_call_rewind(item: CallRewound) -> str:
    """One line per path for the user."""
    lines = [f"Rewound call {item.call_id} (frame {item.frame}):"]
    for p in item.paths:
        lines.append(f"  {p.action} {p.path}" + (f" ({p.detail})" if p.detail else ""))
    return "\n".join(lines)
