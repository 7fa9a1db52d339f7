"""Ledger projection checkpoints: opening a long thread reads a checkpoint and the tail only.

Owns `<thread>.jsonl.checkpoint`: the folded state of the ledger (the conversation, the frame
stack, the tool calls still open) after its first N records, with the byte offset and CRC-32
of the ledger bytes those records occupy, in one checksummed record. Opening verifies both
checksums and the offset, then reads only the records after it; the records before it stay
bytes until something asks for them (`LedgerEntries`), so a consumer that reads all of
history still sees exactly what a full replay gives. Anything that does not verify (a torn or
edited checkpoint, a ledger rewritten or damaged since) is set aside and the ledger is opened by
a full replay, with a notice saying why; a checkpoint from another version is dropped silently.

Must never: be trusted unverified, change what any entry or fold reads, or be the only copy of
anything (it is derived from the ledger and can always be deleted).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, SupportsIndex, TypeVar, overload

from pydantic import TypeAdapter

from .._version import __version__
from ..durable.fsync import fsync_dir
from ..durable.journal import Resume, decode_record, encode_record
from ..durable.private import open_private

FORMAT = 4
"""4: the `cells` fold (a checkpoint of another format is discarded, not damaged)."""
CHECKPOINT_EVERY = 1000
"""Records a ledger may grow past its checkpoint before opening or closing it writes a new one."""

T = TypeVar("T")


@contextmanager
def bulk_load() -> Iterator[None]:
    """No garbage collection while a checkpoint or history is read: building 10^5 objects
    that hold no cycles set off collections that re-traversed everything built so far (on a
    100k-entry thread they cost more than the reading)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def checkpoint_path(ledger: Path) -> Path:
    return ledger.with_name(f"{ledger.name}.checkpoint")


class LedgerEntries(Sequence[T], Generic[T]):
    """The entries of a ledger; those a checkpoint covers are read from their bytes on first use.

    Indexing and slicing at or past the checkpoint (what incremental folds do) never read
    them; iterating, or reaching before it, reads them all once. `forget` turns the first
    entries back into bytes once every fold is past them (`ThreadLedger` does as frames close).
    What is held is swapped whole, so a reader in another thread sees one consistent state."""

    def __init__(
        self,
        tail: list[T],
        *,
        prefix_count: int = 0,
        load_prefix: Callable[[], list[T]] | None = None,
        last: T | None = None,
    ) -> None:
        # (decoded entries after the prefix, entries in the prefix, how to read the prefix,
        # the prefix's last entry read on its own: every append asks for its parent)
        self._held: tuple[list[T], int, Callable[[], list[T]] | None, T | None] = (
            (tail, prefix_count, load_prefix, last)
            if load_prefix is not None
            else (tail, 0, None, None)
        )
        self._lock = threading.Lock()  # swaps of `_held`, and appends
        self._loading = threading.Lock()  # one reader reads the prefix at a time

    @property
    def pending(self) -> int:
        """Entries still held as bytes (0 once read)."""
        return self._held[1]

    def _materialize(self) -> list[T]:
        """Every entry, the prefix read first if it is still bytes."""
        while True:
            items, pending, load, _ = self._held
            if not pending or load is None:
                return items
            with self._loading:
                if self._held[1] != pending or self._held[2] is not load:
                    continue  # read by another thread meanwhile, or more was forgotten
                with bulk_load():
                    prefix = load()
                if len(prefix) != pending:
                    raise RuntimeError(
                        f"ledger checkpoint: {len(prefix)} entries read back, {pending} expected"
                    )
                with self._lock:  # appends made while reading are in the tail held now
                    tail, now_pending, now_load, _ = self._held
                    if now_pending != pending or now_load is not load:
                        continue
                    whole = prefix + tail
                    self._held = (whole, 0, None, None)
                return whole

    def forget(self, count: int, load_prefix: Callable[[], list[T]]) -> None:
        """Hold the first `count` entries as bytes again, `load_prefix` reading them back."""
        with self._lock:
            items, pending, _, last = self._held
            if count <= pending or count > pending + len(items):
                return
            drop = count - pending
            self._held = (items[drop:], count, load_prefix, items[drop - 1])

    def append(self, item: T) -> None:
        with self._lock:
            self._held[0].append(item)

    def __len__(self) -> int:
        items, pending, _, _ = self._held
        return pending + len(items)

    @overload
    def __getitem__(self, index: SupportsIndex) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> T | list[T]:
        items, pending, _, last = self._held
        if isinstance(index, slice):
            start, stop, step = index.indices(pending + len(items))
            if pending and step == 1 and start >= pending:
                return items[start - pending : max(stop - pending, 0)]
            return self._materialize()[index]
        position = index.__index__()
        if position < 0:
            position += pending + len(items)
        if pending and position >= pending:
            return items[position - pending]
        if pending and position == pending - 1 and last is not None:
            return last
        return self._materialize()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._materialize())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LedgerEntries):
            other = list(other)
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]


