"""What the variables store holds for one thread's frames: which blobs each frame stored, which
blobs a rewind of each frame restores (its variable pre-images), and which may be evicted.

Pure folds over the thread ledger (`variable_checkpoints.history`) plus the store's listing,
for `%logician storage` and the disk budget (`store_budget.py`). A frame's variable pre-image
of a name is the blob of that name's latest record before the frame: what rewinding the frame
gives back. The current value of every name (its latest record) is never evicted, nor the
pre-images of the newest `keep` frames; blobs that only rewound frames reference go first.
Only blobs this thread's ledger names are ever candidates: other threads share the store.

Must never: delete a blob itself (the store does, and logs it) or unpickle anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from ..ledger.thread_ledger import VariableRecord, VariablesCaptured
from .variable_checkpoints import history
from .variable_store import VariableStore


@dataclass
class VariableNeeds:
    """The variable side of one thread, folded from its ledger."""

    pre_images: dict[int, dict[str, str]] = field(default_factory=dict)
    """Active frame -> name -> blob its rewind restores that name from."""
    stored: dict[int, set[str]] = field(default_factory=dict)
    """Active frame -> blobs its records point at (first frame to name a blob stores it)."""
    current: set[str] = field(default_factory=set)
    """Blobs of every name's latest record: the values the namespace holds now."""
    referenced: set[str] = field(default_factory=set)
    """Every blob this thread's ledger names (rewound frames' too)."""


def needs(entries: Sequence[BaseModel]) -> VariableNeeds:
    hist = history(entries)
    out = VariableNeeds()
    latest: dict[str, VariableRecord] = {}
    for frame in sorted(hist.records):
        records = [r for r in hist.records[frame] if r.name != "*"]
        pre: dict[str, str] = {}
        for r in records:
            prev = latest.get(r.name)
            if r.action != "shared" and prev is not None and prev.blob:
                pre.setdefault(r.name, prev.blob)
        for r in records:
            latest[r.name] = r
        if pre:
            out.pre_images[frame] = pre
        blobs = {r.blob for r in records if r.blob}
        if blobs:
            out.stored[frame] = blobs
    out.current = {r.blob for r in latest.values() if r.blob and r.action != "deleted"}
    for entry in entries:
        if isinstance(entry, VariablesCaptured):
            out.referenced.update(r.blob for r in entry.records if r.blob)
    return out


@dataclass
class Candidate:
    """A variables blob that may be evicted, with who loses it."""

    digest: str
    size: int
    first_use: int
    """The oldest frame whose rewind needs it; -1 when no active frame's does."""
    stored_at: float
    frames: list[int]
    names: list[str]


def candidates(
    folded: VariableNeeds, active: Sequence[int], keep: int, store: VariableStore
) -> list[Candidate]:
    """Blobs this thread may lose, oldest need first (see the module docstring)."""
    recent = set(active[-keep:]) if keep > 0 else set()
    protected = set(folded.current)
    for frame in recent:
        protected.update(folded.pre_images.get(frame, {}).values())
    users: dict[str, list[int]] = {}
    names: dict[str, set[str]] = {}
    for frame in sorted(folded.pre_images):
        for name, blob in folded.pre_images[frame].items():
            if frame not in users.setdefault(blob, []):
                users[blob].append(frame)
            names.setdefault(blob, set()).add(name)
    out = [
        Candidate(
            digest,
            size,
            users[digest][0] if digest in users else -1,
            stored_at,
            users.get(digest, []),
            sorted(names.get(digest, ())),
        )
        for digest, size, stored_at in store.blobs()
        if digest in folded.referenced and digest not in protected
    ]
    out.sort(key=lambda c: (c.first_use, c.stored_at))
    return out


@dataclass
class FrameVariables:
    """One frame's share of the variables store."""

    stored_bytes: int = 0
    """Bytes of the blobs this frame stored first (a blob two frames name counts once)."""
    shared: int = 0
    """Blobs this frame names that an earlier frame already stored (same value, no copy)."""
    evicted: list[str] = field(default_factory=list)
    """Names whose value from before this frame was evicted: its rewind cannot restore them."""


def by_frame(folded: VariableNeeds, sizes: dict[str, int]) -> dict[int, FrameVariables]:
    """Per active frame: what its variables take, what is deduplicated, what was evicted."""
    out: dict[int, FrameVariables] = {}
    seen: set[str] = set()
    for frame in sorted(set(folded.stored) | set(folded.pre_images)):
        row = FrameVariables()
        for blob in sorted(folded.stored.get(frame, ())):
            if blob in seen:
                row.shared += 1
            else:
                seen.add(blob)
                row.stored_bytes += sizes.get(blob, 0)
        row.evicted = sorted(
            name for name, blob in folded.pre_images.get(frame, {}).items() if blob not in sizes
        )
        out[frame] = row
    return out


def evicted_names(folded: VariableNeeds, present: Iterable[str]) -> dict[int, list[str]]:
    """Frame -> names its rewind can no longer restore (their blob is gone)."""
    have = set(present)
    return {
        frame: sorted(n for n, b in pre.items() if b not in have)
        for frame, pre in folded.pre_images.items()
        if any(b not in have for b in pre.values())
    }
