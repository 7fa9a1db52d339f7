"""A ledger holds its history once: the journal keeps no records, entries share what they can.

The journal reads records back through its own descriptor instead of keeping them, so a
`.logician/` deleted under a running kernel is still rewritten whole (the checkpointed prefix
it never read included); a file changed in place under the kernel is refused, not read back as
if it were what the kernel wrote. Entries with the same fields share one set of field names;
copies and dumps behave as for any pydantic model.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from logician_kernel.durable.journal import JournalError
from logician_kernel.ledger import entries
from logician_kernel.ledger.entries import read_entry
from logician_kernel.ledger.thread_ledger import (
    FrameClose,
    FrameOpen,
    MessageEntry,
    ThreadLedger,
    read_entries,
)
from logician_kernel.types.path_states import Fingerprint, PathChange, PathState


def msg(text: str) -> dict[str, object]:
    return {"kind": "user", "content": [{"kind": "text", "text": text}]}


def _checkpointed(directory: Path, cells: int = 30) -> None:
    """A closed ledger of `cells` frames whose every record a checkpoint covers."""
    ledger = ThreadLedger(directory, "t")
    for f in range(1, cells + 1):
        ledger.append(
            FrameOpen, frame=f, execution_count=f, cell_id=None, code=f"c{f}", pre_tree=None
        )
        ledger.append(MessageEntry, frame=f, message=msg(f"cell {f}"))
        ledger.append(FrameClose, frame=f, outcome="ok", post_tree=None)
    assert ledger.write_checkpoint()
    ledger.close()


def test_a_deleted_ledger_is_rewritten_whole_with_the_prefix_it_never_read(
    tmp_path: Path,
) -> None:
    threads = tmp_path / ".logician" / "threads"
    _checkpointed(threads)
    ledger = ThreadLedger(threads, "t")
    ledger.append(MessageEntry, frame=None, message=msg("after the checkpoint"))
    assert ledger.entries.pending > 0  # the checkpointed prefix is still unread
    written = ledger.path.read_bytes()
    count = ledger.journal.count
    shutil.rmtree(tmp_path / ".logician")
    assert ledger.journal.vanished()

    ledger.journal.rewrite_from_memory()
    assert ledger.path.read_bytes() == written
    assert ledger.journal.count == count
    ledger.append(MessageEntry, frame=None, message=msg("after the rewrite"))
    ledger.close()
    seqs = [e.seq for e in read_entries(ledger.path)]
    assert seqs == list(range(1, count + 2))
    reopened = ThreadLedger(threads, "t")
    assert msg("after the rewrite") in reopened.messages()
    assert [e.seq for e in reopened.entries] == seqs
    reopened.close()


def test_a_ledger_edited_in_place_under_the_kernel_is_not_read_back_as_written(
    tmp_path: Path,
) -> None:
    _checkpointed(tmp_path)
    ledger = ThreadLedger(tmp_path, "t")
    data = bytearray(ledger.path.read_bytes())
    data[10] ^= 0x01
    with open(ledger.path, "r+b") as fh:  # the same file, not a replacement
        fh.write(data)
    with pytest.raises(JournalError, match="changed under the kernel"):
        ledger.journal.records  # noqa: B018
    with pytest.raises(JournalError, match="changed under the kernel"):
        list(ledger.entries)  # the checkpointed prefix is read from the file
    ledger.close()


def _close(seq: int, sha: str) -> FrameClose:
    record = FrameClose(
        seq=seq,
        parent=seq - 1,
        time="2026-12-05T09:00:00+00:00",
        frame=seq,
        outcome="ok",
        post_tree=None,
        changes=[
            PathChange(
                path="a.txt",
                before=PathState(kind="absent"),
                after=PathState(kind="blob", mode="100644", sha=sha),
            )
        ],
    ).model_dump(mode="json")
    return read_entry(record)  # type: ignore[return-value]


def test_entries_read_alike_keep_their_own_fields_through_copies(tmp_path: Path) -> None:
    a, b = _close(2, "a" * 40), _close(3, "b" * 40)
    assert a.model_fields_set == b.model_fields_set
    copied = a.model_copy(update={"capture_error": "x"})
    assert copied.capture_error == "x" and "capture_error" in copied.model_fields_set
    change = a.changes[0].model_copy(update={"tool": "bash"})
    assert change.tool == "bash"
    assert b.model_fields_set == a.model_fields_set  # neither copy reached the others
    assert b.changes[0].model_fields_set == a.changes[0].model_fields_set
    assert a.model_dump(exclude_unset=True) == a.model_dump()  # every field was read
    # A replay reads the same entries: equal to what the ledger appended.
    ledger = ThreadLedger(tmp_path, "t")
    opened = ledger.append(
        FrameOpen, frame=1, execution_count=1, cell_id=None, code="x = 1", pre_tree=None
    )
    ledger.close()
    reopened = ThreadLedger(tmp_path, "t")
    assert reopened.entries[0] == opened
    reopened.close()


def _changes(n: int, text: str, start: int = 0) -> list[PathChange]:
    """`n` rewrites of d/f<i>.txt, each state with its fingerprint, the next rewrite's before
    equal (not identical) to this one's after."""
    out = []
    for i in range(start, start + n):
        states = [
            PathState(
                kind="blob",
                mode="100644",
                sha=f"{k}{i:039x}",
                fingerprint=Fingerprint(size=k, mtime_ns=k * 1000 + i, mode=0o100644),
                perms=0o644,
            )
            for k in (1, 2)
        ]
        out.append(
            PathChange(
                path=f"d/f{i}.txt",
                before=states[0],
                after=states[1],
                by="cell",
                basis=" ".join((text, "basis")),  # equal, not identical
            )
        )
    return out


def test_a_large_entry_appended_as_built_shares_its_field_sets_and_equal_states(
    tmp_path: Path,
) -> None:
    """A frame's close of thousands of paths is held as built: its models must hold one set
    of field names per class and one object per equal path state, or 5,000 changes keep
    megabytes of copies; and what the entry says must be what was appended."""
    entries._RECENT.clear()  # what earlier tests left could fill it between the two appends
    ledger = ThreadLedger(tmp_path, "t")
    first = ledger.append(
        FrameClose, frame=1, outcome="ok", post_tree=None, changes=_changes(300, "one")
    )
    dumped = first.model_dump()
    again = _changes(300, "two")
    second = ledger.append(FrameClose, frame=2, outcome="ok", post_tree=None, changes=again)
    assert first.model_dump() == dumped  # sharing changed no value
    for entry in (first, second):
        changes = entry.changes
        assert len({id(c.model_fields_set) for c in changes}) == 1
        assert len({id(c.before.fingerprint.model_fields_set) for c in changes}) == 1
        assert changes[0].model_fields_set == set(PathChange.model_fields)
        assert len({id(c.basis) for c in changes}) == 1  # equal strings held once
    # The second frame's states equal the first's: held once across the two entries.
    firsts = {c.after.sha: c.after for c in first.changes}
    seconds = {c.after.sha: c.after for c in second.changes}
    assert firsts.keys() == seconds.keys()
    assert all(firsts[sha] is seconds[sha] for sha in firsts)
    ledger.close()
    reopened = ThreadLedger(tmp_path, "t")
    assert [e.model_dump() for e in reopened.entries] == [dumped, second.model_dump()]
    reopened.close()