# -- the folds a checkpoint carries -----------------------------------------------------------


@dataclass(frozen=True)
class Fold:
    """One piece of state folded from the entries: how to start, advance, store and load it."""

    initial: Callable[[], Any]
    step: Callable[[Any, Sequence[Any]], Any]
    dump: Callable[[Any], Any]
    load: Callable[[Any], Any]


def _messages_step(messages: list[dict[str, Any]], entries: Sequence[Any]) -> list[dict[str, Any]]:
    from .thread_ledger import project_from

    return project_from(messages, entries)


def _frames_step(frames: dict[int, Any], entries: Sequence[Any]) -> dict[int, Any]:
    from .frame_view import fold_frames

    return fold_frames(frames, entries)


def _frames_dump(frames: dict[int, Any]) -> dict[str, Any]:
    """Rows of field values (not objects with every field's name): half the bytes to parse."""
    from .frame_view import FrameView

    names = [f.name for f in dataclasses.fields(FrameView)]
    rows = []
    for view in frames.values():
        row = [getattr(view, name) for name in names]
        row[names.index("changes")] = [c.model_dump(mode="json") for c in view.changes]
        row[names.index("skipped")] = [s.model_dump(mode="json") for s in view.skipped]
        rows.append(row)
    return {"fields": names, "rows": rows}


def _frames_load(data: dict[str, Any]) -> dict[int, Any]:
    from ..types.path_states import PathChange, SkippedPath
    from .frame_view import FrameView

    names = [f.name for f in dataclasses.fields(FrameView)]
    if data["fields"] != names:
        raise ValueError(f"frame fields {data['fields']} are not {names}")
    changes, skipped = names.index("changes"), names.index("skipped")
    rows = data["rows"]
    # One validator call for every frame's changes (a call per change costs half again).
    flat = TypeAdapter(list[PathChange]).validate_python([c for r in rows for c in r[changes]])
    taken = 0
    frames = {}
    for row in rows:
        if row[changes]:
            row[changes], taken = flat[taken : taken + len(row[changes])], taken + len(row[changes])
        if row[skipped]:
            row[skipped] = [SkippedPath.model_validate(c) for c in row[skipped]]
        view = FrameView(*row)
        frames[view.frame] = view
    return frames


def _calls_step(state: OpenCalls, entries: Sequence[Any]) -> OpenCalls:
    return state.fold(entries)


def _calls_dump(state: OpenCalls) -> dict[str, Any]:
    return {
        "intents": [e.model_dump(mode="json") for e in state.intents.values()],
        "outcomes": [e.model_dump(mode="json") for e in state.outcomes.values()],
        "answered": sorted(state.answered),
        "committed": sorted(state.committed),
    }


def _calls_load(data: dict[str, Any]) -> OpenCalls:
    from .entries import ENTRY_ADAPTER

    intents = [ENTRY_ADAPTER.validate_python(e) for e in data["intents"]]
    outcomes = [ENTRY_ADAPTER.validate_python(e) for e in data["outcomes"]]
    return OpenCalls(
        intents={e.call_id: e for e in intents},  # type: ignore[union-attr,misc]
        outcomes={e.call_id: e for e in outcomes},  # type: ignore[union-attr,misc]
        answered=set(data["answered"]),
        committed=set(data["committed"]),
    )


@dataclass
class OpenCalls:
    """Tool calls without a commit: their intents, outcomes, and whether a result answered
    them. Committed calls are forgotten but for their id (a commit is final)."""

    intents: dict[str, Any] = dataclasses.field(default_factory=dict)
    outcomes: dict[str, Any] = dataclasses.field(default_factory=dict)
    answered: set[str] = dataclasses.field(default_factory=set)
    committed: set[str] = dataclasses.field(default_factory=set)

    def fold(self, entries: Sequence[Any]) -> OpenCalls:
        from .entries import MessageEntry, ToolCommit, ToolIntent, ToolOutcome

        for entry in entries:
            if isinstance(entry, ToolCommit):
                self.committed.add(entry.call_id)
                self.intents.pop(entry.call_id, None)
                self.outcomes.pop(entry.call_id, None)
                self.answered.discard(entry.call_id)
                continue
            call_id = getattr(entry, "call_id", None)
            if isinstance(entry, MessageEntry) and entry.message.get("kind") == "tool_result":
                call_id = entry.message.get("tool_call_id", "")
                if call_id not in self.committed:
                    self.answered.add(call_id)
            elif call_id in self.committed:
                continue
            elif isinstance(entry, ToolIntent):
                self.intents[entry.call_id] = entry
            elif isinstance(entry, ToolOutcome):
                self.outcomes[entry.call_id] = entry
        return self


