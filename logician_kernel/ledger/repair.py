"""Checking a thread's ledger and putting recoverable records back from its side files.

Owns `logician ledger check|repair` and `%logician ledger`: what is damaged (which sequence
numbers were lost, where their bytes went), and which records the side files still hold whole.
A repair is the one place a ledger file is rewritten, so it is explicit, takes the thread's lock
(no kernel may be appending), keeps the file it replaces byte for byte, and records itself.

Must never: drop a whole record, put back a record whose checksum fails, or give a recovered
record a sequence number that another record already has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock, Timeout

from ..durable.fsync import durable_replace, fsync_dir
from ..durable.journal import write_durably
from ..durable.journal_scan import Damage, Scan, scan, seq_ranges, seqs_named_in

SIDE_FILE_KINDS = (".cut-", ".damaged-at-")
"""Side files a ledger's damage was saved to (tails cut on open, damage skipped in place)."""


class RepairError(OSError):
    """The ledger cannot be checked or repaired; the message names the file and why."""


@dataclass
class LedgerReport:
    """What a check found, and (after a repair) what it put back."""

    path: Path
    """The ledger file."""
    records: int = 0
    """Whole records in the file."""
    last_seq: int = 0
    """The highest sequence number in the file."""
    damaged: list[Damage] = field(default_factory=list)
    """Damage between whole records."""
    tail: tuple[int, int, str] | None = None
    """A damaged tail: (offset, bytes, reason); the next kernel start cuts it."""
    recoverable: dict[int, bytes] = field(default_factory=dict)
    """Whole records in side files whose sequence number is free, by sequence number."""
    conflicting: list[tuple[int, str]] = field(default_factory=list)
    """Whole records in side files whose number another record has: (seq, side file)."""
    restored: list[int] = field(default_factory=list)
    """Sequence numbers a repair put back."""
    backup: str | None = None
    """Where a repair kept the file it replaced."""
    unrestored: list[tuple[list[int], str]] = field(default_factory=list)
    """Records a repair could not put back (no side file holds them whole): their sequence
    numbers and the side file keeping their bytes."""
    error: str | None = None
    """Why a repair could not finish (the ledger is then as it was)."""
    clean_after: bool | None = None
    """After a repair: whether the file then checks clean (`logician ledger repair` exits 0
    only then); None for a check."""

    def lines(self) -> list[str]:
        """The report for a terminal or a notebook, one finding a line."""
        out = [f"{self.path}: {self.records} whole record(s), last sequence number {self.last_seq}"]
        out += [f"  damaged: {d.describe()}" for d in self.damaged]
        if self.tail is not None:
            offset, size, reason = self.tail
            out.append(
                f"  damaged tail: {size} byte(s) at offset {offset} ({reason}); "
                "cut into a side file when a kernel next opens the thread"
            )
        if self.restored:
            out.append(
                f"  restored record(s) {seq_ranges(self.restored)} from the side files; "
                f"the previous file is kept as {self.backup}"
            )
        elif self.backup:
            out.append(
                f"  rewrote the file with its whole records only; the previous file is "
                f"kept as {self.backup}"
            )
        elif self.recoverable:
            out.append(
                f"  recoverable from side files: record(s) {seq_ranges(list(self.recoverable))}"
                " (run `logician ledger repair` with no kernel on this thread)"
            )
        for seqs, side in self.unrestored:
            what = f"record(s) {seq_ranges(seqs)}" if seqs else "damaged bytes that named no record"
            out.append(
                f"  could not restore {what}: no side file holds them whole; their "
                f"bytes are kept in {side}"
            )
        for seq, side in self.conflicting:
            out.append(f"  not restorable: record {seq} in {side} (sequence number taken since)")
        if self.error:
            out.append(f"  {self.error}")
        if self.clean_after is not None:
            out.append(
                "  the ledger now checks clean"
                if self.clean_after
                else "  the ledger still does not check clean (`logician ledger check`)"
            )
        elif not (self.damaged or self.tail or self.recoverable or self.conflicting):
            out.append("  no damage found")
        return out

    @property
    def healthy(self) -> bool:
        return not (self.damaged or self.tail or self.recoverable)


def side_files(path: Path) -> list[Path]:
    """Every side file the journal wrote for this ledger, oldest name first."""
    return sorted(
        p
        for p in path.parent.glob(f"{path.name}.*")
        if any(p.name[len(path.name) :].startswith(k) for k in SIDE_FILE_KINDS)
    )


