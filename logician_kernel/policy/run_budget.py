"""The run budget: the counters and the clock of one run, checked against its limits.

`RunBudget` is what enforces `RunBudgetLimits`: the harness asks `check_before_request` before
every model request and `check_before_tool_call` before every tool call, and each raises
`BudgetExhausted` (naming the limit, its value and the amount used) *before* the step that
would cross the limit - see `RunBudgetLimits` for the exact rule per limit. Cost is estimated
from the usage and the model's price in configuration; a model without a price is not costed
(its cost limit cannot hold). Never does I/O; the clock is injectable for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ..providers import known_model
from ..types.messages import Usage
from ..types.run import BudgetExhausted, RunBudgetLimits

_MTOK = 1_000_000


class RunBudget:
    """One run's spending against its limits. Call `start()` when the run starts (it resets
    the counters, so a budget can serve consecutive runs)."""

    def __init__(
        self,
        limits: RunBudgetLimits,
        *,
        prices: Mapping[str, Any] | None = None,
        model: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`prices` maps model names to objects with `input_per_mtok` and `output_per_mtok`
        (`config.ModelPrice`); `model` is the name the cost is looked up by."""
        self.limits = limits
        self.model = model
        # A configured price wins; the built-in table prices known OpenAI/Anthropic models.
        self.price = (prices or {}).get(model) or known_model(model)
        self._clock = clock
        self.started = clock()
        self.turns = 0
        """Model requests made."""
        self.tool_calls = 0
        """Tool calls executed."""
        self.usage = Usage()
        """Summed usage of the requests made."""

    def start(self) -> None:
        """Begin a run: the wall clock starts now and every counter is zero."""
        self.started = self._clock()
        self.turns = 0
        self.tool_calls = 0
        self.usage = Usage()

    # -- recording ---------------------------------------------------------------------------

    def record_request(self) -> None:
        """A model request is being made (after `check_before_request` passed)."""
        self.turns += 1

    def record_usage(self, usage: Usage) -> None:
        """Add one response's usage."""
        self.usage = self.usage + usage

    def record_tool_call(self) -> None:
        """A tool call is being executed (after `check_before_tool_call` passed)."""
        self.tool_calls += 1

    # -- reading ------------------------------------------------------------------------------

    @property
    def cost_usd(self) -> float | None:
        """Estimated spend so far, from usage and the model's price; None without a price."""
        if self.price is None:
            return None
        return (
            self.usage.input_tokens * float(self.price.input_per_mtok)
            + self.usage.output_tokens * float(self.price.output_per_mtok)
        ) / _MTOK

    @property
    def elapsed_seconds(self) -> float:
        return self._clock() - self.started

    def remaining_wall_seconds(self) -> float | None:
        """Seconds left before `max_wall_seconds` (never negative); None without the limit."""
        limit = self.limits.max_wall_seconds
        if limit is None:
            return None
        return max(0.0, limit - self.elapsed_seconds)

    # -- checks -------------------------------------------------------------------------------

    def check_before_request(self) -> None:
        """Raise `BudgetExhausted` if another model request would exceed a limit: turns,
        input/output tokens, cost (spend already at the limit) or wall time."""
        self.limits.check_before_request(self.usage, self.turns)
        limit = self.limits.max_cost_usd
        cost = self.cost_usd
        if limit is not None and cost is not None and cost >= limit:
            raise BudgetExhausted("max_cost_usd", limit, used=round(cost, 6))
        self._check_wall()

    def check_before_tool_call(self) -> None:
        """Raise `BudgetExhausted` if executing another tool call would exceed a limit: the
        number of tool calls, or wall time."""
        self.limits.check_before_tool_call(self.tool_calls)
        self._check_wall()

    def wall_time_exhausted(self) -> BudgetExhausted:
        """The exception for a run whose wall time ran out while a step was running."""
        limit = self.limits.max_wall_seconds
        assert limit is not None
        return BudgetExhausted("max_wall_seconds", limit, used=round(self.elapsed_seconds, 3))

    def _check_wall(self) -> None:
        limit = self.limits.max_wall_seconds
        if limit is not None and self.elapsed_seconds >= limit:
            raise self.wall_time_exhausted()

    def summary(self) -> str:
        """`3 turns, 5 tool calls, 1,234 in / 567 out tokens, $0.0123, 12.3 s`."""
        parts = [
            f"{self.turns} turn{'s' if self.turns != 1 else ''}",
            f"{self.tool_calls} tool call{'s' if self.tool_calls != 1 else ''}",
            f"{self.usage.input_tokens:,} in / {self.usage.output_tokens:,} out tokens",
        ]
        if self.cost_usd is not None:
            parts.append(f"${self.cost_usd:.4f}")
        parts.append(f"{self.elapsed_seconds:.1f} s")
        return ", ".join(parts)
