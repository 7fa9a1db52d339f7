"""The thread ledger: its entries (one closed union), projection and projection
checkpoints, repair, run records, branches, settling on reopen, and the pure folds over it
(the frame view, the rewind state).

Uses `durable/` and `types/`, never anything above. `__all__` is what the other packages use
(`tests/unit/ledger/test_ledger_surface.py` holds it to that)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

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
    from .rewind_state import RewindState, rewind_state
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

_WHERE = {
    "Branch": (".branches", "Branch"),
    "branch_discard_fields": (".branches", "branch_discard_fields"),
    "branch_merge_fields": (".branches", "branch_merge_fields"),
    "derive_branches": (".branches", "derive_branches"),
    "ApprovalRequested": (".entries", "ApprovalRequested"),
    "ApprovalResolved": (".entries", "ApprovalResolved"),
    "CallRewound": (".entries", "CallRewound"),
    "CellEdit": (".entries", "CellEdit"),
    "CellRestore": (".entries", "CellRestore"),
    "FileCheckpoint": (".entries", "FileCheckpoint"),
    "FrameClose": (".entries", "FrameClose"),
    "FrameOpen": (".entries", "FrameOpen"),
    "FrameOutcome": (".entries", "FrameOutcome"),
    "FramePreSnapshot": (".entries", "FramePreSnapshot"),
    "MessageEntry": (".entries", "MessageEntry"),
    "ProjectionItem": (".entries", "ProjectionItem"),
    "Recovery": (".entries", "Recovery"),
    "RestorableCall": (".entries", "RestorableCall"),
    "RestoredPath": (".entries", "RestoredPath"),
    "RestoredVariable": (".entries", "RestoredVariable"),
    "RewindPlanned": (".entries", "RewindPlanned"),
    "RewindProgress": (".entries", "RewindProgress"),
    "RewindStep": (".entries", "RewindStep"),
    "RunEnd": (".entries", "RunEnd"),
    "SessionStart": (".entries", "SessionStart"),
    "ToolIntent": (".entries", "ToolIntent"),
    "VariableRecord": (".entries", "VariableRecord"),
    "VariablesCaptured": (".entries", "VariablesCaptured"),
    "FrameView": (".frame_view", "FrameView"),
    "derive_frames": (".frame_view", "derive_frames"),
    "RepairError": (".repair", "RepairError"),
    "check_ledger": (".repair", "check"),
    "repair_ledger": (".repair", "repair"),
    "RewindState": (".rewind_state", "RewindState"),
    "rewind_state": (".rewind_state", "rewind_state"),
    "LedgerRunStore": (".run_store", "LedgerRunStore"),
    "resolve_dangling_calls": (".run_store", "resolve_dangling_calls"),
    "captures_of": (".settle", "captures_of"),
    "found_at_this_start": (".settle", "found_at_this_start"),
    "resolve_pending_approvals": (".settle", "resolve_pending_approvals"),
    "restorable_calls": (".settle", "restorable_calls"),
    "ThreadLedger": (".thread_ledger", "ThreadLedger"),
    "UnknownRecordError": (".thread_ledger", "UnknownRecordError"),
    "project": (".thread_ledger", "project"),
    "read_entries": (".thread_ledger", "read_entries"),
}
"""Each name of `__all__` -> the module it is imported from on first use."""

if not TYPE_CHECKING:
    __getattr__ = exports(__name__, _WHERE)
