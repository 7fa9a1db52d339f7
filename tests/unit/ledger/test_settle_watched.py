"""Settling a `bash` call a dead kernel cut off, from its `call_watch` records alone: exact
records offer it for `rewind --call`; anything less keeps it quarantined, saying why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.ledger.run_store import LedgerRunStore, resolve_dangling_calls
from logician_kernel.ledger.settle import restorable_calls
from logician_kernel.ledger.thread_ledger import (
    CallWatch,
    Quarantine,
    RestorableCall,
    ThreadLedger,
    project,
)
from logician_kernel.types import ToolCall

_OPEN: list[ThreadLedger] = []


@pytest.fixture(autouse=True)
def _close_ledgers() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _died_in_bash(tmp_path: Path, *records: dict[str, Any]) -> ThreadLedger:
    """A ledger whose kernel died inside bash call b1 after writing `records`; reopened."""
    ledger = ThreadLedger(tmp_path, "t")
    store = LedgerRunStore(ledger, 3)
    store.record_intent(ToolCall(id="b1", name="bash", arguments={"command": "make"}), "external")
    for record in records:
        ledger.append(CallWatch, frame=3, call_id="b1", **record)
    ledger.close()
    _OPEN.append(ThreadLedger(tmp_path, "t"))
    return _OPEN[-1]


START = {"phase": "start", "baseline": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}
SEEN = {"phase": "seen", "paths": ["out/a.o", "notes.txt"], "others": ["data.csv"]}
END = {"phase": "end", "paths": ["out/b.o"]}


def _answer(ledger: ThreadLedger) -> str:
    (answer,) = [m for m in project(ledger.entries) if m["kind"] == "tool_result"]
    text: str = answer["content"][0]["text"]
    return text


def test_exact_records_offer_the_call_with_the_paths_its_processes_changed(
    tmp_path: Path,
) -> None:
    ledger = _died_in_bash(tmp_path, START, SEEN, END)
    (notice,) = resolve_dangling_calls(ledger)
    assert "the bash call of frame 3 (`make`) was cut off" in notice
    assert "'out/a.o', 'notes.txt', 'out/b.o'" in notice and "data.csv" not in notice
    assert "`%logician rewind --call b1`" in notice and "may be missing" not in notice
    (offered,) = restorable_calls(ledger)
    assert offered.paths == ["out/a.o", "notes.txt", "out/b.o"] and offered.name == "bash"
    assert not any(isinstance(e, Quarantine) for e in ledger.entries)
    text = _answer(ledger)
    assert text.startswith("OUTCOME UNKNOWN") and "NOT repeated" in text
    assert resolve_dangling_calls(ledger) == []  # settled once


def test_records_cut_off_before_the_call_ended_offer_it_and_say_the_list_may_be_short(
    tmp_path: Path,
) -> None:
    ledger = _died_in_bash(tmp_path, START, SEEN)
    (notice,) = resolve_dangling_calls(ledger)
    assert "`%logician rewind --call b1`" in notice
    assert "may be missing from that list" in notice and "`%logician diff 3`" in notice
    (offered,) = restorable_calls(ledger)
    assert offered.paths == ["out/a.o", "notes.txt"]


@pytest.mark.parametrize(
    ("records", "why"),
    [
        (
            [
                {
                    "phase": "start",
                    "not_exact": "its writes are attributed by process tree sampling, not exactly",
                },
                {"phase": "end"},
            ],
            "not offered for rewind: its writes are attributed by process tree sampling",
        ),
        (
            [START, SEEN, {"phase": "seen", "not_exact": "the kernel dropped file events"}],
            "not offered for rewind: the kernel dropped file events",
        ),
        (
            [START, {**SEEN, "not_exact": "another tool call ran at the same time"}, END],
            "not offered for rewind: another tool call ran at the same time",
        ),
        ([START, {"phase": "end"}], "changed no workspace file that was seen"),
    ],
    ids=["sampling", "events-lost", "concurrent-call", "wrote-nothing"],
)
def test_anything_less_than_exact_records_keeps_the_call_quarantined_and_says_why(
    tmp_path: Path, records: list[dict[str, Any]], why: str
) -> None:
    ledger = _died_in_bash(tmp_path, *records)
    (notice,) = resolve_dangling_calls(ledger)
    assert "quarantined the bash call of frame 3" in notice and why in notice, notice
    assert "rewind --call" not in notice
    assert restorable_calls(ledger) == []
    assert not any(isinstance(e, RestorableCall) for e in ledger.entries)
    assert "OUTCOME UNKNOWN" in _answer(ledger)


def test_a_call_never_watched_is_quarantined_as_before(tmp_path: Path) -> None:
    ledger = _died_in_bash(tmp_path)
    (notice,) = resolve_dangling_calls(ledger)
    assert "quarantined the bash call" in notice and "not offered" not in notice
