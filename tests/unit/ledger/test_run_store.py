"""Tool calls as intent -> result -> commit in the ledger, and what a reopen does with the rest."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from logician_kernel.ledger.run_store import LedgerRunStore, resolve_dangling_calls
from logician_kernel.ledger.thread_ledger import (
    Quarantine,
    ThreadLedger,
    ToolIntent,
    project,
)
from logician_kernel.types import ToolCall


@dataclass
class Result:
    content: str
    is_error: bool = False
    display: str = ""


def test_a_committed_call_needs_no_recovery(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    store = LedgerRunStore(ledger, 1)
    call = ToolCall(id="c1", name="read", arguments={"path": "a.txt"})
    store.record_intent(call, "pure")
    store.record_result("c1", Result("hello"))
    store.record_commit("c1")
    count = len(ledger.entries)
    assert resolve_dangling_calls(ledger) == []
    assert len(ledger.entries) == count
    ledger.close()


def test_an_external_call_without_result_is_quarantined_and_never_repeated(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    LedgerRunStore(ledger, 3).record_intent(
        ToolCall(id="c9", name="bash", arguments={"command": "make deploy"}), "external"
    )
    ledger.close()
    reopened = ThreadLedger(tmp_path, "t")
    notices = resolve_dangling_calls(reopened)
    assert len(notices) == 1 and "quarantined the bash call of frame 3" in notices[0]
    assert "command 'make deploy'" in notices[0]
    assert any(isinstance(e, Quarantine) and e.call_id == "c9" for e in reopened.entries)
    (answer,) = [m for m in project(reopened.entries) if m["kind"] == "tool_result"]
    assert answer["tool_call_id"] == "c9" and answer["is_error"]
    assert "OUTCOME UNKNOWN" in answer["content"][0]["text"]
    assert resolve_dangling_calls(reopened) == []  # settled once, for good
    reopened.close()


def test_a_pure_call_is_re_offered_and_a_known_result_is_not_lost(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    store = LedgerRunStore(ledger, 1)
    store.record_intent(ToolCall(id="p", name="read", arguments={"path": "x"}), "pure")
    store.record_intent(ToolCall(id="w", name="write", arguments={"path": "y"}), "restorable")
    store.record_result("w", Result("wrote 3 B to y"))
    assert resolve_dangling_calls(ledger) == []
    answers = {m["tool_call_id"]: m for m in project(ledger.entries) if m["kind"] == "tool_result"}
    assert "call it again" in answers["p"]["content"][0]["text"]
    assert answers["w"]["content"][0]["text"] == "wrote 3 B to y" and not answers["w"]["is_error"]
    assert not any(isinstance(e, Quarantine) for e in ledger.entries)
    ledger.close()


def test_secrets_in_arguments_and_messages_are_masked(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    store = LedgerRunStore(ledger, 1, secrets=["super-secret-value"])
    store.record_intent(
        ToolCall(
            id="b", name="bash", arguments={"command": "curl -H 'token: super-secret-value' x"}
        ),
        "external",
    )
    ledger.close()
    text = (tmp_path / "t.jsonl").read_text()
    assert "super-secret-value" not in text and "****" in text
    reopened = ThreadLedger(tmp_path, "t")
    intent = next(e for e in reopened.entries if isinstance(e, ToolIntent))
    assert "****" in intent.arguments["command"]
    reopened.close()
