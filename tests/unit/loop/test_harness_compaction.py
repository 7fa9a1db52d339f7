"""Automatic compaction before a model request: summary, run checkpoint, failure, off."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logician_kernel.compaction import CHECKPOINT_HEADER, SUMMARY_HEADER
from logician_kernel.events.runtime_state import RuntimeState, fold
from logician_kernel.ledger.run_store import LedgerRunStore
from logician_kernel.ledger.thread_ledger import ProjectionItem, ThreadLedger
from logician_kernel.loop.compaction_policy import CompactionPolicy
from logician_kernel.types import AssistantMessage, Message, TextPart, UserMessage

from .harness_support import MemoryStore, ScriptedProvider, kinds, make_harness, reply, run_all


@dataclass
class ReplacingStore(MemoryStore):
    """A `MemoryStore` that also records `replace_messages`."""

    def replace_messages(self, messages: list[Message], reason: str, note: str) -> None:
        self.log.append(("replace", list(messages), reason, note))

    @property
    def replacements(self) -> list[tuple[Any, ...]]:
        return [entry for entry in self.log if entry[0] == "replace"]


def long_history(turns: int = 3, chars: int = 400) -> list[Message]:
    history: list[Message] = []
    for i in range(turns):
        history.append(UserMessage(content=[TextPart(text=f"question {i} " + "q" * chars)]))
        history.append(AssistantMessage(content=[TextPart(text=f"answer {i} " + "a" * chars)]))
    return history


def policy(**overrides: Any) -> CompactionPolicy:
    options: dict[str, Any] = {
        "context_window": 1_000,
        "threshold_fraction": 0.5,
        "keep_recent_turns": 1,
        "max_compactions_before_checkpoint": 3,
    }
    return CompactionPolicy(**(options | overrides))


def text_of(message: Message) -> str:
    return "".join(part.text for part in message.content if isinstance(part, TextPart))


def phases(events: list[Any]) -> list[str]:
    state, seen = RuntimeState(), []
    for event in events:
        state = fold(state, event)
        if not seen or seen[-1] != state.phase:
            seen.append(state.phase)
    return seen


def test_a_long_history_is_summarised_before_the_request() -> None:
    provider = ScriptedProvider(reply("## Objective\nthe summary"), reply("Done."))
    store = ReplacingStore()
    harness, _ = make_harness(provider, store=store, compaction=policy())
    events = run_all(harness, "go on", long_history())

    assert kinds(events)[:3] == ["run_started", "compaction_started", "compaction_finished"]
    finished = events[2]
    assert finished.result == "summary" and finished.after < finished.before
    assert phases(events) == ["turn", "compaction", "turn", "idle"]
    assert events[-1].outcome.status == "completed"

    summary_request, request = provider.requests
    assert summary_request.tools == []  # the summary call, not a turn
    assert request.messages[0].kind == "system"
    assert text_of(request.messages[1]).startswith(SUMMARY_HEADER)
    assert "the summary" in text_of(request.messages[1])
    assert text_of(request.messages[-1]) == "go on"  # the recent turn is kept verbatim

    [(_, messages, reason, note)] = store.replacements
    assert reason == "compaction" and note == "summary"
    assert messages == request.messages[1:]
    assert harness.compactions == 1
    # The reply after the compaction is appended as usual.
    assert store.log[-1][0] == "message" and text_of(store.log[-1][1]) == "Done."


def test_a_failed_summary_keeps_the_conversation_and_the_run_goes_on() -> None:
    history = long_history()
    provider = ScriptedProvider(reply(""), reply("Done."))  # an empty summary fails
    store = ReplacingStore()
    harness, _ = make_harness(provider, store=store, compaction=policy())
    events = run_all(harness, "go on", history)

    finished = next(e for e in events if e.kind == "compaction_finished")
    assert finished.result == "failed" and finished.after == finished.before
    assert "empty summary" in finished.detail
    assert phases(events) == ["turn", "compaction", "turn", "idle"]
    assert events[-1].outcome.status == "completed"
    request = provider.requests[1]
    assert request.messages[1:] == [*history, UserMessage(content=[TextPart(text="go on")])]
    assert store.replacements == []
    assert harness.compactions == 0


def test_too_many_compactions_escalate_to_a_run_checkpoint() -> None:
    provider = ScriptedProvider(reply("Done."))  # no summary call at all
    store = ReplacingStore()
    harness, _ = make_harness(
        provider,
        store=store,
        compaction=policy(max_compactions_before_checkpoint=2, compactions_so_far=2),
    )
    events = run_all(harness, "go on", long_history())

    finished = next(e for e in events if e.kind == "compaction_finished")
    assert finished.result == "run_checkpoint"
    [request] = provider.requests
    [checkpoint] = request.messages[1:]
    assert checkpoint.kind == "user"
    assert text_of(checkpoint).startswith(CHECKPOINT_HEADER)
    assert "go on" in text_of(checkpoint)  # this run's prompt is the objective
    [(_, messages, reason, note)] = store.replacements
    assert (messages, reason, note) == ([checkpoint], "compaction", "run-checkpoint")
    assert harness.compactions == 0
    assert events[-1].outcome.status == "completed"


def test_a_summary_still_over_the_threshold_escalates_at_the_limit() -> None:
    provider = ScriptedProvider(reply("s" * 4_000), reply("Done."))  # a useless summary
    store = ReplacingStore()
    harness, _ = make_harness(
        provider, store=store, compaction=policy(max_compactions_before_checkpoint=1)
    )
    events = run_all(harness, "go on", long_history())

    assert [e.result for e in events if e.kind == "compaction_finished"] == ["run_checkpoint"]
    [checkpoint] = provider.requests[1].messages[1:]
    assert text_of(checkpoint).startswith(CHECKPOINT_HEADER)
    assert [entry[3] for entry in store.replacements] == ["run-checkpoint"]


def test_compactions_are_counted_across_runs_of_one_harness() -> None:
    provider = ScriptedProvider(reply("summary one"), reply("Done."), reply("Again."))
    store = ReplacingStore()
    harness, _ = make_harness(
        provider, store=store, compaction=policy(max_compactions_before_checkpoint=1)
    )
    run_all(harness, "go on", long_history())
    assert harness.compactions == 1
    events = run_all(harness, "more", long_history())
    assert [e.result for e in events if e.kind == "compaction_finished"] == ["run_checkpoint"]
    assert [entry[3] for entry in store.replacements] == ["summary", "run-checkpoint"]


def test_below_the_threshold_nothing_happens() -> None:
    history = long_history(turns=1, chars=40)
    provider = ScriptedProvider(reply("Done."))
    store = ReplacingStore()
    harness, _ = make_harness(provider, store=store, compaction=policy())
    events = run_all(harness, "go on", history)

    assert "compaction_started" not in kinds(events)
    assert len(provider.requests) == 1
    assert store.replacements == []


def test_disabled_or_absent_compaction_does_nothing() -> None:
    for options in ({"compaction": policy(enabled=False)}, {}):
        history = long_history()
        provider = ScriptedProvider(reply("Done."))
        store = ReplacingStore()
        harness, _ = make_harness(provider, store=store, **options)
        events = run_all(harness, "go on", history)

        assert "compaction_started" not in kinds(events)
        assert provider.requests[0].messages[1:-1] == history
        assert store.replacements == []


def test_a_store_without_replace_messages_still_compacts() -> None:
    provider = ScriptedProvider(reply("the summary"), reply("Done."))
    harness, store = make_harness(provider, compaction=policy())
    events = run_all(harness, "go on", long_history())

    assert [e.result for e in events if e.kind == "compaction_finished"] == ["summary"]
    assert "the summary" in text_of(provider.requests[1].messages[1])
    assert events[-1].outcome.status == "completed"


def test_the_ledger_store_records_a_compaction_projection(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    store = LedgerRunStore(ledger, 1, secrets=["hunter2-secret"])
    messages: list[Message] = [UserMessage(content=[TextPart(text="key hunter2-secret here")])]
    store.replace_messages(messages, "compaction", "summary")
    item = ledger.entries[-1]
    assert isinstance(item, ProjectionItem)
    assert (item.reason, item.note) == ("compaction", "summary")
    assert "hunter2-secret" not in str(item.messages)
    assert ledger.messages() == item.messages
    ledger.close()
