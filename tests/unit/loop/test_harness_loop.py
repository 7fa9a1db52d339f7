"""The run loop: answers, tool round trips, store order, budgets, errors, hooks."""

from __future__ import annotations

import asyncio
import logging

import pytest

from logician_kernel.events import RunEnded
from logician_kernel.loop import DEFAULT_SYSTEM_PROMPT, UNANSWERED_CALL, Hooks
from logician_kernel.providers import MissingApiKeyError
from logician_kernel.types import (
    AssistantMessage,
    SystemMessage,
    TextPart,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from logician_kernel.types.run import BudgetExhausted, RunBudgetLimits

from .harness_support import (
    FakeTool,
    ScriptedProvider,
    call,
    kinds,
    make_harness,
    reply,
    run_all,
    tool_reply,
)


def test_plain_answer_streams_and_completes():
    history = [
        UserMessage(content=[TextPart(text="Earlier")]),
        AssistantMessage(content=[TextPart(text="Sure")]),
    ]
    provider = ScriptedProvider(reply("Hello there"))
    harness, store = make_harness(provider)

    events = run_all(harness, "Hi", history)

    assert kinds(events) == [
        "run_started",
        "turn_started",
        "model_call_started",
        "text_delta",
        "text_delta",
        "usage",
        "model_responded",
        "turn_ended",
        "run_ended",
    ]
    assert events[0].prompt == "Hi" and events[0].model == "scripted-model"
    streamed = [e.event for e in events if e.kind == "model_streamed"]
    assert "".join(e.text for e in streamed if e.kind == "text_delta") == "Hello there"
    ended = events[-1]
    assert ended.outcome.status == "completed"
    assert ended.turns == 1 and ended.tool_calls == 0
    assert ended.usage == Usage(input_tokens=10, output_tokens=3)
    # The system prompt leads, the history follows, then the new prompt; no system message
    # and no history reaches the store.
    (request,) = provider.requests
    assert request.messages[0] == SystemMessage(content=DEFAULT_SYSTEM_PROMPT)
    assert request.messages[1:3] == history
    assert request.messages[3] == UserMessage(content=[TextPart(text="Hi")])
    assert store.shape() == ["message:user", "message:assistant"]
    assert store.messages[1].text == "Hello there"


def test_one_tool_round_trip_in_store_order():
    provider = ScriptedProvider(
        tool_reply(call("c1", "read", path="a.txt"), text="Let me look."), reply("It says hi.")
    )
    read = FakeTool("read", read_only=True, recovery="pure")
    harness, store = make_harness(provider, read)

    events = run_all(harness)

    assert kinds(events) == [
        "run_started",
        "turn_started",
        "model_call_started",
        "text_delta",
        "tool_call_started",
        "tool_call_finished",
        "model_responded",
        "tool_started",
        "tool_finished",
        "turn_ended",
        "turn_started",
        "model_call_started",
        "text_delta",
        "text_delta",
        "usage",
        "model_responded",
        "turn_ended",
        "run_ended",
    ]
    started = next(e for e in events if e.kind == "tool_started")
    assert started.call.id == "c1" and started.description == "read {'path': 'a.txt'}"
    finished = next(e for e in events if e.kind == "tool_finished")
    assert (finished.call_id, finished.name, finished.is_error) == ("c1", "read", False)
    assert finished.result_display == "ok {'path': 'a.txt'}"
    assert store.shape() == [
        "message:user",
        "message:assistant",
        "intent:c1",
        "result:c1",
        "message:tool_result",
        "commit:c1",
        "message:assistant",
    ]
    assert store.log[2] == ("intent", "c1", "pure")
    # The second request carries the tool result back to the model.
    result = provider.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_call_id == "c1" and result.content[0].text == "ok {'path': 'a.txt'}"
    assert events[-1].outcome.status == "completed"
    assert events[-1].turns == 2 and events[-1].tool_calls == 1
    assert events[-1].usage == Usage(input_tokens=30, output_tokens=8)


def test_unknown_tool_and_bad_arguments_are_told_to_the_model():
    bad = call("c2", "read").model_copy(update={"invalid_arguments": '{"path": "a.t'})
    provider = ScriptedProvider(tool_reply(call("c1", "nope"), bad), reply("Sorry."))
    harness, store = make_harness(provider, FakeTool("read"), FakeTool("write"))

    events = run_all(harness)

    assert events[-1].outcome.status == "completed"
    # Nothing ran: no intent, only the error results.
    assert store.shape() == [
        "message:user",
        "message:assistant",
        "message:tool_result",
        "message:tool_result",
        "message:assistant",
    ]
    unknown, invalid = provider.requests[1].messages[-2:]
    assert unknown.is_error and invalid.is_error
    assert "no tool named 'nope'" in unknown.content[0].text
    assert "Available tools: read, write" in unknown.content[0].text
    assert "not valid JSON: Unterminated string" in invalid.content[0].text
    assert "a.t" in invalid.content[0].text
    finished = [e for e in events if e.kind == "tool_finished"]
    assert [(e.call_id, e.is_error) for e in finished] == [("c1", True), ("c2", True)]
    assert "tool_started" not in kinds(events)


def test_max_turns_stops_before_the_next_request():
    provider = ScriptedProvider(
        tool_reply(call("c1", "read")), tool_reply(call("c2", "read")), reply("never sent")
    )
    harness, store = make_harness(provider, FakeTool("read"), limits=RunBudgetLimits(max_turns=2))

    events = run_all(harness)

    ended = events[-1]
    assert ended.outcome.status == "budget_exhausted"
    assert ended.outcome.limit == "max_turns" and ended.outcome.value == 2
    assert "max_turns=2" in ended.outcome.detail
    assert ended.turns == 2 and len(provider.requests) == 2
    # Both tool calls were answered before stopping: the conversation stays well-formed.
    assert store.shape()[-2:] == ["message:tool_result", "commit:c2"]


def test_budget_limits_raise_typed_exceptions():
    limits = RunBudgetLimits(max_turns=3)
    limits.check_before_request(Usage(), 2)
    with pytest.raises(BudgetExhausted) as info:
        limits.check_before_request(Usage(), 3)
    assert (info.value.limit, info.value.value, info.value.used) == ("max_turns", 3, 3)
    assert str(info.value) == "run budget exhausted: max_turns=3 reached (3 used)"
    RunBudgetLimits().check_before_request(Usage(input_tokens=10**9), 10**6)


def test_provider_error_fails_the_run_with_its_message():
    error = MissingApiKeyError("OPENAI_API_KEY", provider="openai", model="gpt-x")
    provider = ScriptedProvider([error])
    harness, store = make_harness(provider)

    events = run_all(harness)

    assert kinds(events) == [
        "run_started",
        "turn_started",
        "model_call_started",
        "run_ended",
    ]
    outcome = events[-1].outcome
    assert outcome.status == "failed" and "OPENAI_API_KEY" in outcome.detail
    assert store.shape() == ["message:user"]
    assert provider.closed_streams == 1


def test_stream_without_response_fails():
    provider = ScriptedProvider(reply("cut")[:2])
    harness, _ = make_harness(provider)

    outcome = run_all(harness)[-1].outcome

    assert outcome.status == "failed" and "without a response" in outcome.detail


def test_store_failure_fails_the_run(caplog):
    class BrokenStore:
        def append_message(self, message):
            raise OSError("disk full")

    provider = ScriptedProvider(reply("x"))
    harness, _ = make_harness(provider, store=BrokenStore())

    with caplog.at_level(logging.ERROR, logger="logician_kernel.loop"):
        events = run_all(harness)

    assert kinds(events) == ["run_started", "run_ended"]
    assert events[-1].outcome.detail == "OSError: disk full"


def test_unanswered_calls_in_history_are_answered_first():
    history = [
        UserMessage(content=[TextPart(text="go")]),
        AssistantMessage(content=[call("c1", "read"), call("c2", "read")]),
        ToolResultMessage(tool_call_id="c1", content=[TextPart(text="fine")]),
    ]
    harness, store = make_harness(ScriptedProvider(reply("ok")), FakeTool("read"))

    run_all(harness, "again", history)

    healed, prompt = store.messages[:2]
    assert isinstance(healed, ToolResultMessage) and healed.tool_call_id == "c2"
    assert healed.is_error and healed.content[0].text == UNANSWERED_CALL
    assert prompt == UserMessage(content=[TextPart(text="again")])


class Recording(Hooks):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_before_model_call(self, request, turn):
        self.seen.append(f"before_model:{turn}")

    async def on_after_model_call(self, response, turn):
        self.seen.append(f"after_model:{turn}")

    async def on_before_tool(self, call):
        self.seen.append(f"before_tool:{call.id}")

    async def on_after_tool(self, call, result):
        self.seen.append(f"after_tool:{call.id}:{result.content}")

    async def on_turn_end(self, turn, message):
        self.seen.append(f"turn_end:{turn}")


def test_hooks_are_called_at_their_points():
    hooks = Recording()
    provider = ScriptedProvider(tool_reply(call("c1", "read")), reply("done"))
    harness, _ = make_harness(provider, FakeTool("read"), hooks=hooks)

    run_all(harness)

    assert hooks.seen == [
        "before_model:1",
        "after_model:1",
        "before_tool:c1",
        "after_tool:c1:ok {}",
        "turn_end:1",
        "before_model:2",
        "after_model:2",
        "turn_end:2",
    ]


def test_a_raising_hook_is_logged_and_ignored(caplog):
    class Raising(Recording):
        async def on_before_model_call(self, request, turn):
            raise RuntimeError("hook bug")

        async def on_after_model_call(self, response, turn):
            raise RuntimeError("hook bug")

        async def on_before_tool(self, call):
            raise RuntimeError("hook bug")

        async def on_after_tool(self, call, result):
            raise ValueError("hook bug")

        async def on_turn_end(self, turn, message):
            raise KeyError("hook bug")

    provider = ScriptedProvider(tool_reply(call("c1", "read")), reply("done"))
    harness, store = make_harness(provider, FakeTool("read"), hooks=Raising())

    with caplog.at_level(logging.ERROR, logger="logician_kernel.loop"):
        events = run_all(harness)

    assert events[-1].outcome.status == "completed"
    assert store.shape()[-1] == "message:assistant"
    assert sum("raised; ignored" in r.getMessage() for r in caplog.records) == 8


def test_run_ends_exactly_once_and_events_round_trip():
    from logician_kernel.events import HARNESS_EVENT_ADAPTER

    provider = ScriptedProvider(tool_reply(call("c1", "read")), reply("done"))
    harness, _ = make_harness(provider, FakeTool("read"))

    events = run_all(harness)

    assert [isinstance(e, RunEnded) for e in events].count(True) == 1
    for event in events:
        assert HARNESS_EVENT_ADAPTER.validate_json(event.model_dump_json()) == event


def test_empty_system_prompt_sends_none():
    provider = ScriptedProvider(reply("x"))
    harness, _ = make_harness(provider, system_prompt="", max_tokens=50, temperature=0.2)

    asyncio.run(_drain(harness))

    request = provider.requests[0]
    assert [m.kind for m in request.messages] == ["user"]
    assert (request.max_tokens, request.temperature) == (50, 0.2)


async def _drain(harness):
    async for _ in harness.run("Hi", []):
        pass
