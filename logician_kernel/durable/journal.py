"""The append-only record file under every ledger: one checksummed JSON record per line.

Owns the bytes of one `.jsonl` file: opening it (cutting a torn or corrupt tail back to the last
valid record, keeping the cut bytes in a side file; damage between valid records is skipped in
place and costs only the records it covers, see `journal_scan`), appending records, and fsync at the
boundaries the caller chooses. Records are plain dicts here; their meaning belongs to the
ledger above. The journal keeps no record in memory: what opening read is handed to the ledger
once, and every later read comes back from the file through the journal's own descriptor,
verified against the running CRC-32 (the descriptor still reaches the file after its path is
deleted, so `rewrite_from_memory` needs no copy either). The permission audit log appends through the same `append` in `shared` mode: a
file other processes append to as well, reopened per record, whose torn tail (a crash
mid-append, here or elsewhere) is cut to a side file just before the next record is written.

Must never: rewrite or drop a valid record, lose cut bytes, or fsync per byte of output.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import re
import zlib
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .journal_scan import Damage

from .fsync import durable_fsync, durable_write, fsync_dir
from .private import open_private, private_dir
from .test_hooks import arms_fsync_kill, stop_before_fsync

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
    lost: tuple[int, ...] = ()
    """Sequence numbers the cut bytes still spell out (best effort)."""


@dataclass(frozen=True)
class Resume:
    """A point opening may start reading from: the file's first `offset` bytes, whose CRC-32
    is `crc`, hold `count` whole records ending with sequence number `last_seq`."""

    offset: int
    """Bytes covered; always the end of a line."""
    count: int
    """Whole records in those bytes."""
    last_seq: int
    """Sequence number of the last of them."""
    crc: int
    """CRC-32 of those bytes, exactly as they are on disk."""


_CRC_TAIL = re.compile(rb'(.*),"' + CHECKSUM_FIELD.encode() + rb'":"([0-9a-f]{8})"\}', re.S)


def encode_record(record: dict[str, Any]) -> bytes:
    """One JSON line ending in a CRC-32 of the record's bytes without it.

    ASCII-only JSON: any text, lone surrogates included (tool output decoded with
    `surrogateescape` has them), round-trips exactly, and the file is valid UTF-8. Keys stay in
    the record's order (a model's fields in their declared order): nothing compares two
    encodings of records built apart, and sorting the keys of a frame's 5,000 changes took
    half the encoding's time. A record read back and encoded again gives the same bytes.
    """
    body = json.dumps(record, separators=(",", ":"), ensure_ascii=True).encode()
    return body[:-1] + b',"%s":"%08x"}\n' % (CHECKSUM_FIELD.encode(), zlib.crc32(body))


def decode_record(line: bytes) -> dict[str, Any]:
    """Verify and parse one line (without its newline); ValueError says what is wrong.

    The checksum covers the line's own bytes, so verification never depends on how a JSON
    library would re-serialise the record.
    """
    match = _CRC_TAIL.fullmatch(line)
    if match is None:
        raise ValueError("no checksum")
    body = match.group(1) + b"}"
    if zlib.crc32(body) != int(match.group(2), 16):
        raise ValueError("checksum mismatch")
    try:
        record = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    return record


class Journal:
    """One append-only record file, opened for appending after tail recovery.

    `shared=True` is for a file several processes append to (the audit log): nothing is read
    or held open until the first append, and each append opens the file, cuts a torn tail the
    way opening does, writes and fsyncs."""

    def __init__(self, path: Path, *, shared: bool = False, resume: Resume | None = None) -> None:
        self.path = Path(path)
        self._loaded: list[dict[str, Any]] = []  # what opening read, until `take_loaded`
        self._count = 0
        self._last_resumed = b""  # the resumed prefix's last line, without its newline
        self.resumed: Resume | None = None
        """The verified prefix opening skipped (its records are read only when asked for)."""
        self.resume_error: str | None = None
        """Why `resume` was not used (the prefix no longer matches it), if it was given."""
        self.size = 0
        """Bytes in the file (what this journal has read or written)."""
        self.crc = 0
        """CRC-32 of those bytes: what a checkpoint records to be verified on the next open."""
        self.recovery: TailRecovery | None = None
        self.damaged: list[tuple[Damage, str]] = []
        """Damage between whole records, each with the side file holding a copy of its bytes."""
        self.shared = shared
        self._failed: str | None = None
        self._synced = 0  # bytes the last fsync covered (for the test hook)
        self._kill_armed = False  # test-only: die before the next fsync (`durable/test_hooks.py`)
        if shared:
            return
        try:
            private_dir(self.path.parent)
            self._load(resume)
            # Held for the session; created 0600: the ledger holds the whole conversation.
            self._fh = _open_append(self.path)
            if os.fstat(self._fh.fileno()).st_mode & 0o077:  # a ledger from before 0600 files
                os.fchmod(self._fh.fileno(), 0o600)
        except OSError as exc:
            raise JournalError(f"cannot open ledger {self.path}: {exc.strerror or exc}") from exc

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every whole record, in file order, read back from the file (`read_back`)."""
        from .journal_scan import scan

        return scan(self.read_back()).records

    def read_back(self) -> bytes:
        """The bytes this journal has read or written, read again through its own descriptor
        (which reaches the file even once its path is deleted or replaced); `JournalError` when
        they are no longer the bytes written (the file was truncated or edited in place)."""
        # Another thread may append meanwhile (`size` and `crc` then move on together, not at
        # once): a mismatch is only believed when it is seen again.
        for _ in range(5):
            size, crc = self.size, self.crc
            chunks, offset = [], 0
            while offset < size:
                chunk = os.pread(self._fh.fileno(), min(size - offset, 1 << 26), offset)
                if not chunk:
                    break
                chunks.append(chunk)
                offset += len(chunk)
            data = b"".join(chunks)
            if len(data) == size and zlib.crc32(data) == crc:
                return data
        raise JournalError(
            f"ledger {self.path} changed under the kernel: its first {size} bytes are not the "
            "ones this kernel read and wrote"
        )

    def take_loaded(self) -> list[dict[str, Any]]:
        """The records opening read (those after the resumed prefix, or all of them), handed
        over once: the journal keeps no copy."""
        loaded, self._loaded = self._loaded, []
        return loaded

    @property
    def count(self) -> int:
        """How many whole records the file holds, without reading any."""
        return self._count

    def last_resumed_record(self) -> dict[str, Any]:
        """The last record of the resumed prefix, decoded on its own (the prefix is not read)."""
        if self.resumed is None:
            raise ValueError("no prefix was resumed")
        return decode_record(self._last_resumed)

    def _load(self, resume: Resume | None = None) -> None:
        from .journal_scan import scan  # the scanner reads records with this module's codec

        if not self.path.exists():
            if resume is not None:
                self.resume_error = "the ledger file is gone"
            return
        data = self.path.read_bytes()
        start, last_seq = 0, 0
        if resume is not None:
            self.resume_error = _mismatch(data, resume)
            if self.resume_error is None:
                start, last_seq = resume.offset, resume.last_seq
                self.resumed = resume
                end = resume.offset - 1
                self._last_resumed = data[data.rfind(b"\n", 0, end) + 1 : end]
        found = scan(data, start=start, last_seq=last_seq)
        self._loaded = found.records
        self._count = (resume.count if self.resumed and resume else 0) + len(found.records)
        # Damage between whole records stays in place (nothing valid is ever rewritten); a copy
        # of its bytes goes to a side file named by its offset, so reopening never duplicates it.
        for damage in found.damaged:
            side = self.path.with_name(f"{self.path.name}.damaged-at-{damage.offset}")
            if not side.exists():
                write_durably(side, data[damage.offset : damage.offset + damage.length])
            self.damaged.append((damage, str(side)))
        if found.tail_offset < len(data):
            last = found.records[-1].get("seq", 0) if found.records else last_seq
            self._cut(data, found.tail_offset, found.tail_reason, last)
        self.size = found.tail_offset if found.tail_offset < len(data) else len(data)
        self._synced = self.size  # what an earlier session wrote counts as on disk
        self.crc = (
            zlib.crc32(data[start : self.size], resume.crc)
            if self.resumed and resume
            else zlib.crc32(data[: self.size])
        )

    def _cut(self, data: bytes, offset: int, reason: str, last: object = 0) -> None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        side = self.path.with_name(f"{self.path.name}.cut-{stamp}-at-{offset}")
        write_durably(side, data[offset:])
        with open(self.path, "r+b") as fh:
            fh.truncate(offset)
            fh.flush()
            os.fsync(fh.fileno())
        fsync_dir(self.path.parent)
        from .journal_scan import seqs_named_in

        self.recovery = TailRecovery(
            valid_records=self.count,
            cut_offset=offset,
            cut_bytes=len(data) - offset,
            side_file=str(side),
            reason=reason,
            lost=tuple(seqs_named_in(data[offset:], last if isinstance(last, int) else 0)),
        )

    def append(
        self, record: dict[str, Any], *, durable: bool = False, read_back: bool = True
    ) -> dict[str, Any] | None:
        """Write one record (one `write` call, so a crash tears at most this record).

        Returns the record as it now reads back from the file, so what callers keep in memory
        is exactly what a replay will see (tuples become lists, `inf` stays `inf`); None with
        `read_back=False`, for a caller whose record reads back as it is (`exact_in_json`).
        """
        if self._failed is not None and not self.shared:
            raise JournalError(
                f"ledger {self.path} refuses appends after a failed write ({self._failed}); "
                "restart the kernel: reopening cuts the torn record and keeps every whole one"
            )
        line = encode_record(record)
        good = (self.size, self.crc)
        try:
            if self.shared:
                self._append_shared(line, record.get("kind"))
            else:
                write_all(self._fh.fileno(), line)
                self.size += len(line)
                self._count += 1
                self.crc = zlib.crc32(line, self.crc)
                if arms_fsync_kill(record.get("kind")):
                    self._kill_armed = True
                if durable:
                    self._fsync()
        except OSError as exc:
            # Whatever part of the line reached the file is a torn record: appending after
            # it would put whole records behind damage. The caller is told it is not recorded,
            # so a record whose fsync failed is not kept either: `heal` cuts back to `good`.
            self.size, self.crc = good
            self._failed = exc.strerror or str(exc)
            raise JournalError(f"cannot append to ledger {self.path}: {self._failed}") from exc
        return decode_record(line[:-1]) if read_back else None

    @property
    def failed(self) -> str | None:
        """Why the last append failed, until `heal` succeeds; None while appends work."""
        return self._failed

    def heal(self) -> str | None:
        """After a failed append, accept appends again: the bytes past the last whole record
        (a torn line, or one whose fsync failed) go to an `.unwritten-*` side file and are cut, the file is
        reopened. Returns the side file (None when nothing had reached the file); raises
        `JournalError` while it still cannot (the disk is still full), staying failed."""
        if self._failed is None or self.shared:
            return None
        side = None
        try:
            with contextlib.suppress(OSError):  # unbuffered: there is nothing left to flush
                self._fh.close()
            fd = open_private(self.path, os.O_RDWR)
            try:
                extra = os.fstat(fd).st_size - self.size
                if extra > 0:
                    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
                    # Not a `.cut-` file: its record was reported as not written (the caller
                    # acted on that), so `ledger repair` must never put it back.
                    path = self.path.with_name(f"{self.path.name}.unwritten-{stamp}-at-{self.size}")
                    write_durably(path, os.pread(fd, extra, self.size))
                    side = str(path)
                os.ftruncate(fd, self.size)
                os.fsync(fd)
            finally:
                os.close(fd)
            self._fh = _open_append(self.path)
        except OSError as exc:
            raise JournalError(
                f"ledger {self.path} still cannot be written "
                f"({exc.strerror or exc}); the first cut: {self._failed}"
            ) from exc
        self._failed = None
        self._synced = self.size
        return side

    def vanished(self) -> bool:
        """Whether the file this journal appends to is no longer at its path (deleted or
        replaced, e.g. `rm -rf .logician` in a cell): appends would reach no one."""
        try:
            return os.stat(self.path).st_ino != os.fstat(self._fh.fileno()).st_ino
        except OSError:
            return True

    def rewrite_from_memory(self) -> None:
        """Write every whole record to a new file at its path and append there (after the
        file was deleted or replaced under the kernel).

        The records are read back through the descriptor still open on the old file
        (`read_back`), so the new file is byte for byte what the old one held (damage skipped
        on open excepted); nothing is kept in memory for this."""
        from .journal_scan import scan

        lines = scan(self.read_back()).lines
        private_dir(self.path.parent)
        tmp = self.path.with_name(f".{self.path.name}.rewrite-tmp")
        data = b"".join(lines)
        self.size, self.crc, self._count = len(data), zlib.crc32(data), len(lines)
        write_durably(tmp, data)
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)
        self._synced = self.size
        self._fh.close()
        self._fh = _open_append(self.path)
        self._failed = None  # the new file holds exactly the records in memory

    def _append_shared(self, line: bytes, kind: object) -> None:
        # Always durable: a shared file's record must be on disk before what it records runs.
        created = not self.path.exists()
        if created:
            private_dir(self.path.parent)
        fd = open_private(self.path, os.O_RDWR | os.O_APPEND)
        try:
            # Another process may be cutting the same torn tail: without the lock its truncate
            # could take away a record written here just after our own cut.
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = os.pread(fd, size, 0)
                offset = data.rfind(b"\n") + 1
                self._cut(data, offset, "torn last record (no newline)")
                assert self.recovery is not None
                # Records are not kept in memory here: count the lines the cut left.
                self.recovery = replace(self.recovery, valid_records=data.count(b"\n", 0, offset))
            write_all(fd, line)
            if arms_fsync_kill(kind):
                stop_before_fsync(self.path, size)
            durable_fsync(fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.path.parent)

    def sync(self) -> None:
        if self.shared:
            return  # every shared append is already fsynced
        self._fsync()

    def _fsync(self) -> None:
        if self._kill_armed:
            stop_before_fsync(self.path, self._synced)
        durable_fsync(self._fh.fileno())
        self._synced = self.size

    def close(self) -> None:
        if not self.shared:
            self._fh.close()


