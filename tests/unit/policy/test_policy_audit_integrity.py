"""The audit log's integrity: checksummed records (the ledger's record format), damage named
by `%logician audit` instead of "no decisions", written content kept as a digest and a size,
and the file private to its owner."""

from __future__ import annotations

import asyncio
import hashlib
import stat

from logician_kernel.config._schema import PermissionSettings
from logician_kernel.policy import AUDIT_FILE, AuditEntry, AuditLog, PermissionPolicy, PolicyGate
from logician_kernel.tools import default_tools
from logician_kernel.types import ToolCall


def _entry(call_id: str) -> AuditEntry:
    return AuditEntry(
        time="2025-01-01T00:00:00+00:00",
        tool="read",
        action="allow",
        allowed=True,
        routine=True,
        call_id=call_id,
    )


def test_a_flipped_byte_is_reported_never_no_decisions(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(_entry("only"))
    data = bytearray(log.path.read_bytes())
    data[data.index(b"only")] ^= 0x01  # one bit of one byte
    log.path.write_bytes(bytes(data))
    report = log.report(20)
    assert "WARNING" in report and "damaged or was altered" in report
    assert "line 1 (checksum mismatch)" in report
    assert "No permission decisions recorded yet." not in report


def test_damage_in_the_middle_is_named_and_the_rest_still_shown(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    for i in range(5):
        log.record(_entry(f"c{i}"))
    lines = log.path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"allowed":true', b'"allowed":false')
    log.path.write_bytes(b"".join(lines))
    reading = log.read(10)
    assert reading.damaged == [(3, "checksum mismatch")]
    assert [e.call_id for e in reading.entries] == ["c0", "c1", "c3", "c4"]
    report = log.report()
    assert "line 3 (checksum mismatch)" in report and report.count("allowed (routine)") == 4


def test_an_intact_log_has_no_warning_and_old_unchecked_lines_are_flagged(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(_entry("a"))
    assert log.read().intact and "WARNING" not in log.report()
    with log.path.open("ab") as fh:
        fh.write(_entry("legacy").model_dump_json().encode() + b"\n")
    reading = log.read()
    assert reading.unverified == [2] and [e.call_id for e in reading.entries] == ["a", "legacy"]
    assert "carry no checksum" in log.report()


def test_written_content_is_kept_as_digest_and_size_and_the_file_is_private(tmp_path):
    policy = PermissionPolicy(PermissionSettings(mode="full-auto"), workspace=tmp_path)
    gate = PolicyGate(policy, AuditLog.for_workspace(tmp_path))
    content = "DB_PASSWORD=hunter2-hunter2\nprint('hello')\n"
    call = ToolCall(id="w1", name="write", arguments={"path": "a.py", "content": content})
    asyncio.run(gate.check(call, default_tools()["write"]))
    path = tmp_path / AUDIT_FILE
    text = path.read_text()
    assert "hunter2" not in text and "print('hello')" not in text
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]
    assert f"sha256:{digest} ({len(content)} bytes)" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_status_count_of_problems_follows_the_file(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    assert log.problem_count() == 0  # no log yet
    log.record(_entry("a"))
    log.record(_entry("b"))
    assert log.problem_count() == 0
    data = log.path.read_bytes().replace(b'"b"', b'"c"')
    log.path.write_bytes(data)
    assert log.problem_count() == 1
    log.record(_entry("d"))  # appending does not hide the damage
    assert log.problem_count() == 1


def test_a_torn_tail_is_cut_to_a_side_file_by_the_ledgers_writer(tmp_path):
    from logician_kernel.durable.journal import Journal, decode_record, encode_record

    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(_entry("a"))
    whole = len(log.path.read_bytes())
    torn = b'{"time":"2025-01-01T00:00:00+00:00","tool":"re'  # a crash mid-append
    with log.path.open("ab") as fh:
        fh.write(torn)
    log.record(_entry("b"))
    lines = log.path.read_bytes().splitlines()
    assert [decode_record(line)["call_id"] for line in lines] == ["a", "b"]
    (side,) = tmp_path.glob("audit.jsonl.cut-*")
    assert side.read_bytes() == torn and side.name.endswith(f"-at-{whole}")
    assert stat.S_IMODE(side.stat().st_mode) == 0o600
    report = log.report()
    assert "torn record(s)" in report and str(side) in report
    assert report.count("allowed (routine)") == 2 and log.problem_count() == 1

    # The thread ledger's journal cuts the same tail the same way when it opens.
    ledger = tmp_path / "thread.jsonl"
    first = encode_record({"seq": 1})
    ledger.write_bytes(first + torn)
    journal = Journal(ledger)
    assert journal.recovery is not None and journal.recovery.cut_offset == len(first)
    (ledger_side,) = tmp_path.glob("thread.jsonl.cut-*")
    assert ledger_side.read_bytes() == torn and ledger_side.name.endswith(f"-at-{len(first)}")
    journal.close()


def test_a_flipped_byte_stays_reported_after_later_appends(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(_entry("a"))
    data = bytearray(log.path.read_bytes())
    data[data.index(b'"a"') + 1] ^= 0x01
    log.path.write_bytes(bytes(data))
    log.record(_entry("b"))  # a whole damaged record is not torn: it stays, and stays reported
    report = log.report()
    assert "line 1 (checksum mismatch)" in report and "No permission decisions" not in report
    assert [e.call_id for e in log.recent()] == ["b"]
    assert not list(tmp_path.glob("audit.jsonl.cut-*"))
