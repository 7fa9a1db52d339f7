"""`logician ledger repair` exits 0 only when the ledger checks clean afterwards (issue 28);
otherwise it exits 1 and says which records it could not restore and where their bytes are.
Before: a repair with nothing to put back exited 0, printed the same line as `check`, and a
`check` after it still exited 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from logician_kernel.cli import main
from logician_kernel.durable.test_hooks import FAULT
from logician_kernel.ledger.repair import check
from logician_kernel.ledger.thread_ledger import MessageEntry, ThreadLedger

RECORDS = 20


def _damaged_ledger(tmp_path: Path) -> tuple[Path, bytes, int, int]:
    """A ledger of 20 records whose 10th is damaged (a flipped byte), never opened since:
    (threads dir, the damaged bytes of record 10, its offset, the file's bytes)."""
    threads = tmp_path / ".logician" / "threads"
    ledger = ThreadLedger(threads, "t")
    for n in range(RECORDS):
        ledger.append(MessageEntry, frame=None, message={"role": "user", "content": f"m{n}"})
    ledger.close()
    path = threads / "t.jsonl"
    data = bytearray(path.read_bytes())
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")][:-1]
    start, end = starts[9], starts[10]
    data[start + 30] ^= 0x21
    path.write_bytes(bytes(data))
    return threads, bytes(data[start:end]), start, len(data)


def _ledger(args: list[str], tmp_path: Path) -> int:
    return main(["ledger", *args, "t", "--workspace", str(tmp_path)])


def test_repair_of_an_unrestorable_record_cleans_the_file_and_names_where_its_bytes_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    threads, lost_bytes, offset, _ = _damaged_ledger(tmp_path)
    assert _ledger(["check"], tmp_path) == 1
    capsys.readouterr()
    assert _ledger(["repair"], tmp_path) == 0
    said = capsys.readouterr().out
    side = threads / f"t.jsonl.damaged-at-{offset}"
    assert "could not restore record(s) 10" in said and str(side) in said, said
    assert "now checks clean" in said, said
    assert side.read_bytes() == lost_bytes  # the damaged bytes, kept exactly
    assert _ledger(["check"], tmp_path) == 0
    reopened = ThreadLedger(threads, "t")
    seqs = [e.seq for e in reopened.entries]
    assert seqs[: RECORDS - 1] == [*range(1, 10), *range(11, RECORDS + 1)]  # every whole one
    assert reopened.entries[-1].what == "repaired" and reopened.entries[-1].lost_seqs == [10]
    reopened.close()


def test_a_repair_that_cannot_be_written_exits_1_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    threads, _, offset, size = _damaged_ledger(tmp_path)
    before = (threads / "t.jsonl").read_bytes()
    monkeypatch.setenv(FAULT, "rename:1:ENOSPC")  # the disk fills as the new file goes in
    assert _ledger(["repair"], tmp_path) == 1
    said = capsys.readouterr().out
    assert "could not restore record(s) 10" in said and f"damaged-at-{offset}" in said, said
    assert "could not be written" in said and "No space left on device" in said, said
    assert "still does not check clean" in said, said
    monkeypatch.delenv(FAULT)
    assert (threads / "t.jsonl").read_bytes() == before and len(before) == size
    assert not list(threads.glob(".t.jsonl.repair-tmp"))
    assert not check(threads / "t.jsonl").healthy
    assert _ledger(["repair"], tmp_path) == 0  # space back: the same repair goes through
