"""Recovery that keeps what is known (frames/recovery.py): restorable calls offered for
`rewind --call`, approvals a dead kernel left waiting; with torn-write and replay tests of
their ledger records."""

from __future__ import annotations

from pathlib import Path

import pytest

from logician_kernel.frames.recovery import CallRewindError, rewind_call
from logician_kernel.ledger.run_store import LedgerRunStore, resolve_dangling_calls
from logician_kernel.ledger.settle import resolve_pending_approvals, restorable_calls
from logician_kernel.ledger.thread_ledger import (
    ApprovalRequested,
    ApprovalResolved,
    CallRewound,
    FileCheckpoint,
    Quarantine,
    RestorableCall,
    ThreadLedger,
    project,
    read_entries,
)
from logician_kernel.types import ToolCall
from logician_kernel.workspace.open_thread import OpenThread

ENV = {"LOGICIAN_THREAD": "rec"}


def _die_mid_write(ws: Path, *, capture: bool = True) -> None:
    """A kernel session that dies inside a `write` call (its pre-image recorded or not)."""
    s = OpenThread.open(ws, env=ENV)
    assert s.checkpoints is not None and s.ledger is not None
    s.checkpoints.open_frame(execution_count=1, cell_id=None, code="%%logician")
    store = LedgerRunStore(s.ledger, s.checkpoints.current_frame)
    store.record_intent(ToolCall(id="c1", name="write", arguments={"path": "a.txt"}), "restorable")
    if capture:
        s.checkpoints.capture("a.txt", call_id="c1")
    (ws / "a.txt").write_bytes(b"half-writ")
    s.checkpoints.settle()
    s.ledger.close()  # no frame close, no result: the process is gone
    assert s._lock is not None
    s._lock.release()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_bytes(b"pre-image\n\xff")
    return root


def test_a_cut_off_write_with_its_pre_image_is_offered_and_rewinds_exactly(ws: Path) -> None:
    _die_mid_write(ws)
    s = OpenThread.open(ws, env=ENV)
    ledger = s.ledger
    assert ledger is not None
    said = " ".join(s.notices)
    assert "`%logician rewind --call c1` restores it" in said and "quarantined" not in said
    (offered,) = restorable_calls(ledger)
    assert offered.call_id == "c1" and offered.paths == ["a.txt"] and offered.frame == 1
    assert not any(isinstance(e, Quarantine) for e in ledger.entries)
    (answer,) = [m for m in project(ledger.entries) if m["kind"] == "tool_result"]
    assert "NOT repeated" in answer["content"][0]["text"]
    (capture,) = [e for e in ledger.entries if isinstance(e, FileCheckpoint)]
    assert capture.call_id == "c1"

    item = rewind_call(ledger, s.checkpoints.snapshotter, "c1")  # type: ignore[union-attr]
    assert [(p.path, p.action) for p in item.paths] == [("a.txt", "restored")]
    assert (ws / "a.txt").read_bytes() == b"pre-image\n\xff"
    assert restorable_calls(ledger) == []
    with pytest.raises(CallRewindError, match="already rewound"):
        rewind_call(ledger, s.checkpoints.snapshotter, "c1")  # type: ignore[union-attr]
    s.close()


def test_a_cut_off_write_without_a_recorded_pre_image_is_still_quarantined(ws: Path) -> None:
    _die_mid_write(ws, capture=False)
    s = OpenThread.open(ws, env=ENV)
    assert s.ledger is not None
    assert any("quarantined the write call" in n for n in s.notices)
    assert restorable_calls(s.ledger) == []
    s.close()


def test_a_waiting_approval_is_settled_once_and_the_conversation_answers_the_call(
    tmp_path: Path,
) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    ledger.append(
        ApprovalRequested,
        frame=4,
        request_id="r1",
        call_id="k1",
        tool="bash",
        description="rm -rf build",
        reason="no rule allows this bash command",
    )
    ledger.close()
    reopened = ThreadLedger(tmp_path, "t")
    (notice,) = resolve_pending_approvals(reopened)
    assert "waiting for your decision when the kernel stopped" in notice
    assert "bash in frame 4 (call k1)" in notice and "`rm -rf build`" in notice
    (resolved,) = [e for e in reopened.entries if isinstance(e, ApprovalResolved)]
    assert resolved.request_id == "r1" and resolved.choice == "deny" and resolved.via == "restart"
    (answer,) = [m for m in project(reopened.entries) if m["kind"] == "tool_result"]
    assert answer["tool_call_id"] == "k1" and "did not run" in answer["content"][0]["text"]
    assert resolve_pending_approvals(reopened) == []  # settled for good
    assert resolve_dangling_calls(reopened) == []  # never an intent: nothing to quarantine
    reopened.close()


