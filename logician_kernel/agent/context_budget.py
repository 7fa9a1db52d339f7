"""How large the notebook context block may be: `agent.context_tokens`, capped for a small
model at 1/`WINDOW_SHARE` of its context window, so the conversation, the tools' specs and the
answer keep the rest. The cap is a typed fact (`BudgetCap`) the block carries, so
`%logician context`, `%logician status` and the run's last line can say it was capped.

Must never: ask anything (the window is handed in), or raise the budget above
`agent.context_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass

WINDOW_SHARE = 8
"""The block takes at most 1/8 of the model's window (a 4,096-token model: 512 tokens)."""


@dataclass(frozen=True)
class BudgetCap:
    """A budget capped for a small model: `agent.context_tokens` and the window that won."""

    configured: int
    """`agent.context_tokens`."""
    context_window: int
    """The model's context window."""

    def __str__(self) -> str:
        return (
            f"capped from agent.context_tokens = {self.configured:,} to 1/{WINDOW_SHARE} of "
            f"the model's {self.context_window:,}-token context window"
        )


def context_budget(configured: int, context_window: int | None) -> tuple[int, BudgetCap | None]:
    """The block's budget: `configured` (`agent.context_tokens`), capped at 1/`WINDOW_SHARE`
    of the model's `context_window` when that is smaller (and then the cap, else None)."""
    if not context_window or context_window <= 0:
        return configured, None
    cap = context_window // WINDOW_SHARE
    if cap >= configured:
        return configured, None
    return cap, BudgetCap(configured, context_window)