def _open_append(path: Path) -> io.FileIO:
    """The ledger, opened for appending without a buffer: a failed write leaves nothing
    behind in memory to reach the file later, behind records written after it. Readable too:
    `Journal.read_back` reads the records through it instead of keeping them in memory."""
    return io.FileIO(open_private(path, os.O_RDWR | os.O_APPEND), "ab")


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` (a full disk may take part of it: the rest then raises)."""
    view = memoryview(data)
    while view:
        view = view[durable_write(fd, view) :]


def _mismatch(data: bytes, resume: Resume) -> str | None:
    """Why the file's first bytes are not the prefix `resume` describes (None: they are)."""
    if resume.offset > len(data):
        return f"the ledger is shorter ({len(data)} bytes) than the {resume.offset} it covers"
    if resume.offset and data[resume.offset - 1 : resume.offset] != b"\n":
        return f"byte {resume.offset} of the ledger is not the end of a record"
    if zlib.crc32(data[: resume.offset]) != resume.crc:
        return f"the ledger's first {resume.offset} bytes changed since it was written"
    return None


def write_durably(path: Path, data: bytes) -> None:
    """A side file with the bytes a repair may need, created 0600 and on disk before we go on."""
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    try:
        write_all(fd, data)
        durable_fsync(fd)
    finally:
        os.close(fd)