def test_torn_writes_of_the_recovery_records_keep_every_whole_record_and_replay_exactly(
    ws: Path, tmp_path: Path
) -> None:
    _die_mid_write(ws)
    s = OpenThread.open(ws, env=ENV)
    assert s.ledger is not None
    rewind_call(s.ledger, s.checkpoints.snapshotter, "c1")  # type: ignore[union-attr]
    path = s.ledger.path
    s.close()
    data = path.read_bytes()
    entries = read_entries(path)
    assert read_entries(path) == entries  # deterministic replay
    kinds = [e.kind for e in entries]
    first = kinds.index("restorable_call")
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for offset in _cuts(ends[first - 1], len(data), ends):
        d = tmp_path / f"cut{offset}"
        d.mkdir()
        (d / path.name).write_bytes(data[:offset])
        ledger = ThreadLedger(d, "rec")
        whole = sum(1 for e in ends if e <= offset)
        assert [e.model_dump() for e in ledger.entries[:whole]] == [
            e.model_dump() for e in entries[:whole]
        ]
        rewound = any(isinstance(e, CallRewound) for e in ledger.entries)
        assert rewound == (offset == len(data))  # the last record is whole only at the end
        assert any(isinstance(e, RestorableCall) for e in ledger.entries) == (whole > first)
        ledger.close()


def _cuts(start: int, stop: int, ends: list[int], stride: int = 7) -> list[int]:
    """Offsets to cut the file at, from `start` to `stop` inclusive: every byte within 3 of a
    record's end (where a cut keeps or loses a whole record, or leaves a line without its
    newline) and every `stride`-th byte inside the records (where any cut is the same torn
    line: each open of a torn copy writes a side file and a durable record, ~2,800 of them at
    every byte, minutes of fsyncs on a loaded disk)."""
    near = {o for e in ends for o in range(e - 3, e + 4)}
    return [o for o in range(start, stop + 1) if o in near or (o - start) % stride == 0]


def test_a_second_call_on_a_path_is_rewound_to_just_before_it(ws: Path) -> None:
    s = OpenThread.open(ws, env=ENV)
    assert s.checkpoints is not None and s.ledger is not None
    s.checkpoints.open_frame(execution_count=1, cell_id=None, code="%%logician")
    store = LedgerRunStore(s.ledger, s.checkpoints.current_frame)
    for call_id, text in (("c1", b"first call\n"), ("c2", b"second, cut off")):
        store.record_intent(
            ToolCall(id=call_id, name="write", arguments={"path": "a.txt"}), "restorable"
        )
        s.checkpoints.capture("a.txt", call_id=call_id)
        s.checkpoints.capture("a.txt", call_id=call_id)  # once per call
        (ws / "a.txt").write_bytes(text)
        if call_id == "c1":
            store.record_result("c1", type("R", (), {"is_error": False, "content": "ok"})())
            store.record_commit("c1")
    s.checkpoints.settle()
    assert [e.call_id for e in s.ledger.entries if isinstance(e, FileCheckpoint)] == ["c1", "c2"]
    s.ledger.close()
    assert s._lock is not None
    s._lock.release()

    again = OpenThread.open(ws, env=ENV)
    assert again.ledger is not None and again.checkpoints is not None
    assert [c.call_id for c in restorable_calls(again.ledger)] == ["c2"]
    (killed,) = again.checkpoints.active_frames()
    (change,) = killed.changes
    assert change.before.kind == "blob"  # the frame still restores to before the first call
    rewind_call(again.ledger, again.checkpoints.snapshotter, "c2")
    assert (ws / "a.txt").read_bytes() == b"first call\n"
    again.close()
