"""The harness event stream and the ephemeral runtime status folded from it.

Pure data and pure functions: nothing here is persisted, and nothing imports Jupyter.
"""

from .events import (
    HARNESS_EVENT_ADAPTER,
    AssistantReasoningDelta,
    AssistantTextDelta,
    HarnessEvent,
    ModelCallStarted,
    ModelResponded,
    RetryScheduled,
    RunEnded,
    RunStarted,
    ToolCallStreaming,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    TurnStarted,
)
from .runtime_state import MAX_PENDING_SHOWN, Phase, RuntimeState, context_fraction, fold

__all__ = [
    "HARNESS_EVENT_ADAPTER",
    "MAX_PENDING_SHOWN",
    "AssistantReasoningDelta",
    "AssistantTextDelta",
    "HarnessEvent",
    "ModelCallStarted",
    "ModelResponded",
    "Phase",
    "RetryScheduled",
    "RunEnded",
    "RunStarted",
    "RuntimeState",
    "ToolCallStreaming",
    "ToolFinished",
    "ToolStarted",
    "TurnEnded",
    "TurnStarted",
    "context_fraction",
    "fold",
]
