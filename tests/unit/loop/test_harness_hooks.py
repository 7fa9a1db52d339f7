"""The harness's hook points for the user's `[hooks]`: `on_run_start` / `on_run_end` bracket
every run, and `check_tool` may refuse a call the gate allowed - it then never runs, records
no intent, does not count against `max_tool_calls`, and the model reads the reason."""

from __future__ import annotations

from logician_kernel.loop import Hooks
from logician_kernel.types.run import RunBudgetLimits

from .harness_support import (
    FakeTool,
    ScriptedProvider,
    call,
    make_harness,
    reply,
    run_all,
    tool_reply,
)


class Guard(Hooks):
    def __init__(self, refuse: set[str], *, broken: bool = False) -> None:
        self.refuse = refuse
        self.broken = broken
        self.seen: list[str] = []

    async def on_run_start(self, prompt, model):
        self.seen.append(f"run_start:{prompt}:{model}")

    async def check_tool(self, call):
        self.seen.append(f"check:{call.id}")
        if self.broken:
            raise RuntimeError("guard bug")
        return "not on a Friday" if call.id in self.refuse else None

    async def on_before_tool(self, call):
        self.seen.append(f"before_tool:{call.id}")

    async def on_run_end(self, outcome, turns, tool_calls):
        self.seen.append(f"run_end:{outcome.status}:{turns}:{tool_calls}")


def test_a_refused_call_never_runs_and_the_model_reads_why() -> None:
    ran: list[str] = []

    async def write(arguments):
        ran.append(arguments["path"])
        return "written"

    provider = ScriptedProvider(
        tool_reply(call("c1", "write", path="a"), call("c2", "write", path="b")), reply("ok")
    )
    guard = Guard({"c1"})
    harness, store = make_harness(
        provider,
        FakeTool("write", write, read_only=False),
        hooks=guard,
        limits=RunBudgetLimits(max_tool_calls=1),
    )
    events = run_all(harness, "Write both.")
    assert ran == ["b"]  # c1 refused; c2 ran, within a budget of one call
    assert events[-1].outcome.status == "completed"
    assert [entry[1] for entry in store.log if entry[0] == "intent"] == ["c2"]
    told = [m for m in provider.requests[1].messages if m.kind == "tool_result"]
    assert [m.tool_call_id for m in told] == ["c1", "c2"]
    assert "a pre_tool hook denied the write call, so it did not run: not on a Friday" in str(
        told[0].model_dump()
    )
    assert guard.seen == [
        "run_start:Write both.:scripted-model",
        "check:c1",
        "check:c2",
        "before_tool:c2",
        "run_end:completed:2:2",
    ]


def test_a_raising_check_lets_the_call_run() -> None:
    provider = ScriptedProvider(tool_reply(call("c1", "read")), reply("ok"))
    guard = Guard({"c1"}, broken=True)
    harness, store = make_harness(provider, FakeTool("read"), hooks=guard)
    assert run_all(harness)[-1].outcome.status == "completed"
    assert [entry[0] for entry in store.log].count("intent") == 1
