"""When and how the harness compacts the conversation on its own, before a model request.

The kernel builds a `CompactionPolicy` from its `[compaction]` settings and the model's
context window; without one (or with `enabled=False`) the harness never compacts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompactionPolicy:
    """Automatic compaction settings for one harness."""

    context_window: int
    """The model's context window, in tokens."""
    threshold_fraction: float = 0.8
    """Compact when the conversation reaches this fraction of `context_window` (0 < x < 1)."""
    keep_recent_turns: int = 4
    """Most recent turns (user-message-led) kept verbatim by a summary."""
    max_compactions_before_checkpoint: int = 3
    """Compactions of the thread after which a still-too-large conversation is reset to a
    run checkpoint instead of being summarised again."""
    enabled: bool = True
    """Whether to compact at all."""
    compactions_so_far: int = 0
    """Compactions the thread already had before this harness's runs (from the ledger)."""

    def __post_init__(self) -> None:
        if self.context_window <= 0:
            raise ValueError(f"context_window must be positive, got {self.context_window}")
        if not 0 < self.threshold_fraction < 1:
            raise ValueError(f"threshold_fraction must be in (0, 1), got {self.threshold_fraction}")
        if self.keep_recent_turns < 0:
            raise ValueError(f"keep_recent_turns must be >= 0, got {self.keep_recent_turns}")
        if self.max_compactions_before_checkpoint < 1:
            raise ValueError(
                "max_compactions_before_checkpoint must be >= 1, "
                f"got {self.max_compactions_before_checkpoint}"
            )
        if self.compactions_so_far < 0:
            raise ValueError(f"compactions_so_far must be >= 0, got {self.compactions_so_far}")