def check(path: Path) -> LedgerReport:
    """Read-only: what is damaged, and what the side files could restore."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise RepairError(f"cannot read ledger {path}: {exc.strerror or exc}") from None
    found = scan(data)
    report = LedgerReport(Path(path), records=len(found.records), damaged=found.damaged)
    seqs = {r["seq"]: line for r, line in zip(found.records, found.lines, strict=True)}
    report.last_seq = max(seqs, default=0)
    if found.tail_offset < len(data):
        report.tail = (found.tail_offset, len(data) - found.tail_offset, found.tail_reason)
    for side in side_files(Path(path)):
        try:
            held = scan(side.read_bytes())
        except OSError:
            continue
        for record, line in zip(held.records, held.lines, strict=True):
            seq = record["seq"]
            if seq in seqs:
                if seqs[seq] != line:
                    report.conflicting.append((seq, str(side)))
            elif seq not in report.recoverable:
                report.recoverable[seq] = line
    return report


def repair(path: Path) -> LedgerReport:
    """Put every recoverable record back in sequence order; keep the replaced file."""
    path = Path(path)
    lock = FileLock(path.with_suffix(".lock"), mode=0o600)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RepairError(
            f"ledger {path} is open in a running kernel; shut that kernel down, then repair"
        ) from None
    try:
        report = check(path)
        if report.healthy:
            report.clean_after = True
            return report
        data = path.read_bytes()
        found = scan(data)
        try:
            _rewrite(path, data, found, report)
        except OSError as exc:
            # Nothing is lost: the file is replaced in one rename or not at all, and every
            # damaged byte already kept is named in the report.
            report.error = (
                f"the repair could not be written ({exc.strerror or exc}); the "
                f"ledger was left as it was"
            )
            report.clean_after = False
            return report
        try:
            _record_repair(path, report)
        except OSError as exc:
            report.error = f"the repair was done but could not be recorded in the ledger ({exc})"
        report.clean_after = check(path).healthy
        return report
    except OSError as exc:
        raise RepairError(f"cannot repair ledger {path}: {exc.strerror or exc}") from None
    finally:
        lock.release()


def _rewrite(path: Path, data: bytes, found: Scan, report: LedgerReport) -> None:
    """Keep every damaged byte and the whole file aside, then replace the file with its whole
    records and the recoverable ones, in sequence order, in one rename."""
    # Opening writes the same side files; a ledger no kernel opened since its damage has none.
    for damage in found.damaged:
        side = path.with_name(f"{path.name}.damaged-at-{damage.offset}")
        if not side.exists():
            write_durably(side, data[damage.offset : damage.offset + damage.length])
        _unrestored(report, list(damage.lost), str(side))
    if found.tail_offset < len(data):
        # Keep the tail exactly as opening would have, before the file is replaced.
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        side = path.with_name(f"{path.name}.cut-{stamp}-at-{found.tail_offset}")
        write_durably(side, data[found.tail_offset :])
        last = found.records[-1]["seq"] if found.records else 0
        _unrestored(report, seqs_named_in(data[found.tail_offset :], last), str(side))
    lines = {r["seq"]: line for r, line in zip(found.records, found.lines, strict=True)}
    lines.update(report.recoverable)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    backup = path.with_name(f"{path.name}.before-repair-{stamp}")
    write_durably(backup, data)
    report.backup = str(backup)
    tmp = path.with_name(f".{path.name}.repair-tmp")
    try:
        write_durably(tmp, b"".join(lines[seq] for seq in sorted(lines)))
        durable_replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    from .checkpoint import discard

    discard(path)  # it describes the bytes just replaced; the next open writes a new one
    report.restored = sorted(report.recoverable)


def _unrestored(report: LedgerReport, lost: list[int], side: str) -> None:
    """Name the records of one damaged run that no side file restores (and where they are)."""
    missing = [seq for seq in lost if seq not in report.recoverable]
    if missing or not lost:
        report.unrestored.append((missing, side))


def _record_repair(path: Path, report: LedgerReport) -> None:
    from .thread_ledger import Recovery, ThreadLedger

    ledger = ThreadLedger(path.parent, path.stem)
    try:
        ledger.append(
            Recovery,
            what="repaired",
            detail=f"restored record(s) {seq_ranges(report.restored) or 'none'} from side files"
            + "".join(
                f"; could not restore record(s) {seq_ranges(seqs) or 'none'} (bytes kept in {side})"
                for seqs, side in report.unrestored
            )
            + f"; previous file kept as {report.backup}",
            side_file=report.backup,
            lost_seqs=sorted(seq for seqs, _ in report.unrestored for seq in seqs),
            durable=True,
        )
    finally:
        ledger.close()
