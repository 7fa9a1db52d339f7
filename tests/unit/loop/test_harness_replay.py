"""The harness over the real replay provider and a real tool: a recorded session replays to
the same run, offline; a drifted prompt fails loudly."""

from __future__ import annotations

import asyncio

from logician_kernel.loop import DEFAULT_SYSTEM_PROMPT, AgentHarness, HarnessDeps
from logician_kernel.providers import RecordedExchange, ReplayProvider, request_fingerprint
from logician_kernel.tools import default_tools
from logician_kernel.types import ModelRequest, SystemMessage, TextPart, UserMessage

from .harness_support import MemoryStore, call, kinds, make_ctx, reply, tool_reply


def _write_recording(path, exchanges: list[tuple[ModelRequest, list]]) -> None:
    lines = [
        RecordedExchange(
            index=i, fingerprint=request_fingerprint(request), request=request, events=events
        ).model_dump_json()
        for i, (request, events) in enumerate(exchanges)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _harness(provider, workspace, store):
    read = default_tools()["read"]
    return AgentHarness(HarnessDeps(provider, {"read": read}, make_ctx(workspace), store))


def _run(harness, prompt):
    async def scenario():
        return [event async for event in harness.run(prompt, [])]

    return asyncio.run(scenario())


def test_replayed_session_runs_a_real_tool(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("alpha\nbeta\n")
    recording = tmp_path / "session.jsonl"

    # Exchange 0: the request the harness must send first, answered with a read call.
    read = default_tools()["read"]
    first = ModelRequest(
        messages=[
            SystemMessage(content=DEFAULT_SYSTEM_PROMPT),
            UserMessage(content=[TextPart(text="What is in notes.md?")]),
        ],
        tools=[read.spec()],
    )
    _write_recording(recording, [(first, tool_reply(call("c1", "read", path="notes.md")))])

    # Exchange 1 depends on the real tool's output: take the request the harness actually
    # sends (the replay fails on it, saying which exchange is missing) and record an answer.
    store = MemoryStore()
    events = _run(_harness(ReplayProvider(recording), workspace, store), "What is in notes.md?")
    assert events[-1].outcome.status == "failed"
    assert "exchange 1 was requested but never recorded" in events[-1].outcome.detail
    tool_result = store.messages[-1]
    assert tool_result.kind == "tool_result" and "alpha" in tool_result.content[0].text
    second = ModelRequest(messages=[*first.messages, *store.messages[1:]], tools=[read.spec()])
    _write_recording(
        recording,
        [
            (first, tool_reply(call("c1", "read", path="notes.md"))),
            (second, reply("It lists alpha and beta.")),
        ],
    )

    store = MemoryStore()
    events = _run(_harness(ReplayProvider(recording), workspace, store), "What is in notes.md?")

    assert events[-1].outcome.status == "completed"
    assert kinds(events).count("tool_finished") == 1
    assert store.shape() == [
        "message:user",
        "message:assistant",
        "intent:c1",
        "result:c1",
        "message:tool_result",
        "commit:c1",
        "message:assistant",
    ]
    assert store.messages[-1].text == "It lists alpha and beta."


def test_a_drifted_prompt_fails_with_the_difference(tmp_path):
    recording = tmp_path / "session.jsonl"
    request = ModelRequest(
        messages=[SystemMessage(content="Be brief."), UserMessage(content=[TextPart(text="Hi")])]
    )
    _write_recording(recording, [(request, reply("Hello"))])
    provider = ReplayProvider(recording)
    store = MemoryStore()
    harness = AgentHarness(
        HarnessDeps(provider, {}, make_ctx(tmp_path), store), system_prompt="Be brief."
    )

    assert _run(harness, "Hi")[-1].outcome.status == "completed"
    provider.reset()
    outcome = _run(harness, "Hello?")[-1].outcome

    assert outcome.status == "failed"
    assert "does not match exchange 0" in outcome.detail
    assert "request.messages[1].content[0].text" in outcome.detail
