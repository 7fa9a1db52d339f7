"""Context compaction: token estimates, where to cut, the model-written summary and the
run-checkpoint reset. Pure functions fed by the session layer (the summary itself comes
from a `Summariser` the caller hands in; this package never imports providers), which appends the result as a `compaction` projection item.

Never imports Jupyter.
"""

from .plan import should_compact, split_for_compaction
from .run_checkpoint import CHECKPOINT_HEADER, build_run_checkpoint, should_reset
from .summary import (
    SUMMARY_HEADER,
    SUMMARY_SYSTEM_PROMPT,
    CompactionFailed,
    Summariser,
    build_summary_request,
    compact,
    compacted_messages,
)
from .tokens import estimate_tokens, estimate_total

__all__ = [
    "CHECKPOINT_HEADER",
    "SUMMARY_HEADER",
    "SUMMARY_SYSTEM_PROMPT",
    "CompactionFailed",
    "Summariser",
    "build_run_checkpoint",
    "build_summary_request",
    "compact",
    "compacted_messages",
    "estimate_tokens",
    "estimate_total",
    "should_compact",
    "should_reset",
    "split_for_compaction",
]
