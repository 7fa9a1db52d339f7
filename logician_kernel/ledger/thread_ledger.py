"""The thread ledger: the append-only record of one notebook's conversation and frames.

Owns the closed set of entry kinds and the single append choke point that gives every entry its
sequence number, parent, time and (through the journal) checksum. The conversation projection
is derived from the entries by a pure function, so the same ledger always yields the same
messages. Rewinds, clears, compactions and branch operations append projection items; nothing
ever rewrites or removes an entry.

Must never: mutate an entry, persist streaming deltas, or store a secret.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel

from .._version import __version__
from ..durable.journal import Journal, JournalError, Resume, TailRecovery
from ..durable.journal_scan import seq_ranges
from .checkpoint import (
    CHECKPOINT_EVERY,
    FOLDS,
    Checkpoint,
    CheckpointDamaged,
    LedgerEntries,
    set_aside,
)
from .checkpoint import load as load_checkpoint
from .checkpoint import save as save_checkpoint
from .entries import (
    ENTRY_ADAPTER,
    ApprovalRequested,
    ApprovalResolved,
    CallRewound,
    CallWatch,
    Entry,
    FileCheckpoint,
    FrameClose,
    FrameOpen,
    FrameOutcome,
    FramePreSnapshot,
    MessageEntry,
    ProjectionItem,
    ProjectionReason,
    Quarantine,
    Recovery,
    RestorableCall,
    RestoredPath,
    RestoredVariable,
    RewindPlanned,
    RewindProgress,
    RewindStep,
    RunEnd,
    SessionStart,
    ToolCommit,
    ToolIntent,
    ToolOutcome,
    ToolRecovery,
    VariableRecord,
    VariablesCaptured,
    exact_in_json,
    read_entry,
    share_entry,
)
from .entry_base import _Entry

# The entry kinds live in `ledger_entries.py`; callers import them from here.
__all__ = [
    "ApprovalRequested",
    "ApprovalResolved",
    "CallRewound",
    "CallWatch",
    "Entry",
    "ENTRY_ADAPTER",
    "FileCheckpoint",
    "FrameClose",
    "FrameOpen",
    "FramePreSnapshot",
    "FrameOutcome",
    "MessageEntry",
    "project",
    "ProjectionItem",
    "ProjectionReason",
    "Quarantine",
    "read_entries",
    "Recovery",
    "RestorableCall",
    "RestoredPath",
    "RestoredVariable",
    "RewindPlanned",
    "RewindProgress",
    "RewindStep",
    "RunEnd",
    "SessionStart",
    "ThreadLedger",
    "ToolCommit",
    "ToolIntent",
    "ToolOutcome",
    "ToolRecovery",
    "UnknownRecordError",
    "VariableRecord",
    "VariablesCaptured",
]

HELD_ENTRIES = 256
"""Decoded entries a ledger keeps at least, the most recent, once it lets older ones go."""

_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def project(entries: Sequence[BaseModel]) -> list[dict[str, Any]]:
    """The current conversation, derived from the entries alone (pure, deterministic)."""
    return project_from([], entries)


def project_from(
    messages: list[dict[str, Any]], entries: Sequence[BaseModel]
) -> list[dict[str, Any]]:
    """`project` resumed from the conversation `messages` (extended in place when it can be)."""
    for entry in entries:
        if isinstance(entry, MessageEntry):
            messages.append(entry.message)
        elif isinstance(entry, ProjectionItem):
            messages = list(entry.messages)
    return messages


def read_entries(path: Path) -> list[Entry]:
    """The valid entries of a ledger file, read-only (damage is skipped, never cut)."""
    from ..durable.journal_scan import scan

    entries: list[Entry] = []
    for record in scan(Path(path).read_bytes()).records:
        try:
            entries.append(read_entry(record))
        except ValueError:
            break  # the same rule as opening: nothing is read past an entry we cannot read
    return entries


class UnknownRecordError(JournalError):
    """A record with a valid checksum is not an entry this version knows."""


class ThreadLedger:
    """One thread's ledger file, opened for appending; the only writer of its entries."""

    def __init__(
        self, directory: Path, thread_id: str, *, fence: Callable[[], None] | None = None
    ) -> None:
        """`fence` is called before every append and checkpoint and raises (a `JournalError`,
        e.g. `durable.lease.LeaseLost`) when this kernel may no longer write the thread."""
        self.fence = fence
        if not _THREAD_ID.match(thread_id):
            raise ValueError(f"thread id {thread_id!r}: use letters, digits, '.', '_' or '-'")
        self.thread_id = thread_id
        self.path = Path(directory) / f"{thread_id}.jsonl"
        checkpoint, self.checkpoint_notice = _load_checkpoint(self.path)
        self._journal = Journal(self.path, resume=checkpoint.resume if checkpoint else None)
        self._append_lock = threading.RLock()
        # The worker loop, the main thread and a frontend's subshell all append: one at a time,
        # or two entries could take the same sequence number (re-entrant: a recovery appends
        # while the ledger opens).
        self._folds: dict[str, tuple[int, Any]] = {}
        self._fold_lock = threading.RLock()
        self._checkpointed = 0
        if checkpoint is not None and self._journal.resumed is None:
            set_aside(self.path)
            self.checkpoint_notice = (
                f"the ledger checkpoint of {self.path.name} does not match the ledger "
                f"({self._journal.resume_error}); it was opened by replaying every record"
            )
            checkpoint = None
        loaded = self._journal.take_loaded()
        try:
            self.entries: LedgerEntries[Entry] = self._entries_over(checkpoint)
        except ValueError as exc:  # checksums held, yet the prefix's last record disagrees
            set_aside(self.path)
            self.checkpoint_notice = (
                f"the ledger checkpoint of {self.path.name} does not match the ledger "
                f"({_first_line(exc)}); it was opened by replaying every record"
            )
            self._folds.clear()
            self._checkpointed = 0
            loaded = self._journal.records  # the prefix too
            self.entries = LedgerEntries([])
        for record in loaded:
            try:
                self.entries.append(read_entry(record))
            except ValueError as exc:
                # A checksummed record we cannot read is from a newer version or a bug: refuse
                # to append on top of it rather than guess.
                self._journal.close()
                kind = record.get("kind")
                raise UnknownRecordError(
                    f"ledger {self.path}: record {record.get('seq')} (kind {kind!r}) is not a known "
                    f"entry; it is intact (its checksum holds), so it was written by a newer "
                    f"logician_kernel than {__version__} or by another program: upgrade "
                    f"logician_kernel, or move {self.path.name} aside to start a fresh thread"
                    f" ({_first_line(exc)})"
                ) from None
        self.recovered_tail: TailRecovery | None = self._journal.recovery
        self.damaged: list[Recovery] = self._report_damage()
        if self.recovered_tail is not None:
            cut = self.recovered_tail
            self.append(
                Recovery,
                what="torn-tail",
                detail=(
                    f"cut {cut.cut_bytes} damaged byte(s) at offset {cut.cut_offset} of "
                    f"{self.path.name} ({cut.reason}); {cut.valid_records} record(s) intact"
                    + (f"; record(s) {seq_ranges(cut.lost)} lost" if cut.lost else "")
                ),
                side_file=cut.side_file,
                offset=cut.cut_offset,
                lost_seqs=list(cut.lost),
                durable=True,
            )

        if len(self.entries) - self._checkpointed >= CHECKPOINT_EVERY:
            self.write_checkpoint()

    def _entries_over(self, checkpoint: Checkpoint | None) -> LedgerEntries[Entry]:
        """The entries, those the checkpoint covers left as bytes; its folds seeded."""
        if checkpoint is None:
            return LedgerEntries([])
        count = checkpoint.resume.count
        for name, state in checkpoint.folds.items():
            self._folds[name] = (count, state)
        self._checkpointed = count
        last = read_entry(self._journal.last_resumed_record())
        if last.seq != checkpoint.resume.last_seq:
            raise ValueError(
                f"record {last.seq} ends the checkpointed prefix, not {checkpoint.resume.last_seq}"
            )
        return LedgerEntries([], prefix_count=count, load_prefix=self._reader(count), last=last)

    def _reader(self, count: int) -> Callable[[], list[Entry]]:
        """Reads the first `count` entries back from the file (`LedgerEntries`' prefix)."""
        journal = self._journal

        def load_prefix() -> list[Entry]:
            return [read_entry(r) for r in journal.records[:count]]

        return load_prefix

    def fold(self, name: str) -> Any:
        """The named fold (`FOLDS` in ledger_checkpoint.py) over every entry so far, advanced
        incrementally from where it was (or from the checkpoint): the state, not a copy."""
        with self._fold_lock:
            fold = FOLDS[name]
            seen, state = self._folds.get(name) or (0, fold.initial())
            total = len(self.entries)
            if seen != total:
                state = fold.step(state, self.entries[seen:total])
                self._folds[name] = (total, state)
            return state

    def write_checkpoint(self) -> bool:
        """Record every fold as of now with the bytes it covers; False when not written (the
        ledger grew meanwhile, or the write failed: a checkpoint is only ever a shortcut)."""
        with self._fold_lock:
            count, size, crc = len(self.entries), self._journal.size, self._journal.crc
            if not count:
                return False
            if self.fence is not None:
                try:
                    self.fence()
                except JournalError:
                    return False
            folds = {name: fold.dump(self.fold(name)) for name, fold in FOLDS.items()}
            if len(self.entries) != count or self._journal.size != size:
                return False
            resume = Resume(offset=size, count=count, last_seq=self.entries[-1].seq, crc=crc)
            try:
                save_checkpoint(self.path, resume, folds)
            except OSError:
                return False
            self._checkpointed = count
            return True

    def _report_damage(self) -> list[Recovery]:
        """One `damaged-record` entry per run of damage, the first time it is found only."""
        if not self._journal.damaged:
            return []
        known = {
            e.side_file
            for e in self.entries
            if isinstance(e, Recovery) and e.what == "damaged-record"
        }
        found: list[Recovery] = []
        for damage, side in self._journal.damaged:
            if side in known:
                continue
            found.append(
                self.append(
                    Recovery,
                    what="damaged-record",
                    detail=f"{self.path.name}: {damage.describe()}; a copy is in {side}",
                    side_file=side,
                    offset=damage.offset,
                    lost_seqs=list(damage.lost),
                    durable=True,
                )
            )
        return found

    def append(self, kind: type[_Entry], *, durable: bool = False, **fields: Any) -> Any:
        """The single choke point: assign seq, parent and time, validate, persist.

        Serialized: whichever thread appends, sequence numbers stay unique and dense and the
        file holds whole records in sequence order."""
        with self._append_lock:
            if self.fence is not None:  # a kernel whose lease was taken over never interleaves
                self.fence()
            # After damage the sequence has a gap; numbers are never reused, so a repair can
            # put a recovered record back in its place.
            parent = self.entries[-1].seq if self.entries else None
            seq = (parent or 0) + 1
            entry = kind(
                seq=seq,
                parent=parent,
                time=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
                **fields,
            )
            record = entry.model_dump(mode="json")
            held: Entry
            if exact_in_json(kind):  # it reads back as built: shared, not validated again
                self._journal.append(record, durable=durable, read_back=False)
                held = cast(Entry, share_entry(entry, built=True))
            else:  # held as a replay will read it (a tuple in an `Any` reads as a list)
                stored = self._journal.append(record, durable=durable)
                held = read_entry(cast(dict[str, Any], stored))
            self.entries.append(held)
            if kind is FrameClose:
                self._let_go()
            return held

    def _let_go(self) -> None:
        """As a frame closes, let the decoded entries before the last `HELD_ENTRIES` go once
        twice as many are held: every fold is advanced past them first, so only a reader of
        history reads them back from the file (and holds them until the next frame closes).
        A long session holds its folds and a bounded tail, not every entry it wrote."""
        entries = self.entries
        if len(entries) - entries.pending < 2 * HELD_ENTRIES:
            return
        count = len(entries) - HELD_ENTRIES
        with self._fold_lock:
            for name in FOLDS:
                self.fold(name)
        entries.forget(count, self._reader(count))

    @property
    def lock(self) -> threading.RLock:
        """Held by each append; a caller that must read the entries and append on what it
        read, with no other append in between, holds it around both."""
        return self._append_lock

    @property
    def journal(self) -> Journal:
        """The record file under this ledger (its health is checked as frames open)."""
        return self._journal

    def messages(self) -> list[dict[str, Any]]:
        """The current conversation; a copy, so no caller can change the ledger through it."""
        with self._fold_lock:
            return copy.deepcopy(self.fold("messages"))

    def close(self) -> None:
        if len(self.entries) - self._checkpointed >= CHECKPOINT_EVERY:
            self.write_checkpoint()
        self._journal.close()


def _load_checkpoint(path: Path) -> tuple[Checkpoint | None, str | None]:
    try:
        return load_checkpoint(path), None
    except CheckpointDamaged as exc:
        return None, f"{exc}: the ledger was opened by replaying every record"
