"""The harness under policy: every budget limit stops the run before the request or tool call
that would cross it, naming the limit and its value; the wall-time limit interrupts a slow
tool; an acceptance check sends the model back to work until it passes; the permission gate
refuses calls without ending the run (unless it says so)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.config._schema import ModelPrice, PermissionSettings
from logician_kernel.policy import (
    AcceptanceCheck,
    AuditLog,
    GateResult,
    PermissionPolicy,
    PolicyGate,
    RunBudget,
    RunController,
)
from logician_kernel.tools import ToolResult, default_tools
from logician_kernel.types import ToolResultMessage, Usage, UserMessage
from logician_kernel.types.run import RunBudgetLimits, RunOutcome

from .harness_support import (
    FakeTool,
    MemoryStore,
    ScriptedProvider,
    call,
    make_ctx,
    make_harness,
    reply,
    run_all,
    tool_reply,
)


def controller(acceptance: AcceptanceCheck | None = None, **limits: Any) -> RunController:
    prices = {"scripted-model": ModelPrice(input_per_mtok=1000.0, output_per_mtok=1000.0)}
    budget = RunBudget(RunBudgetLimits(**limits), prices=prices, model="scripted-model")
    return RunController(budget, acceptance)


def outcome_of(events):
    ended = events[-1]
    assert ended.kind == "run_ended"
    return ended.outcome


def results(store) -> dict[str, str]:
    return {
        m.tool_call_id: m.content[0].text
        for m in store.messages
        if isinstance(m, ToolResultMessage)
    }


# -- budgets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limits", "limit", "value", "used"),
    [
        ({"max_turns": 1}, "max_turns", 1, 1),
        ({"max_input_tokens": 20}, "max_input_tokens", 20, 20),  # one reply costs 20 in
        ({"max_output_tokens": 5}, "max_output_tokens", 5, 5),  # ... and 5 out
        ({"max_cost_usd": 0.025}, "max_cost_usd", 0.025, 0.025),  # 25 tokens at $1000/Mtok
    ],
)
def test_request_limits_stop_before_the_next_request(limits, limit, value, used):
    provider = ScriptedProvider(tool_reply(call("c1", "read")), reply("never sent"))
    harness, store = make_harness(provider, FakeTool("read"), controller=controller(**limits))

    events = run_all(harness)

    outcome = outcome_of(events)
    assert (outcome.status, outcome.limit, outcome.value, outcome.used) == (
        "budget_exhausted",
        limit,
        value,
        used,
    )
    assert f"{limit}={value:g}" in outcome.detail
    assert len(provider.requests) == 1 and store.shape()[-1] == "commit:c1"


def test_tool_call_limit_stops_before_the_call_and_answers_the_rest():
    ran: list[str] = []

    async def work(arguments):
        ran.append(arguments["n"])
        return "done"

    provider = ScriptedProvider(
        tool_reply(call("c1", "read", n=1)),
        tool_reply(call("c2", "read", n=2), call("c3", "read", n=3), call("c4", "write", n=4)),
        reply("never sent"),
    )
    harness, store = make_harness(
        provider,
        FakeTool("read", work),
        FakeTool("write", work, read_only=False),
        controller=controller(max_tool_calls=2),
    )

    events = run_all(harness)

    outcome = outcome_of(events)
    assert (outcome.status, outcome.limit, outcome.value, outcome.used) == (
        "budget_exhausted",
        "max_tool_calls",
        2,
        2,
    )
    assert ran == [1, 2] and len(provider.requests) == 2
    assert "intent:c3" not in store.shape() and "intent:c4" not in store.shape()
    texts = results(store)
    assert texts["c2"] == "done"
    assert (
        "did not run because the run stopped" in texts["c3"] and "max_tool_calls=2" in texts["c4"]
    )
    assert events[-1].tool_calls == 4  # asked for, as before


def test_wall_time_limit_interrupts_a_slow_tool(tmp_path):
    provider = ScriptedProvider(tool_reply(call("c1", "bash", command="sleep 30")), reply("never"))
    harness, store = make_harness(
        provider,
        default_tools()["bash"],
        controller=controller(max_wall_seconds=0.5),
        ctx=make_ctx(tmp_path),
    )

    started = time.monotonic()
    events = run_all(harness)
    elapsed = time.monotonic() - started

    outcome = outcome_of(events)
    assert (outcome.status, outcome.limit, outcome.value) == (
        "budget_exhausted",
        "max_wall_seconds",
        0.5,
    )
    assert elapsed < 5
    assert store.shape()[-4:] == ["intent:c1", "result:c1", "message:tool_result", "commit:c1"]
    assert "interrupted by the run's wall-time limit" in results(store)["c1"]
    finished = [e for e in events if e.kind == "tool_finished"]
    assert finished[0].is_error and len(provider.requests) == 1


def test_wall_time_limit_cancels_every_call_of_a_concurrent_batch():
    cancelled: list[str] = []

    def slow(name):
        async def behaviour(arguments):
            try:
                await asyncio.sleep(30)
            finally:
                cancelled.append(name)
            return "never"

        return behaviour

    async def quick(arguments):
        return "quick"

    provider = ScriptedProvider(
        tool_reply(call("c1", "fast"), call("c2", "slow_a"), call("c3", "slow_b")), reply("no")
    )
    harness, store = make_harness(
        provider,
        FakeTool("fast", quick),
        FakeTool("slow_a", slow("a")),
        FakeTool("slow_b", slow("b")),
        controller=controller(max_wall_seconds=0.3),
    )

    events = run_all(harness)

    assert outcome_of(events).limit == "max_wall_seconds"
    assert sorted(cancelled) == ["a", "b"]
    texts = results(store)
    assert texts["c1"] == "quick"
    assert all("wall-time limit" in texts[c] for c in ("c2", "c3"))


def test_without_a_controller_the_limits_still_apply():
    provider = ScriptedProvider(tool_reply(call("c1", "read")), reply("never"))
    harness, _ = make_harness(
        provider, FakeTool("read"), limits=RunBudgetLimits(max_output_tokens=5)
    )
    assert outcome_of(run_all(harness)).limit == "max_output_tokens"


def test_a_controller_serves_consecutive_runs():
    ctl = controller(max_turns=1)
    provider = ScriptedProvider(reply("one"), reply("two"))
    harness, _ = make_harness(provider, controller=ctl)
    assert outcome_of(run_all(harness)).status == "completed"
    assert outcome_of(run_all(harness)).status == "completed"  # counters restarted


# -- acceptance -------------------------------------------------------------------------------


def _touch(workspace: Path):
    async def behaviour(arguments):
        (workspace / "done.txt").write_text("ok")
        return "wrote done.txt"

    return behaviour


def test_failing_acceptance_check_sends_the_model_back_until_it_passes(tmp_path):
    check = AcceptanceCheck(command="test -f done.txt && echo found || (echo missing; exit 1)")
    ctl = controller(check, max_turns=5)
    provider = ScriptedProvider(
        reply("All done!"),
        tool_reply(call("c1", "write")),
        reply("Now it is done."),
    )
    harness, store = make_harness(
        provider,
        FakeTool("write", _touch(tmp_path), read_only=False),
        controller=ctl,
        ctx=make_ctx(tmp_path),
    )

    events = run_all(harness)

    outcome = outcome_of(events)
    assert outcome.status == "completed" and "passed" in outcome.detail
    assert ctl.accepted and ctl.acceptance_attempts == 2
    told = [m for m in store.messages if isinstance(m, UserMessage)][1]
    text = told.content[0].text
    assert "The acceptance check `test -f done.txt" in text and "failed (attempt 1 of 3)" in text
    assert "missing" in text
    assert provider.requests[1].messages[-1] == told  # the model saw why
    assert events[-1].turns == 3


def test_acceptance_keeps_failing_until_the_attempts_run_out(tmp_path):
    ctl = RunController(
        RunBudget(RunBudgetLimits()), AcceptanceCheck(command="exit 3"), max_acceptance_attempts=2
    )
    provider = ScriptedProvider(reply("done"), reply("done, really"))
    harness, _ = make_harness(provider, controller=ctl, ctx=make_ctx(tmp_path))

    outcome = outcome_of(run_all(harness))

    assert outcome.status == "failed" and "still failed after 2 attempts" in outcome.detail
    assert not ctl.accepted and len(provider.requests) == 2


def test_acceptance_stays_within_the_budget(tmp_path):
    ctl = controller(AcceptanceCheck(command="false"), max_turns=1)
    provider = ScriptedProvider(reply("done"))
    harness, store = make_harness(provider, controller=ctl, ctx=make_ctx(tmp_path))

    outcome = outcome_of(run_all(harness))

    assert (outcome.status, outcome.limit) == ("budget_exhausted", "max_turns")
    assert isinstance(store.messages[-1], UserMessage)  # told why, then out of turns


def test_python_expression_acceptance_runs_in_the_notebook_namespace(tmp_path):
    namespace: dict[str, Any] = {"rows": 0}

    async def run_python(code: str) -> ToolResult:
        try:
            exec(code, namespace)
        except Exception as exc:
            return ToolResult(content=f"{type(exc).__name__}: {exc}", is_error=True)
        return ToolResult(content="(no output)")

    async def fill(arguments):
        namespace["rows"] = 3
        return "filled"

    ctx = make_ctx(tmp_path)
    ctx.run_python = run_python
    ctl = controller(AcceptanceCheck(python_expr="rows > 0"))
    provider = ScriptedProvider(reply("done"), tool_reply(call("c1", "fill")), reply("done"))
    harness, store = make_harness(
        provider, FakeTool("fill", fill, read_only=False), controller=ctl, ctx=ctx
    )

    outcome = outcome_of(run_all(harness))

    assert outcome.status == "completed" and ctl.accepted
    told = [m for m in store.messages if isinstance(m, UserMessage)][1].content[0].text
    assert "the expression `rows > 0`" in told and "AssertionError" in told


# -- the permission gate -------------------------------------------------------------------------


class ScriptedGate:
    def __init__(self, store, verdicts: dict[str, GateResult]) -> None:
        self.store = store
        self.verdicts = verdicts

    async def check(self, call, tool) -> GateResult:
        self.store.log.append(("gate", call.id))
        return self.verdicts.get(call.name, GateResult(True))


def test_a_denied_call_gets_an_error_result_and_the_run_goes_on():
    ran: list[str] = []

    async def work(arguments):
        ran.append("bash")
        return "ran"

    provider = ScriptedProvider(
        tool_reply(call("c1", "read"), call("c2", "bash", command="make")), reply("I see.")
    )
    store = MemoryStore()
    gate = ScriptedGate(store, {"bash": GateResult(False, note="denied by the user: not today")})
    harness, _ = make_harness(
        provider, FakeTool("read"), FakeTool("bash", work, read_only=False), store=store, gate=gate
    )

    events = run_all(harness)

    assert outcome_of(events).status == "completed" and ran == []
    assert (
        results(store)["c2"] == "Error: Denied by the user: not today. The bash call did not run."
    )
    shape = store.shape()
    assert shape.index("gate:c1") < shape.index("intent:c1")  # decided before the intent
    assert "intent:c2" not in shape
    finished = {e.call_id: e.is_error for e in events if e.kind == "tool_finished"}
    assert finished == {"c1": False, "c2": True}
    assert provider.requests[1].messages[-1].tool_call_id == "c2"


def test_a_gate_outcome_stops_the_run_and_answers_the_rest():
    provider = ScriptedProvider(
        tool_reply(call("c1", "bash", command="make"), call("c2", "read")), reply("never")
    )
    stop = RunOutcome(status="denied", detail="the user denied `make` and stopped")
    store = MemoryStore()
    gate = ScriptedGate(store, {"bash": GateResult(False, note="denied by the user", outcome=stop)})
    harness, _ = make_harness(
        provider, FakeTool("read"), FakeTool("bash", read_only=False), store=store, gate=gate
    )

    events = run_all(harness)

    assert outcome_of(events) == stop and len(provider.requests) == 1
    texts = results(store)
    assert set(texts) == {"c1", "c2"} and "did not run because the run stopped" in texts["c2"]


def test_policy_gate_through_the_harness_audits_every_decision(tmp_path):
    policy = PermissionPolicy(PermissionSettings(), workspace=tmp_path)
    audit = AuditLog.for_workspace(tmp_path)
    provider = ScriptedProvider(
        tool_reply(call("c1", "read", path="a.txt"), call("c2", "bash", command="make")),
        reply("ok"),
    )
    harness, store = make_harness(
        provider,
        FakeTool("read"),
        FakeTool("bash", read_only=False),
        gate=PolicyGate(policy, audit),  # headless: nobody to ask
        controller=controller(max_tool_calls=5),
    )

    events = run_all(harness)

    assert outcome_of(events).status == "completed"
    entries = audit.recent(5)
    assert [(e.call_id, e.allowed, e.routine, e.resolution) for e in entries] == [
        ("c1", True, True, "mode"),
        ("c2", False, False, "headless:deny"),
    ]
    assert "nobody can be asked" in results(store)["c2"]


def test_denied_calls_do_not_count_against_the_tool_call_budget():
    provider = ScriptedProvider(
        tool_reply(call("c1", "bash"), call("c2", "bash"), call("c3", "read")), reply("done")
    )
    store = MemoryStore()
    harness, _ = make_harness(
        provider,
        FakeTool("read"),
        FakeTool("bash", read_only=False),
        store=store,
        gate=ScriptedGate(store, {"bash": GateResult(False, note="no")}),
        controller=controller(max_tool_calls=1),
    )

    events = run_all(harness)

    assert outcome_of(events).status == "completed"
    assert results(store)["c3"].startswith("ok")
    assert events[-1].usage == Usage(input_tokens=30, output_tokens=8)
