"""The append-only record file under every ledger: one checksummed JSON record per line.

Owns the bytes of one `.jsonl` file: opening it (cutting a torn or corrupt tail back to the last
valid record, keeping the cut bytes in a side file), appending records, and fsync at the
boundaries the caller chooses. Records are plain dicts here; their meaning belongs to the
ledger above.

Must never: rewrite or drop a valid record, lose cut bytes, or fsync per byte of output.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

CHECKSUM_FIELD = "crc"


class JournalError(OSError):
    """The record file cannot be opened or written; the message names the file."""


@dataclass(frozen=True)
class TailRecovery:
    """What opening the file had to cut, and where the cut bytes were kept."""

    valid_records: int
    """How many records survived."""
    cut_offset: int
    """Byte offset where the damage began (the file now ends here)."""
    cut_bytes: int
    """How many bytes were cut."""
    side_file: str
    """Where the cut bytes were saved, byte for byte."""
    reason: str
    """What was wrong with the first cut record."""


def encode_record(record: dict[str, Any]) -> bytes:
    """Canonical JSON line with a CRC-32 over the record without its checksum."""
    body = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    crc = f"{zlib.crc32(body.encode()):08x}"
    return (body[:-1] + f',"{CHECKSUM_FIELD}":"{crc}"}}\n').encode()


def decode_record(line: bytes) -> dict[str, Any]:
    """Parse and verify one line (without its newline); ValueError says what is wrong."""
    try:
        record = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(record, dict) or CHECKSUM_FIELD not in record:
        raise ValueError("no checksum")
    crc = record.pop(CHECKSUM_FIELD)
    body = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if f"{zlib.crc32(body.encode()):08x}" != crc:
        raise ValueError("checksum mismatch")
    return record


class Journal:
    """One append-only record file, opened for appending after tail recovery."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.records: list[dict[str, Any]] = []
        self.recovery: TailRecovery | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._load()
            self._fh = open(self.path, "ab")  # noqa: SIM115 - held for the session
        except OSError as exc:
            raise JournalError(f"cannot open ledger {self.path}: {exc.strerror or exc}") from exc

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        offset = 0
        reason = ""
        while offset < len(data):
            end = data.find(b"\n", offset)
            if end < 0:
                reason = "torn last record (no newline)"
                break
            try:
                record = decode_record(data[offset:end])
            except ValueError as exc:
                reason = f"record {len(self.records) + 1}: {exc}"
                break
            if record.get("seq") != len(self.records) + 1:
                reason = (
                    f"record {len(self.records) + 1}: sequence {record.get('seq')!r} out of order"
                )
                break
            self.records.append(record)
            offset = end + 1
        if offset < len(data):
            self._cut(data, offset, reason)

    def _cut(self, data: bytes, offset: int, reason: str) -> None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        side = self.path.with_name(f"{self.path.name}.cut-{stamp}-at-{offset}")
        with open(side, "wb") as fh:
            fh.write(data[offset:])
            fh.flush()
            os.fsync(fh.fileno())
        with open(self.path, "r+b") as fh:
            fh.truncate(offset)
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(self.path.parent)
        self.recovery = TailRecovery(
            valid_records=len(self.records),
            cut_offset=offset,
            cut_bytes=len(data) - offset,
            side_file=str(side),
            reason=reason,
        )

    def append(self, record: dict[str, Any], *, durable: bool = False) -> None:
        """Write one record (one `write` call, so a crash tears at most this record)."""
        line = encode_record(record)
        try:
            self._fh.write(line)
            self._fh.flush()
            if durable:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise JournalError(
                f"cannot append to ledger {self.path}: {exc.strerror or exc}"
            ) from exc
        self.records.append(record)

    def sync(self) -> None:
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
