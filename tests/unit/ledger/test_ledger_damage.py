"""A damaged record costs that record only: every boundary and every middle of a 50-record ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from logician_kernel.cli import main
from logician_kernel.durable.journal import encode_record
from logician_kernel.ledger.repair import RepairError, check, repair
from logician_kernel.ledger.thread_ledger import (
    FrameOpen,
    MessageEntry,
    Recovery,
    ThreadLedger,
    UnknownRecordError,
    read_entries,
)

RECORDS = 50


@pytest.fixture(scope="module")
def ledger_bytes(tmp_path_factory) -> tuple[bytes, list[int]]:
    """50 records of the kinds a session writes; the bytes and each record's start offset."""
    directory = tmp_path_factory.mktemp("src")
    ledger = ThreadLedger(directory, "t")
    frame = 0
    while len(ledger.entries) < RECORDS:
        frame += 1
        ledger.append(
            FrameOpen,
            frame=frame,
            execution_count=frame,
            cell_id=f"c{frame}",
            code=f"x = {frame}",
            pre_tree=None,
        )
        ledger.append(MessageEntry, frame=frame, message={"role": "user", "content": f"hé {frame}"})
    ledger.close()
    data = (directory / "t.jsonl").read_bytes()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")][:-1]
    assert len(starts) == RECORDS
    return data, starts


def _open_damaged(directory: Path, data: bytes, offset: int) -> ThreadLedger:
    damaged = bytearray(data)
    damaged[offset] ^= 0x21
    directory.mkdir()
    (directory / "t.jsonl").write_bytes(bytes(damaged))
    return ThreadLedger(directory, "t")


@pytest.mark.parametrize("where", ["boundary", "middle"])
def test_flipping_a_byte_of_any_record_loses_exactly_that_record(
    tmp_path: Path, ledger_bytes: tuple[bytes, list[int]], where: str
) -> None:
    data, starts = ledger_bytes
    ends = [*starts[1:], len(data)]
    for n, (start, end) in enumerate(zip(starts, ends, strict=True), start=1):
        offset = start if where == "boundary" else (start + end) // 2
        ledger = _open_damaged(tmp_path / f"r{n}", data, offset)
        damaged = bytearray(data)
        damaged[offset] ^= 0x21
        kept = [e.seq for e in ledger.entries if not isinstance(e, Recovery)]
        assert kept == [s for s in range(1, RECORDS + 1) if s != n], n
        recovery = ledger.entries[-1]
        assert isinstance(recovery, Recovery)
        side = Path(recovery.side_file or "")
        if n < RECORDS:
            # In the middle: reported by sequence number, its bytes copied aside, nothing cut.
            assert recovery.what == "damaged-record" and recovery.lost_seqs == [n]
            assert f"record(s) {n} lost" in recovery.detail and f"offset {start}" in recovery.detail
            assert side.read_bytes() == damaged[start:end]
            assert recovery.seq == RECORDS + 1  # numbers are never reused
        else:
            assert recovery.what == "torn-tail" and side.read_bytes() == damaged[start:]
            if b'"seq":50,' in damaged[start:]:  # unless the flip hit the number itself
                assert recovery.lost_seqs == [n] and f"record(s) {n} lost" in recovery.detail
        ledger.close()


def test_a_flipped_newline_glues_two_records_and_loses_neither(
    tmp_path: Path, ledger_bytes: tuple[bytes, list[int]]
) -> None:
    data, starts = ledger_bytes
    for n in (1, 17, 33):
        ledger = _open_damaged(tmp_path / f"n{n}", data, starts[n] - 1)
        assert [e.seq for e in ledger.entries[:RECORDS]] == list(range(1, RECORDS + 1))
        recovery = ledger.entries[-1]
        assert isinstance(recovery, Recovery) and recovery.lost_seqs == []
        assert "1 damaged byte(s)" in recovery.detail and "no record lost" in recovery.detail
        ledger.close()


def test_damage_is_reported_once_and_replay_skips_it_the_same_way(
    tmp_path: Path, ledger_bytes: tuple[bytes, list[int]]
) -> None:
    data, starts = ledger_bytes
    ledger = _open_damaged(tmp_path / "d", data, starts[9] + 30)
    ledger.append(MessageEntry, frame=None, message={"role": "user", "content": "after"})
    ledger.close()
    again = ThreadLedger(tmp_path / "d", "t")
    assert again.damaged == []  # already reported: not a second entry per open
    assert [e.seq for e in again.entries] == [*range(1, 10), *range(11, RECORDS + 3)]
    assert [e.seq for e in read_entries(tmp_path / "d" / "t.jsonl")] == [
        e.seq for e in again.entries
    ]
    again.close()


def test_repair_puts_back_what_an_old_cut_side_file_holds(
    tmp_path: Path, ledger_bytes: tuple[bytes, list[int]]
) -> None:
    """The old behaviour cut everything after a damaged record; repair restores what it can."""
    data, starts = ledger_bytes
    threads = tmp_path / ".logician" / "threads"
    threads.mkdir(parents=True)
    damaged = bytearray(data)
    damaged[starts[19] + 40] ^= 0x21  # record 20 damaged, 21-50 whole but cut
    (threads / f"t.jsonl.cut-20261201T000000000000Z-at-{starts[19]}").write_bytes(
        bytes(damaged[starts[19] :])
    )
    (threads / "t.jsonl").write_bytes(data[: starts[19]])
    old = ThreadLedger(threads, "t")  # the old version then recorded the cut as record 20
    old.append(Recovery, what="torn-tail", detail="cut (old version)")
    assert old.write_checkpoint()  # of the file repair is about to replace
    old.close()

    report = check(threads / "t.jsonl")
    assert sorted(report.recoverable) == list(range(21, RECORDS + 1)) and not report.conflicting
    assert main(["ledger", "check", "t", "--workspace", str(tmp_path)]) == 1

    assert main(["ledger", "repair", "t", "--workspace", str(tmp_path)]) == 0
    repaired = ThreadLedger(threads, "t")
    # The checkpoint of the replaced file went with it: no "does not match" notice, no leftover.
    assert repaired.checkpoint_notice is None
    assert not list(threads.glob("t.jsonl.checkpoint*"))
    assert [e.seq for e in repaired.entries] == list(range(1, RECORDS + 2))
    assert repaired.entries[19].kind == "recovery" and repaired.entries[-1].what == "repaired"
    original = {e.seq: e for e in read_entries(threads / f"{Path(report.path).name}")}
    assert original[35].model_dump() == repaired.entries[34].model_dump()
    repaired.close()
    assert main(["ledger", "check", "t", "--workspace", str(tmp_path)]) == 0


def test_repair_refuses_while_a_kernel_holds_the_thread(tmp_path: Path) -> None:
    from filelock import FileLock

    ThreadLedger(tmp_path, "t").close()
    with FileLock(tmp_path / "t.lock"), pytest.raises(RepairError, match="running kernel"):
        repair(tmp_path / "t.jsonl")


def test_ledger_command_names_a_missing_thread(tmp_path: Path, capsys) -> None:
    assert main(["ledger", "check", "nope", "--workspace", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and len(err.strip().splitlines()) == 1


def test_an_unknown_kind_with_a_valid_checksum_gets_upgrade_advice(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_bytes(encode_record({"seq": 1, "kind": "from-the-future"}))
    with pytest.raises(UnknownRecordError, match="upgrade logician_kernel") as info:
        ThreadLedger(tmp_path, "t")
    assert "from-the-future" in str(info.value) and "writable" not in str(info.value)
    # No damage was invented: the record is intact and nothing was cut.
    assert check(tmp_path / "t.jsonl").healthy
