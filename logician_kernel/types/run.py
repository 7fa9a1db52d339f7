"""The vocabulary of one agent run: how it ended, and the limits it runs under.

Pure data and typed control-flow exceptions, no I/O and no imports from the rest of
`logician_kernel` except sibling vocabulary. Enforcement lives elsewhere (`policy/run_budget.py`
keeps the counters and the clock; the harness asks it before each model request and tool
call), so that any layer can name an outcome or a limit without depending on the classes that
enforce them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .field_docs import FIELD_DOCS
from .messages import Usage

RunOutcomeStatus = Literal["completed", "budget_exhausted", "denied", "cancelled", "failed"]
"""How a run ended: the model answered (and any acceptance check passed); a run budget limit
held; a permission decision stopped it; the user interrupted it; or something (a provider, the
store, an acceptance check that kept failing) failed."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


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
    used: float | None = None
    """For `budget_exhausted`: how much of the limit the run had used, when known."""


class RunStopped(Exception):
    """Control flow: the run must end now, with `outcome`. Raised by whatever the harness
    consults (the run controller, a limit); the harness turns it into its `RunEnded`."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__(outcome.detail or outcome.status)
        self._outcome = outcome

    @property
    def outcome(self) -> RunOutcome:
        """The outcome the run ends with."""
        return self._outcome


class BudgetExhausted(RunStopped):
    """A run budget limit holds: making another model request or tool call would exceed it."""

    def __init__(self, limit: str, value: float, *, used: float | None = None) -> None:
        self.limit = limit
        """The `RunBudgetLimits` field that holds, e.g. `max_turns`."""
        self.value = value
        """The limit's configured value."""
        self.used = used
        """How much of it the run had used, when known."""
        spent = f" ({used:g} used)" if used is not None else ""
        detail = f"run budget exhausted: {limit}={value:g} reached{spent}"
        super().__init__(
            RunOutcome(
                status="budget_exhausted", detail=detail, limit=limit, value=value, used=used
            )
        )


class RunBudgetLimits(BaseModel):
    """Caps on one run; `None` means unlimited.

    The exact rules (each check runs *before* the step it guards, so a limit is never crossed
    by a step that had not started yet):

    - `max_turns`: a model request is refused when the run has made `max_turns` already.
    - `max_tool_calls`: a tool call is refused when the run has executed `max_tool_calls`.
    - `max_input_tokens` / `max_output_tokens`: a model request is refused once the summed
      usage has reached the limit. A request's size is known only after it, so the request
      that reaches the limit may overshoot it; no request starts past it.
    - `max_cost_usd`: as the tokens, on the cost estimated from usage and the model's price
      (`policy/run_budget.py`; a model without a price is not costed).
    - `max_wall_seconds`: no request or tool call starts once that much time has passed since
      the run started, and a tool still running when it runs out is interrupted.
    """

    model_config = _FROZEN

    max_turns: int | None = Field(default=None, ge=1)
    """Model requests one run may make (each tool round trip costs one more)."""
    max_tool_calls: int | None = Field(default=None, ge=0)
    """Tool calls one run may execute (calls refused or denied without running are free)."""
    max_input_tokens: int | None = Field(default=None, ge=1)
    """Prompt tokens, summed over the run's model requests."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Generated tokens, summed over the run's model requests."""
    max_cost_usd: float | None = Field(default=None, gt=0)
    """Estimated spend of the run, in US dollars."""
    max_wall_seconds: float | None = Field(default=None, gt=0)
    """Wall-clock time of the run, in seconds."""

    @classmethod
    def from_settings(cls, budget: Any, **overrides: Any) -> RunBudgetLimits:
        """The limits of a `BudgetSettings` snapshot (read by attribute, so this module need
        not import `config/`), with per-run `overrides` (e.g. a cell's `--max-turns`) applied
        where they are not None."""
        values = {name: getattr(budget, name, None) for name in cls.model_fields}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def check_before_request(self, usage_so_far: Usage, turns: int) -> None:
        """Raise `BudgetExhausted` if the run may not make another model request: the turn
        and token limits. `turns` is how many requests the run has made already;
        `usage_so_far` their summed usage. (Cost and wall time need a price and a clock: see
        `policy.RunBudget`.)"""
        if self.max_turns is not None and turns >= self.max_turns:
            raise BudgetExhausted("max_turns", self.max_turns, used=turns)
        if self.max_input_tokens is not None and usage_so_far.input_tokens >= self.max_input_tokens:
            raise BudgetExhausted(
                "max_input_tokens", self.max_input_tokens, used=usage_so_far.input_tokens
            )
        if (
            self.max_output_tokens is not None
            and usage_so_far.output_tokens >= self.max_output_tokens
        ):
            raise BudgetExhausted(
                "max_output_tokens", self.max_output_tokens, used=usage_so_far.output_tokens
            )

    def check_before_tool_call(self, tool_calls: int) -> None:
        """Raise `BudgetExhausted` if the run, having executed `tool_calls` calls, may not
        execute another."""
        if self.max_tool_calls is not None and tool_calls >= self.max_tool_calls:
            raise BudgetExhausted("max_tool_calls", self.max_tool_calls, used=tool_calls)
