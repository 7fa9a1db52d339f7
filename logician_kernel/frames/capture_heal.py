"""Capture heals itself: after the ledger could not be written, the next cell tries again.

A failed append leaves the ledger refusing appends (a torn line may sit at its end). Before
each frame opens, `CaptureHeal.before_frame` cuts that tail (its bytes kept in a side file,
see `Journal.heal`), closes as `failed` a frame left running because its close could not be
written, and records and says once what the gap cost: "frames resumed at In [7]; In [5]-[6]
were not recorded". While the ledger still cannot be written, every cell says it is not a
frame (never silently).

Must never: drop a whole record, leave a frame `running` once the ledger works again, or say
the resumption more than once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..ledger.thread_ledger import Recovery

if TYPE_CHECKING:
    from .file_checkpoints import FileCheckpoints


@dataclass
class CaptureHeal:
    """The cells the ledger missed since its last failure, and the repair before a frame."""

    missed: list[int | None] = field(default_factory=list)
    """Execution counts of the cells that ran while the ledger could not be written and so
    are no frame (or whose frame is closed as failed)."""

    def not_recorded(self, execution_count: int | None) -> None:
        """A cell ran without a frame (or its close failed): named when frames resume."""
        if execution_count not in self.missed:
            self.missed.append(execution_count)

    def before_frame(self, checkpoints: FileCheckpoints, execution_count: int | None) -> str | None:
        """Heal a failed ledger before the frame of `execution_count` opens; the notice (once),
        or None when nothing failed. Raises `JournalError` while it still cannot write."""
        journal = checkpoints.ledger.journal
        reason = journal.failed
        if reason is None:
            return None
        side = journal.heal()
        closed = checkpoints.recover_incomplete(failed=reason)
        text = _notice(execution_count, self.missed, closed, reason, side)
        checkpoints.ledger.append(
            Recovery, what="journal-error", detail=text, side_file=side, durable=True
        )
        self.missed.clear()
        return f"Logician: {text}."


def _cells(counts: Sequence[int | None]) -> str:
    known = sorted(c for c in counts if c is not None)
    if not known:
        return f"{len(counts)} cell(s)"
    if known == list(range(known[0], known[-1] + 1)) and len(known) > 1:
        return f"In [{known[0]}]\u2013[{known[-1]}]"
    return ", ".join(f"In [{c}]" for c in known)


def _notice(
    execution_count: int | None,
    missed: Sequence[int | None],
    closed: Sequence[int],
    reason: str,
    side: str | None,
) -> str:
    at = f"In [{execution_count}]" if execution_count is not None else "this cell"
    parts = [f"the ledger can be written again; frames resumed at {at}"]
    if missed:
        parts.append(
            f"{_cells(missed)} {'was' if len(missed) == 1 else 'were'} not recorded "
            f"as frames (the ledger could not be written: {reason})"
        )
    if closed:
        parts.append(
            f"frame(s) {', '.join(map(str, closed))} left running closed as 'failed' "
            "with the changes found since they opened"
        )
    if side:
        parts.append(f"the torn bytes of the failed write were kept in {side}")
    return "; ".join(parts)
