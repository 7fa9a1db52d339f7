"""A vanished or replaced `.logician/` is recreated before the next frame, with a notice.

Owns one check, run as every frame opens: is the ledger file still the one this kernel appends
to, and is the snapshot store still there? A cell may `rm -rf .logician` (or a tool may replace
it); without this, every later append would go to a deleted file and every capture would fail
silently. The ledger is rewritten from the old file the kernel still holds open (its records
are not kept in memory), the store recreated empty (files of earlier frames cannot be restored
any more, and the notice says so).

Must never: lose a record the kernel holds, stay quiet about what could not be recovered, or
recreate anything in a `.logician/` another account put in place of ours (state_trust.py).
"""

from __future__ import annotations

from ..durable.state_dir import workspace_of
from ..snapshots.git_snapshot import SnapshotError
from ..snapshots.state_trust import UntrustedStateError, check_state_dir
from .file_checkpoints import FileCheckpoints


def heal_state_dir(checkpoints: FileCheckpoints) -> str | None:
    """Recreate what vanished; a notice for the user, or None when nothing had."""
    journal = checkpoints.ledger.journal
    ledger_gone = journal.vanished()
    snap = checkpoints.snapshotter
    store_gone = snap is not None and not (snap.store / "HEAD").exists()
    if not (ledger_gone or store_gone):
        return None
    done: list[str] = []
    state = journal.path.parent.parent
    try:
        check_state_dir(workspace_of(state), state)
    except UntrustedStateError as exc:
        return (
            f"Logician: {state} vanished and what stands there now is not yours alone: "
            f"{exc.path} {exc.problem}. Nothing is written there and this cell is not captured; "
            f"fix: {exc.fix}, then restart the kernel."
        )
    try:
        if ledger_gone:
            journal.rewrite_from_memory()
            done.append(f"the thread ledger was rewritten from memory ({journal.count} records)")
        if store_gone and snap is not None:
            checkpoints.idle.disarm(wait=True)  # no look between cells uses it meanwhile
            snap.reset()
            snap.ensure_store()
            done.append(
                "the snapshot store was recreated empty: files of earlier frames can no longer "
                "be restored by a rewind (their conversation still can)"
            )
    except (OSError, SnapshotError) as exc:
        return (
            f"Logician: {journal.path.parent.parent} vanished and could not be recreated ({exc}); "
            "this cell's frame may not be recorded."
        )
    return (
        f"Logician: {journal.path.parent.parent} had vanished and was recreated: "
        + "; ".join(done)
        + "."
    )
