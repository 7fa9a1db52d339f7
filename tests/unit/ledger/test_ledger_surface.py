"""The public surface of `logician_kernel.ledger`: the entries, the ledger, its folds, repair, run
records, branches and settling. A name joins `__all__` when another package needs it; the others
import it from here."""

from __future__ import annotations

import inspect

import logician_kernel.ledger as ledger_pkg

LEDGER_API = {
    "ApprovalRequested",
    "ApprovalResolved",
    "Branch",
    "CallRewound",
    "CellEdit",
    "CellRestore",
    "FileCheckpoint",
    "FrameClose",
    "FrameOpen",
    "FrameOutcome",
    "FramePreSnapshot",
    "FrameView",
    "LedgerRunStore",
    "MessageEntry",
    "ProjectionItem",
    "Recovery",
    "RepairError",
    "RestorableCall",
    "RestoredPath",
    "RestoredVariable",
    "RewindPlanned",
    "RewindProgress",
    "RewindState",
    "RewindStep",
    "RunEnd",
    "SessionStart",
    "ThreadLedger",
    "ToolIntent",
    "UnknownRecordError",
    "VariableRecord",
    "VariablesCaptured",
    "branch_discard_fields",
    "branch_merge_fields",
    "captures_of",
    "check_ledger",
    "derive_branches",
    "derive_frames",
    "found_at_this_start",
    "project",
    "read_entries",
    "repair_ledger",
    "resolve_dangling_calls",
    "resolve_pending_approvals",
    "restorable_calls",
    "rewind_state",
}


def test_exported_names_are_what_we_mean_to_export() -> None:
    assert set(ledger_pkg.__all__) == LEDGER_API
    assert len(ledger_pkg.__all__) == len(LEDGER_API)  # no name listed twice


def test_every_exported_name_is_defined_in_the_package() -> None:
    for name in ledger_pkg.__all__:
        value = getattr(ledger_pkg, name)
        home = getattr(value, "__module__", None)
        # constants (AUDIT, MASK) and Literal aliases carry no home module
        if inspect.isclass(value) or inspect.isfunction(value):
            assert home is not None and home.startswith("logician_kernel.ledger."), (name, home)