def _cells_step(state: dict[int, Any], entries: Sequence[Any]) -> dict[int, Any]:
    from .cell_parts import fold_pending

    return fold_pending(state, entries)


def _cells_dump(state: dict[int, Any]) -> list[dict[str, Any]]:
    from .cell_parts import dump

    return dump(state)


def _cells_load(data: list[dict[str, Any]]) -> dict[int, Any]:
    from .cell_parts import load

    return load(data)


def _rewinds_initial() -> Any:
    from .rewind_state import RewindState

    return RewindState()


def _rewinds_load(data: dict[str, Any]) -> Any:
    from .rewind_state import RewindState

    return RewindState.load(data)


FOLDS: dict[str, Fold] = {
    "messages": Fold(list, _messages_step, list, list),
    "frames": Fold(dict, _frames_step, _frames_dump, _frames_load),
    "calls": Fold(OpenCalls, _calls_step, _calls_dump, _calls_load),
    # whether a rewind or an undo was interrupted: asked at every kernel start and refresh
    "rewinds": Fold(
        _rewinds_initial,
        lambda state, entries: state.fold(entries),
        lambda state: state.dump(),
        _rewinds_load,
    ),
    # the cell parts of rewinds waiting for a frontend: asked when one attaches
    "cells": Fold(dict, _cells_step, _cells_dump, _cells_load),
}


# -- the file ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    """A verified checkpoint record (its own checksum holds; the ledger's is checked on open)."""

    resume: Resume
    folds: dict[str, Any]
    """Each fold's state, by name, as of `resume.count` entries."""


class CheckpointDamaged(ValueError):
    """The checkpoint file is not one this version wrote whole; the message says why."""


def load(ledger: Path) -> Checkpoint | None:
    """The ledger's checkpoint; None when there is none or it is from another version.

    Raises `CheckpointDamaged` (and moves the file aside) when it is torn or edited."""
    path = checkpoint_path(ledger)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CheckpointDamaged(f"cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        if not data.endswith(b"\n"):
            raise ValueError("torn (no newline)")
        with bulk_load():
            return _decode(ledger, data)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        aside = set_aside(ledger)
        raise CheckpointDamaged(f"{path.name} is damaged ({exc}); kept as {aside.name}") from None


def _decode(ledger: Path, data: bytes) -> Checkpoint | None:
    """The checkpoint in `data`; None when another version wrote it (it is then deleted)."""
    record = decode_record(data[:-1])
    if record.get("format") != FORMAT or record.get("version") != __version__:
        discard(ledger)
        return None
    resume = Resume(**{k: int(record[k]) for k in ("offset", "count", "last_seq", "crc")})
    stored = record["folds"]
    if set(stored) != set(FOLDS):
        raise ValueError(f"folds {sorted(stored)} are not {sorted(FOLDS)}")
    folds = {name: fold.load(stored[name]) for name, fold in FOLDS.items()}
    return Checkpoint(resume=resume, folds=folds)


def save(ledger: Path, resume: Resume, folds: dict[str, Any]) -> None:
    """Write the checkpoint whole or not at all: a temporary file, fsync, rename, fsync dir."""
    path = checkpoint_path(ledger)
    tmp = path.with_name(f".{path.name}.tmp")
    record = {
        "format": FORMAT,
        "version": __version__,
        "folds": folds,
        **dataclasses.asdict(resume),
    }
    with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
        fh.write(encode_record(record))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def set_aside(ledger: Path) -> Path:
    """Move an unusable checkpoint out of the way (kept for a post-mortem, never read again)."""
    path = checkpoint_path(ledger)
    aside = path.with_name(f"{path.name}.rejected")
    try:
        os.replace(path, aside)
    except OSError:
        pass
    return aside


def discard(ledger: Path) -> None:
    try:
        checkpoint_path(ledger).unlink()
    except OSError:
        pass
