"""The run budget on its own: each limit raises a typed exception naming it, its value and
the amount used, before the step that would cross it; cost comes from configured prices."""

from __future__ import annotations

import pytest

from logician_kernel.config._schema import BudgetSettings, ModelPrice
from logician_kernel.policy import AcceptanceCheck, RunBudget
from logician_kernel.types import Usage
from logician_kernel.types.run import BudgetExhausted, RunBudgetLimits


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def exhausted(check) -> tuple[str, float, float | None]:
    with pytest.raises(BudgetExhausted) as info:
        check()
    return info.value.limit, info.value.value, info.value.used


def test_tokens_are_refused_once_the_usage_reached_the_limit():
    budget = RunBudget(RunBudgetLimits(max_input_tokens=100, max_output_tokens=50))
    budget.record_usage(Usage(input_tokens=99, output_tokens=49))
    budget.check_before_request()
    budget.record_usage(Usage(input_tokens=1))
    assert exhausted(budget.check_before_request) == ("max_input_tokens", 100, 100)
    budget = RunBudget(RunBudgetLimits(max_output_tokens=50))
    budget.record_usage(Usage(output_tokens=70))
    assert exhausted(budget.check_before_request) == ("max_output_tokens", 50, 70)


def test_cost_comes_from_the_model_price():
    prices = {"m": ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0)}
    budget = RunBudget(RunBudgetLimits(max_cost_usd=0.05), prices=prices, model="m")
    budget.record_usage(Usage(input_tokens=10_000, output_tokens=1_000))
    assert budget.cost_usd == pytest.approx(0.045)
    budget.check_before_request()
    budget.record_usage(Usage(input_tokens=2_000))
    assert exhausted(budget.check_before_request) == ("max_cost_usd", 0.05, 0.051)
    unpriced = RunBudget(RunBudgetLimits(max_cost_usd=0.01), prices=prices, model="other")
    unpriced.record_usage(Usage(input_tokens=10**9))
    assert unpriced.cost_usd is None
    unpriced.check_before_request()  # a model without a price is not costed


def test_tool_calls_and_wall_time():
    clock = Clock()
    budget = RunBudget(RunBudgetLimits(max_tool_calls=2, max_wall_seconds=10), clock=clock)
    for _ in range(2):
        budget.check_before_tool_call()
        budget.record_tool_call()
    assert exhausted(budget.check_before_tool_call) == ("max_tool_calls", 2, 2)
    budget.start()
    clock.now += 4
    assert budget.remaining_wall_seconds() == 6
    clock.now += 6
    assert exhausted(budget.check_before_request) == ("max_wall_seconds", 10, 10)
    assert budget.remaining_wall_seconds() == 0


def test_limits_from_settings_with_cell_overrides():
    settings = BudgetSettings(max_turns=50, max_cost_usd=5.0)
    limits = RunBudgetLimits.from_settings(settings, max_turns=5, max_cost_usd=None)
    assert (limits.max_turns, limits.max_cost_usd, limits.max_tool_calls) == (5, 5.0, 200)
    assert limits.max_wall_seconds == 1800


def test_acceptance_checks_are_a_command_or_an_expression():
    assert AcceptanceCheck.parse("pytest -q").command == "pytest -q"
    assert AcceptanceCheck.parse("py: len(df) > 0").python_expr == "len(df) > 0"
    with pytest.raises(ValueError, match="not a Python expression"):
        AcceptanceCheck(python_expr="x = 1")
    with pytest.raises(ValueError, match="not both"):
        AcceptanceCheck(command="a", python_expr="b")
