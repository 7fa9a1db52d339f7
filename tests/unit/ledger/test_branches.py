"""Branches derived from rewinds, and the merge/discard items that resolve them."""

from __future__ import annotations

from pathlib import Path

import pytest

from logician_kernel.ledger.branches import (
    branch_discard_fields,
    branch_id_of_note,
    branch_merge_fields,
    derive_branches,
)
from logician_kernel.ledger.thread_ledger import (
    FrameClose,
    FrameOpen,
    MessageEntry,
    ProjectionItem,
    ThreadLedger,
    read_entries,
)


def user(text: str) -> dict:
    return {"kind": "user", "content": [{"kind": "text", "text": text}]}


def assistant(text: str) -> dict:
    return {"kind": "assistant", "content": [{"kind": "text", "text": text}]}


def cell(ledger: ThreadLedger, frame: int, *messages: dict) -> None:
    ledger.append(
        FrameOpen, frame=frame, execution_count=frame, cell_id=None, code="", pre_tree=None
    )
    for message in messages:
        ledger.append(MessageEntry, frame=frame, message=message)
    ledger.append(FrameClose, frame=frame, outcome="ok", post_tree=None)


@pytest.fixture
def ledger(tmp_path: Path):
    ledger = ThreadLedger(tmp_path, "t")
    yield ledger
    ledger.close()


def rewound(ledger: ThreadLedger) -> ProjectionItem:
    """Three cells, then a rewind to just before the second (popping frames 2 and 3)."""
    cell(ledger, 1, user("a"), assistant("A"))
    cell(ledger, 2, user("b"), assistant("B"))
    cell(ledger, 3, user("c"))
    return ledger.append(
        ProjectionItem, reason="rewind", messages=[user("a"), assistant("A")], frames=[2, 3]
    )


def test_no_rewind_no_branch(ledger: ThreadLedger) -> None:
    cell(ledger, 1, user("a"))
    ledger.append(ProjectionItem, reason="clear", messages=[])
    ledger.append(ProjectionItem, reason="compaction", messages=[user("sum")])
    assert derive_branches(ledger.entries) == []


def test_a_rewind_makes_an_open_branch_of_what_it_dropped(ledger: ThreadLedger) -> None:
    item = rewound(ledger)
    (branch,) = derive_branches(ledger.entries)
    assert branch.id == f"b{item.seq}" and branch.rewind_seq == item.seq
    assert branch.created_at == item.time
    assert branch.frames == [2, 3]
    assert branch.messages == [user("b"), assistant("B"), user("c")]
    assert branch.status == "open" and branch.resolved_by is None


def test_dropped_messages_are_the_suffix_beyond_the_common_prefix(
    ledger: ThreadLedger,
) -> None:
    for text in "abcd":
        ledger.append(MessageEntry, frame=None, message=user(text))
    # The replacement shares a prefix of two, then differs: everything past the prefix drops.
    ledger.append(ProjectionItem, reason="rewind", messages=[user("a"), user("b"), user("x")])
    (branch,) = derive_branches(ledger.entries)
    assert branch.messages == [user("c"), user("d")]
    # A rewind that drops nothing is still a (empty) branch.
    ledger.append(ProjectionItem, reason="rewind", messages=ledger.messages())
    assert [b.messages for b in derive_branches(ledger.entries)] == [[user("c"), user("d")], []]


def test_discard_keeps_the_conversation_and_marks_the_branch(ledger: ThreadLedger) -> None:
    rewound(ledger)
    ledger.append(MessageEntry, frame=None, message=user("later"))
    (branch,) = derive_branches(ledger.entries)
    before = ledger.messages()
    fields = branch_discard_fields(branch, before)
    assert fields == {"reason": "branch-discard", "messages": before, "note": f"branch {branch.id}"}
    item = ledger.append(ProjectionItem, **fields)
    assert ledger.messages() == before
    (branch,) = derive_branches(ledger.entries)
    assert branch.status == "discarded" and branch.resolved_by == item.seq


def test_merge_appends_one_summary_message(ledger: ThreadLedger) -> None:
    rewound(ledger)
    (branch,) = derive_branches(ledger.entries)
    before = ledger.messages()
    item = ledger.append(ProjectionItem, **branch_merge_fields(branch, "tried b, c", before))
    summary = user(f"[Summary of discarded branch {branch.id}]\ntried b, c")
    assert ledger.messages() == [*before, summary]
    assert item.note == f"branch {branch.id}"
    (branch,) = derive_branches(ledger.entries)
    assert branch.status == "merged" and branch.resolved_by == item.seq


def test_a_resolved_branch_cannot_be_resolved_again_and_the_first_decision_stands(
    ledger: ThreadLedger,
) -> None:
    rewound(ledger)
    (branch,) = derive_branches(ledger.entries)
    discard = branch_discard_fields(branch, ledger.messages())
    ledger.append(ProjectionItem, **discard)
    (resolved,) = derive_branches(ledger.entries)
    with pytest.raises(ValueError, match="already discarded"):
        branch_merge_fields(resolved, "x", ledger.messages())
    with pytest.raises(ValueError, match="already discarded"):
        branch_discard_fields(resolved, ledger.messages())
    # Written anyway (e.g. by an older client): the first decision stands.
    ledger.append(ProjectionItem, reason="branch-merge", messages=[], note=discard["note"])
    assert derive_branches(ledger.entries)[0].status == "discarded"


def test_several_branches_resolve_independently(ledger: ThreadLedger) -> None:
    first = rewound(ledger)
    cell(ledger, 4, user("d"))
    second = ledger.append(
        ProjectionItem, reason="rewind", messages=[user("a"), assistant("A")], frames=[4]
    )
    b1, b2 = derive_branches(ledger.entries)
    assert (b1.id, b2.id) == (f"b{first.seq}", f"b{second.seq}")
    assert b2.messages == [user("d")] and b2.frames == [4]
    ledger.append(ProjectionItem, **branch_merge_fields(b2, "d", ledger.messages()))
    assert [b.status for b in derive_branches(ledger.entries)] == ["open", "merged"]


def test_notes_that_name_no_branch_are_ignored(ledger: ThreadLedger) -> None:
    item = rewound(ledger)
    for note in ["", "branch", f"branch b{item.seq}0", f"branch b{item.seq}x", "b1", "branch b999"]:
        ledger.append(ProjectionItem, reason="branch-discard", messages=[], note=note)
    assert derive_branches(ledger.entries)[0].status == "open"
    # The convention allows free text after the id.
    ledger.append(
        ProjectionItem, reason="branch-discard", messages=[], note=f"branch b{item.seq}: not needed"
    )
    assert derive_branches(ledger.entries)[0].status == "discarded"


def test_branch_id_of_note() -> None:
    assert branch_id_of_note("branch b12") == "b12"
    assert branch_id_of_note("branch b12: why") == "b12"
    assert branch_id_of_note("branch b12 why") == "b12"
    assert branch_id_of_note("branch b12x") is None
    assert branch_id_of_note("the branch b12") is None


def test_branches_survive_a_restart(tmp_path: Path) -> None:
    ledger = ThreadLedger(tmp_path, "t")
    rewound(ledger)
    (branch,) = derive_branches(ledger.entries)
    ledger.append(ProjectionItem, **branch_merge_fields(branch, "s", ledger.messages()))
    live = derive_branches(ledger.entries)
    ledger.close()
    assert derive_branches(read_entries(tmp_path / "t.jsonl")) == live
    again = ThreadLedger(tmp_path, "t")
    assert derive_branches(again.entries) == live
    again.close()
