"""The harness event stream and the ephemeral runtime status folded from it.

Pure data and pure functions: nothing here is persisted, and nothing imports Jupyter.
"""

from .events import (
    HARNESS_EVENT_ADAPTER,
    BranchSummaryFinished,
    BranchSummaryStarted,
    CompactionFinished,
    CompactionStarted,
    HarnessEvent,
    ModelCallStarted,
    ModelResponded,
    ModelStreamed,
    RunEnded,
    RunStarted,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    TurnStarted,
)
from .runtime_state import MAX_PENDING_SHOWN, Phase, RuntimeState, context_fraction, fold

__all__ = [
    "HARNESS_EVENT_ADAPTER",
    "MAX_PENDING_SHOWN",
    "BranchSummaryFinished",
    "BranchSummaryStarted",
    "CompactionFinished",
    "CompactionStarted",
    "HarnessEvent",
    "ModelCallStarted",
    "ModelResponded",
    "ModelStreamed",
    "Phase",
    "RunEnded",
    "RunStarted",
    "RuntimeState",
    "ToolFinished",
    "ToolStarted",
    "TurnEnded",
    "TurnStarted",
    "context_fraction",
    "fold",
]
