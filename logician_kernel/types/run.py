"""The vocabulary of one agent run: how it ended, and the limits it runs under.

Pure data and one typed exception, no I/O and no imports from the rest of `logician_kernel`
except sibling vocabulary. Enforcement lives elsewhere (the harness checks `max_turns`;
`policy/` owns the rest), so that any layer can name an outcome or a limit without depending
on the classes that enforce them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .messages import Usage

RunOutcomeStatus = Literal["completed", "budget_exhausted", "denied", "cancelled", "failed"]
"""How a run ended: the model answered; a run budget limit held; a permission decision stopped
it; the user interrupted it; or something (a provider, the store) failed."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class RunOutcome(BaseModel):
    """The end of one run, as the UI and the ledger report it."""

    model_config = _FROZEN

    status: RunOutcomeStatus
    """How the run ended."""
    detail: str = ""
    """A sentence for a human: the provider's error message, the exhausted limit, ..."""
    limit: str | None = None
    """For `budget_exhausted`: the `RunBudgetLimits` field that held, e.g. `max_turns`."""
    value: float | None = None
    """For `budget_exhausted`: that limit's configured value."""


class BudgetExhausted(Exception):
    """A run budget limit holds: making another model request would exceed it."""

    def __init__(self, limit: str, value: float, *, used: float | None = None) -> None:
        self.limit = limit
        """The `RunBudgetLimits` field that holds, e.g. `max_turns`."""
        self.value = value
        """The limit's configured value."""
        self.used = used
        """How much of it the run had used, when known."""
        spent = f" ({used:g} used)" if used is not None else ""
        super().__init__(f"run budget exhausted: {limit}={value:g} reached{spent}")

    @property
    def outcome(self) -> RunOutcome:
        """The run outcome this limit ends a run with."""
        return RunOutcome(
            status="budget_exhausted", detail=str(self), limit=self.limit, value=self.value
        )


class RunBudgetLimits(BaseModel):
    """Caps on one run; `None` means unlimited. Checked before each model request.

    Only `max_turns` is checked here for now; the token, cost and wall-clock limits are
    declared so that configuration can carry them, and are enforced by `policy/`.
    """

    model_config = _FROZEN

    max_turns: int | None = Field(default=None, ge=1)
    """Model requests one run may make (each tool round trip costs one more)."""
    max_tool_calls: int | None = Field(default=None, ge=0)
    """Tool calls one run may execute."""
    max_input_tokens: int | None = Field(default=None, ge=1)
    """Prompt tokens, summed over the run's model requests."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Generated tokens, summed over the run's model requests."""
    max_cost_usd: float | None = Field(default=None, gt=0)
    """Estimated spend of the run, in US dollars."""
    max_wall_seconds: float | None = Field(default=None, gt=0)
    """Wall-clock time of the run, in seconds."""

    def check_before_request(self, usage_so_far: Usage, turns: int) -> None:
        """Raise `BudgetExhausted` if the run may not make another model request.

        `turns` is how many requests the run has made already; `usage_so_far` their summed
        usage (unused until `policy/` enforces the token limits).
        """
        del usage_so_far
        if self.max_turns is not None and turns >= self.max_turns:
            raise BudgetExhausted("max_turns", self.max_turns, used=turns)
