"""Properties of the ledger's projection over random sessions.

Over random sequences of turns, tool calls, rewinds, branch merges/discards, clears,
compactions, restores, run commits and restarts, driven through a real `ThreadLedger` on disk:
after every step the projection rebuilt from the file equals the live projection (and the
branches derived from it equal the live ones), replay is deterministic, and the file only
grows - every earlier byte stays as it was, so no entry is ever removed or rewritten.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings, target
from hypothesis import strategies as st

from logician_kernel.ledger.branches import (
    branch_discard_fields,
    branch_merge_fields,
    derive_branches,
)
from logician_kernel.ledger.thread_ledger import (
    FrameClose,
    FrameOpen,
    MessageEntry,
    ProjectionItem,
    ProjectionReason,
    ThreadLedger,
    ToolCommit,
    ToolIntent,
    ToolOutcome,
    project,
    read_entries,
)
from logician_kernel.types.messages import MESSAGE_ADAPTER

ALL_REASONS = set(get_args(ProjectionReason))

# Text that stresses the line format: newlines, quotes, backslashes, non-ASCII, U+2028.
# Lone surrogates are left out: the journal cannot encode them (see the xfail tests below).
text = st.text(
    alphabet=st.one_of(
        st.sampled_from('\n\r"\\\u2028\x00é🙂{}'), st.characters(exclude_categories=("Cs",))
    ),
    max_size=12,
)
# Finite floats only: NaN and infinities do not survive the round trip (see below).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)


def user(body: str) -> dict[str, Any]:
    return {"kind": "user", "content": [{"kind": "text", "text": body}]}


def assistant(body: str, calls: list[tuple[str, str, dict]] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"kind": "text", "text": body}] if body else []
    content += [{"kind": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return {"kind": "assistant", "content": content}


def tool_result(call_id: str, body: str, is_error: bool) -> dict[str, Any]:
    return {
        "kind": "tool_result",
        "tool_call_id": call_id,
        "content": [{"kind": "text", "text": body}],
        "is_error": is_error,
    }


class Session:
    """A real ledger plus a model of what it should say, checked after every step."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.ledger = ThreadLedger(directory, "t")
        self.frame = 0
        self.calls = 0
        self.live_frames: list[int] = []  # closed, not rewound, oldest first
        self.branch_status: dict[str, str] = {}
        self.reasons: set[str] = set()
        self.disk = b""
        self.check()

    # -- steps ----------------------------------------------------------------------------

    def _cell(self) -> int:
        self.frame += 1
        self.ledger.append(
            FrameOpen,
            frame=self.frame,
            execution_count=self.frame,
            cell_id=f"c{self.frame}",
            code="%%logician",
            pre_tree=None,
        )
        return self.frame

    def _close(self, frame: int) -> None:
        self.ledger.append(FrameClose, frame=frame, outcome="ok", post_tree=None, durable=True)
        self.live_frames.append(frame)

    def turn(self, prompt: str, reply: str) -> None:
        frame = self._cell()
        self.ledger.append(MessageEntry, frame=frame, message=user(prompt))
        self.ledger.append(MessageEntry, frame=frame, message=assistant(reply))
        self._close(frame)

    def tool_call(self, prompt: str, name: str, arguments: dict, result: str, error: bool) -> None:
        frame = self._cell()
        self.calls += 1
        call_id = f"call_{self.calls}"
        self.ledger.append(MessageEntry, frame=frame, message=user(prompt))
        self.ledger.append(
            MessageEntry, frame=frame, message=assistant("", [(call_id, name, arguments)])
        )
        self.ledger.append(
            ToolIntent,
            frame=frame,
            call_id=call_id,
            name=name,
            arguments=arguments,
            recovery="pure",
            durable=True,
        )
        self.ledger.append(
            ToolOutcome, frame=frame, call_id=call_id, is_error=error, content=result
        )
        self.ledger.append(MessageEntry, frame=frame, message=tool_result(call_id, result, error))
        self.ledger.append(ToolCommit, call_id=call_id)
        self._close(frame)

    def project_to(self, reason: str, messages: list[dict[str, Any]], **extra: Any) -> None:
        self.ledger.append(ProjectionItem, reason=reason, messages=messages, **extra)
        self.reasons.add(reason)

    def rewind(self, pop: int, keep: int) -> None:
        """Pop the last `pop` frames, keeping the first `keep` messages (clamped)."""
        frames = self.live_frames[len(self.live_frames) - pop :] if pop else []
        del self.live_frames[len(self.live_frames) - len(frames) :]
        current = self.ledger.messages()
        item_seq = len(self.ledger.entries) + 1
        self.project_to("rewind", current[: min(keep, len(current))], frames=frames, durable=True)
        self.branch_status[f"b{item_seq}"] = "open"

    def resolve(self, pick: int, merge: bool, summary: str) -> bool:
        """Merge or discard the `pick`-th open branch; False when none is open."""
        open_branches = [b for b in derive_branches(self.ledger.entries) if b.status == "open"]
        if not open_branches:
            return False
        branch = open_branches[pick % len(open_branches)]
        current = self.ledger.messages()
        if merge:
            fields = branch_merge_fields(branch, summary, current)
        else:
            fields = branch_discard_fields(branch, current)
        self.ledger.append(ProjectionItem, **fields)
        self.reasons.add(fields["reason"])
        self.branch_status[branch.id] = "merged" if merge else "discarded"
        expected = [*current, user(f"[Summary of discarded branch {branch.id}]\n{summary}")]
        assert self.ledger.messages() == (expected if merge else current)
        return True

    def clear(self) -> None:
        self.project_to("clear", [])
        assert self.ledger.messages() == []

    def compaction(self, summary: str, keep_tail: int) -> None:
        current = self.ledger.messages()
        tail = current[len(current) - keep_tail :] if keep_tail else []
        self.project_to("compaction", [user(f"[Summary]\n{summary}"), *tail])

    def restore(self, messages: list[dict[str, Any]]) -> None:
        self.project_to("restore", messages)

    def run_commit(self, reply: str) -> None:
        self.project_to("run-commit", [*self.ledger.messages(), assistant(reply)])

    def restart(self) -> None:
        before = list(self.ledger.entries)
        self.ledger.close()
        self.ledger = ThreadLedger(self.directory, "t")
        assert self.ledger.recovered_tail is None
        assert self.ledger.entries == before

    def close(self) -> None:
        self.ledger.close()

    # -- the properties -------------------------------------------------------------------

    def check(self) -> None:
        path = self.directory / "t.jsonl"
        disk = path.read_bytes() if path.exists() else b""
        # The file only grows; every earlier byte is unchanged.
        assert disk.startswith(self.disk)
        self.disk = disk
        on_disk = read_entries(path) if path.exists() else []
        assert on_disk == self.ledger.entries
        assert [e.seq for e in on_disk] == list(range(1, len(on_disk) + 1))
        live = self.ledger.messages()
        assert project(on_disk) == live
        assert project(read_entries(path) if path.exists() else []) == live  # deterministic
        for message in live:  # every message is a valid conversation message
            MESSAGE_ADAPTER.validate_python(message)
        branches = derive_branches(on_disk)
        assert branches == derive_branches(self.ledger.entries)
        assert {b.id: b.status for b in branches} == self.branch_status


