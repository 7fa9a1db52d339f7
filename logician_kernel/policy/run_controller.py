"""The run controller: what the harness consults to know whether a run may go on or end.

It owns one run's budget (`RunBudget`: checked before every model request and tool call) and
its stop condition (an optional `AcceptanceCheck` that must pass before the run may end as
completed). When the model answers without tool calls, `on_final_answer` runs the check: a
pass lets the run complete (and is remembered in `accepted`, so the kernel can mark the
frame's work as accepted); a failure returns the message that tells the model why it must
continue; after `max_acceptance_attempts` failures the run stops as `failed`.

Must never: do I/O of its own (the check runs through the tool context), or let a check
exceed the run's remaining wall time.
"""

from __future__ import annotations

from ..tools import ToolContext
from ..types.messages import Usage
from ..types.run import BudgetExhausted, RunBudgetLimits, RunOutcome, RunStopped
from .execution_policy import AcceptanceCheck, AcceptanceResult
from .run_budget import RunBudget


class RunController:
    """Budget and stop conditions of one run. `start()` at the beginning of every run."""

    def __init__(
        self,
        budget: RunBudget,
        acceptance: AcceptanceCheck | None = None,
        *,
        max_acceptance_attempts: int = 3,
    ) -> None:
        if max_acceptance_attempts < 1:
            raise ValueError("max_acceptance_attempts must be at least 1")
        self.budget = budget
        self.acceptance = acceptance
        self.max_acceptance_attempts = max_acceptance_attempts
        self.acceptance_attempts = 0
        """How many times the check ran in this run."""
        self.last_acceptance: AcceptanceResult | None = None
        """The latest check's result, if it ran."""
        self.accepted = False
        """Whether the run ended because its acceptance check passed."""

    @classmethod
    def unlimited(cls, limits: RunBudgetLimits | None = None, *, model: str = "") -> RunController:
        """A controller that only enforces `limits` (no prices, no acceptance check)."""
        return cls(RunBudget(limits or RunBudgetLimits(), model=model))

    @property
    def limits(self) -> RunBudgetLimits:
        return self.budget.limits

    def start(self) -> None:
        """A run begins: the budget's counters and clock restart, the check's state clears."""
        self.budget.start()
        self.acceptance_attempts = 0
        self.last_acceptance = None
        self.accepted = False

    # -- the budget, as the harness consults it -----------------------------------------------

    def check_before_request(self) -> None:
        """Raise `BudgetExhausted` if the next model request may not be made."""
        self.budget.check_before_request()

    def record_request(self) -> None:
        self.budget.record_request()

    def record_usage(self, usage: Usage) -> None:
        self.budget.record_usage(usage)

    def check_before_tool_call(self) -> None:
        """Raise `BudgetExhausted` if the next tool call may not be executed."""
        self.budget.check_before_tool_call()

    def record_tool_call(self) -> None:
        self.budget.record_tool_call()

    def remaining_wall_seconds(self) -> float | None:
        return self.budget.remaining_wall_seconds()

    def wall_time_exhausted(self) -> BudgetExhausted:
        return self.budget.wall_time_exhausted()

    # -- the stop condition ---------------------------------------------------------------------

    async def on_final_answer(self, ctx: ToolContext) -> str | None:
        """The model answered without tool calls. None: the run may complete. A string: the
        message that tells the model why it must continue. Raises `RunStopped` (status
        `failed`) when the check failed `max_acceptance_attempts` times."""
        check = self.acceptance
        if check is None:
            return None
        self.acceptance_attempts += 1
        result = await check.run(ctx, timeout=self.remaining_wall_seconds())
        self.last_acceptance = result
        if result.passed:
            self.accepted = True
            return None
        attempt, allowed = self.acceptance_attempts, self.max_acceptance_attempts
        if attempt >= allowed:
            raise RunStopped(
                RunOutcome(
                    status="failed",
                    detail=f"the acceptance check {check.describe()} still failed after "
                    f"{attempt} attempt{'s' if attempt != 1 else ''}",
                )
            )
        output = result.output or "(no output)"
        return (
            f"The acceptance check {check.describe()} failed (attempt {attempt} of {allowed}), "
            f"so the task is not done yet:\n\n```\n{output}\n```\n\n"
            "Find and fix the cause, then finish again: the check runs each time you finish."
        )

    def completion_detail(self) -> str | None:
        """What to add to a completed outcome's detail, e.g. that the check passed."""
        if self.accepted and self.acceptance is not None:
            return f"the acceptance check {self.acceptance.describe()} passed"
        return None
