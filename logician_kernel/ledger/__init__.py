"""The thread ledger: its entries (one closed union), projection and projection
checkpoints, repair, run records, branches, settling on reopen, and the pure folds over it
(the frame view, the rewind state).

Uses `durable/` and `types/`, never anything above. `__all__` is what the other packages use
(`tests/unit/ledger/test_ledger_surface.py` holds it to that)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

# A name equal to its module's is bound now: importing the module `rewind_state` would
# otherwise bind the package's `rewind_state` to the module, never asking `__getattr__`.
from .rewind_state import RewindState, rewind_state

if TYPE_CHECKING:
    from .branches import Branch, branch_discard_fields, branch_merge_fields, derive_branches
    from .entries import (
        ApprovalRequested,
        ApprovalResolved,
        CallRewound,
        CellEdit,
        CellRestore,
        FileCheckpoint,
        FrameClose,
        FrameOpen,
        FrameOutcome,
        FramePreSnapshot,
        MessageEntry,
        ProjectionItem,
        Recovery,
        RestorableCall,
        RestoredPath,
        RestoredVariable,
        RewindPlanned,
        RewindProgress,
        RewindStep,
        RunEnd,
        SessionStart,
        ToolIntent,
        VariableRecord,
        VariablesCaptured,
    )
    from .frame_view import FrameView, derive_frames
    from .repair import RepairError
    from .repair import check as check_ledger
    from .repair import repair as repair_ledger
    from .run_store import LedgerRunStore, resolve_dangling_calls
    from .settle import (
        captures_of,
        found_at_this_start,
        resolve_pending_approvals,
        restorable_calls,
    )
    from .thread_ledger import ThreadLedger, UnknownRecordError, project, read_entries

__all__ = [
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
]


if not TYPE_CHECKING:
    __getattr__ = exports(__name__)