STEPS = [
    "turn",
    "tool_call",
    "rewind",
    "merge",
    "discard",
    "clear",
    "compaction",
    "restore",
    "run-commit",
    "restart",
]


def run_step(session: Session, step: str, data: st.DataObject) -> None:
    if step == "turn":
        session.turn(data.draw(text), data.draw(text))
    elif step == "tool_call":
        session.tool_call(
            data.draw(text),
            data.draw(st.sampled_from(["read_file", "write_file", "run_cell"])),
            data.draw(st.dictionaries(text, json_values, max_size=3)),
            data.draw(text),
            data.draw(st.booleans()),
        )
    elif step == "rewind":
        session.rewind(
            data.draw(st.integers(0, len(session.live_frames))),
            data.draw(st.integers(0, len(session.ledger.messages()))),
        )
    elif step in ("merge", "discard"):
        session.resolve(data.draw(st.integers(0, 5)), step == "merge", data.draw(text))
    elif step == "clear":
        session.clear()
    elif step == "compaction":
        session.compaction(data.draw(text), data.draw(st.integers(0, 3)))
    elif step == "restore":
        earlier = [m.message for m in session.ledger.entries if isinstance(m, MessageEntry)]
        session.restore(
            data.draw(st.lists(st.sampled_from(earlier), max_size=4)) if earlier else []
        )
    elif step == "run-commit":
        session.run_commit(data.draw(text))
    elif step == "restart":
        session.restart()
    session.check()


@pytest.mark.timeout(900)  # 60 examples of fsynced ledgers: over 120 s at load 20
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_replay_equals_live_and_the_file_only_grows(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        session = Session(Path(tmp))
        try:
            for _ in range(data.draw(st.integers(1, 30), label="steps")):
                run_step(session, data.draw(st.sampled_from(STEPS)), data)
            target(float(len(session.reasons)), label="distinct projection reasons")
        finally:
            session.close()


def test_every_projection_reason_appears_and_replays(tmp_path: Path) -> None:
    """One explicit session that writes each of the seven reasons at least once."""
    session = Session(tmp_path)
    try:
        for step in [
            lambda: session.turn("hello\nthere", "hi"),
            lambda: session.tool_call(
                "read it", "read_file", {"path": "a.py", "n": [1.5, None]}, "x = 1", False
            ),
            lambda: session.turn("more", "ok"),
            lambda: session.rewind(1, 2),
            lambda: session.resolve(0, True, "tried more"),
            lambda: session.turn("again", "ok"),
            lambda: session.rewind(2, 0),
            lambda: session.resolve(0, False, ""),
            lambda: session.run_commit("done"),
            session.restart,
            lambda: session.compaction("so far", 1),
            lambda: session.restore([user("hello\nthere")]),
            session.clear,
            session.restart,
        ]:
            step()
            session.check()
        assert session.reasons == ALL_REASONS
        assert set(session.branch_status.values()) == {"merged", "discarded"}
    finally:
        session.close()


# -- gaps the property tests found, fixed in the ledger; kept as regression tests -----------


def test_non_finite_floats_replay_as_they_were_live(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    try:
        ledger.append(
            MessageEntry, frame=None, message=assistant("", [("c1", "f", {"x": float("inf")})])
        )
        assert project(read_entries(ledger.path)) == ledger.messages()
    finally:
        ledger.close()


def test_mutating_the_projection_does_not_change_the_ledger(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    try:
        ledger.append(MessageEntry, frame=None, message=user("a"))
        ledger.messages()[0]["content"] = []
        assert project(read_entries(ledger.path)) == ledger.messages()
    finally:
        ledger.close()


def test_a_lone_surrogate_is_refused_with_a_journal_error_or_round_trips(tmp_path: Path) -> None:
    from logician_kernel.durable.journal import JournalError

    ledger = ThreadLedger(tmp_path, "t")
    try:
        try:
            ledger.append(MessageEntry, frame=None, message=user("\ud800"))
        except JournalError:
            return
        assert project(read_entries(ledger.path)) == ledger.messages()
    finally:
        ledger.close()
