"""Reading a record file that may be damaged: which records are whole, which bytes are not.

Owns the one rule every reader of a ledger file follows (opening it for appending, reading it
read-only, checking and repairing it): a record is a checksummed line whose sequence number is
higher than the record before it. Damage between two whole records costs only the records whose
bytes it covers; damage after the last whole record is the *tail*, which only the writer cuts.
Inside a damaged line (a flipped newline glues two records together) every whole record is still
found by its checksum terminator, so a single bad byte never costs a neighbour.

Must never: write, guess a record whose checksum fails, or report a lost record that is not lost.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .journal import CHECKSUM_FIELD, decode_record

# The end of a record: the checksum field closes every line. Inside a JSON string a quote is
# escaped, so this pattern cannot match record content.
_RECORD_END = re.compile(rb',"' + CHECKSUM_FIELD.encode() + rb'":"[0-9a-f]{8}"\}')
_RECORD_START = b'{"'
# How far past the end of one record a glued successor may start (a flipped newline is one byte;
# a few junk bytes are allowed, more is junk of its own).
_RESYNC_WINDOW = 64


@dataclass(frozen=True)
class Damage:
    """One run of bytes between whole records that is not a record."""

    offset: int
    """Byte offset in the file where the damage begins."""
    length: int
    """How many bytes are damaged."""
    lost: tuple[int, ...]
    """Sequence numbers of the records these bytes held (empty when no record was lost)."""
    reason: str
    """What was wrong with the first damaged bytes."""

    def describe(self) -> str:
        lost = _seq_ranges(self.lost)
        what = f"record(s) {lost} lost" if lost else "no record lost"
        return f"{self.length} damaged byte(s) at offset {self.offset} ({self.reason}): {what}"


@dataclass
class Scan:
    """Everything a reader learns from one pass over a record file."""

    records: list[dict[str, Any]] = field(default_factory=list)
    """The whole records, in file order."""
    lines: list[bytes] = field(default_factory=list)
    """Each whole record's exact bytes (newline included), parallel to `records`."""
    damaged: list[Damage] = field(default_factory=list)
    """Damage between whole records: it stays where it is and costs only what it covers."""
    tail_offset: int = 0
    """Where the whole records end; bytes from here on are a damaged tail (or nothing)."""
    tail_reason: str = ""
    """What was wrong with the tail, if there is one."""


def _pieces(data: bytes, start: int, end: int, has_newline: bool) -> list[tuple[int, int, Any]]:
    """The records and junk of one line `data[start:end]`, as (start, stop, record | reason)."""
    if not has_newline:
        # The writer's last `write` did not finish: whatever it holds is cut, never half-kept.
        return [(start, end, "torn last record (no newline)")]
    stop = end + 1
    try:
        return [(start, stop, decode_record(data[start:end]))]
    except ValueError as exc:
        first_error = str(exc)
    pieces: list[tuple[int, int, Any]] = []
    pos = start
    for match in _RECORD_END.finditer(data, start, end):
        candidates = [pos]
        window = data.find(_RECORD_START, pos + 1, min(match.end(), pos + _RESYNC_WINDOW))
        while window >= 0:
            candidates.append(window)
            window = data.find(_RECORD_START, window + 1, min(match.end(), pos + _RESYNC_WINDOW))
        for begin in candidates:
            try:
                record = decode_record(data[begin : match.end()])
            except ValueError:
                continue
            if begin > pos:
                pieces.append((pos, begin, first_error))
            pieces.append((begin, match.end(), record))
            pos = match.end()
            break
    if pos < stop:
        if pieces and isinstance(pieces[-1][2], dict) and pos == end:
            # The line ends exactly with a whole record: its newline is its own.
            last = pieces.pop()
            pieces.append((last[0], stop, last[2]))
        else:
            pieces.append((pos, stop, first_error if not pieces else "junk between records"))
    return pieces


def scan(data: bytes, *, start: int = 0, last_seq: int = 0) -> Scan:
    """Find every whole record of a record file and every run of damage around them.

    `start` and `last_seq` resume after a prefix already known to end, at a line boundary,
    with the record `last_seq` (a verified ledger checkpoint): only the rest is read."""
    result = Scan(tail_offset=start)
    bad_start: int | None = None
    bad_reason = ""
    offset = start
    while offset < len(data):
        end = data.find(b"\n", offset)
        has_newline = end >= 0
        end = end if has_newline else len(data)
        for begin, stop, what in _pieces(data, offset, end, has_newline):
            if isinstance(what, dict):
                seq = what.get("seq")
                if isinstance(seq, int) and not isinstance(seq, bool) and seq > last_seq:
                    if bad_start is not None:
                        lost = tuple(range(last_seq + 1, seq))
                        result.damaged.append(
                            Damage(bad_start, begin - bad_start, lost, bad_reason)
                        )
                        bad_start = None
                    result.records.append(what)
                    result.lines.append(
                        data[begin:stop]
                        if data[stop - 1 : stop] == b"\n"
                        else data[begin:stop] + b"\n"
                    )
                    last_seq = seq
                    result.tail_offset = stop
                    continue
                what = f"sequence {seq!r} out of order after {last_seq}"
            if bad_start is None:
                bad_start, bad_reason = begin, str(what)
        offset = end + 1
    if bad_start is not None:
        result.tail_reason = bad_reason
    return result


_SEQ_FIELD = re.compile(rb'"seq":(\d{1,12})[,}]')


def seqs_named_in(damaged: bytes, after: int) -> list[int]:
    """Sequence numbers a damaged tail still spells out (best effort: the damage may have hit
    the number itself, or a torn write may end before it)."""
    found = {int(m.group(1)) for m in _SEQ_FIELD.finditer(damaged)}
    return sorted(n for n in found if n > after)


def _seq_ranges(seqs: tuple[int, ...] | list[int]) -> str:
    """`3, 7-9` for (3, 7, 8, 9): readable even when a run of records was lost."""
    parts: list[str] = []
    for seq in sorted(seqs):
        if parts and seq == int(parts[-1].split("-")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{seq}"
        else:
            parts.append(str(seq))
    return ", ".join(parts)


seq_ranges = _seq_ranges


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a small JSON-lines log (an eviction log), oldest first: [] when there is
    none; a torn or foreign line (a crash mid-append) is skipped, the rest still read."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out
