"""The disk budget of the side store: which large pre-images may go, and what the store holds.

Pure decisions over the frame stack (`FrameView`s) plus the side store's listing. A frame
references the large pre-images its rewind would restore (`change.before`); the current content
of workspace files (`live`) and the pre-images of the newest `keep` active frames are never
evicted. Everything else goes oldest first: objects no active frame needs (rewound frames,
superseded versions), then pre-images of the oldest frames.

Must never: delete an object itself (the store does, and logs it), or touch git's objects.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..ledger.frame_view import FrameView
from ..snapshots.large_files import LargeFiles
from ..snapshots.large_store import LargeFileStore


@dataclass
class FrameUsage:
    """One frame's share of the side store."""

    frame: int
    execution_count: int | None
    keys: set[str] = field(default_factory=set)
    """Side-store keys of the large pre-images this frame's rewind needs."""
    present_bytes: int = 0
    evicted: list[str] = field(default_factory=list)
    """Paths whose large pre-image is gone (evicted), so a rewind cannot restore them."""


def large_refs(view: FrameView) -> dict[str, str]:
    """Path -> side-store key of each large pre-image of a frame."""
    return {c.path: c.before.sha for c in view.changes if c.before.kind == "large" and c.before.sha}


def usage(frames: Iterable[FrameView], store: LargeFileStore) -> list[FrameUsage]:
    """Per active frame: its large pre-images, what they take, and which were evicted."""
    present = {o.key: o.size for o in store.list()}
    out = []
    for view in frames:
        if view.status != "active":
            continue
        refs = large_refs(view)
        if not refs:
            continue
        row = FrameUsage(view.frame, view.execution_count, set(refs.values()))
        row.present_bytes = sum(present.get(k, 0) for k in row.keys)
        row.evicted = sorted(p for p, k in refs.items() if k not in present)
        out.append(row)
    return out


def eviction_order(
    frames: Sequence[FrameView], live: set[str], keep: int, store: LargeFileStore
) -> list[tuple[str, list[int]]]:
    """Keys that may be evicted, first to go first, each with the frames that lose it."""
    active = [f for f in frames if f.status == "active"]
    recent = active[-keep:] if keep > 0 else []
    protected = set(live)
    for view in recent:
        protected.update(large_refs(view).values())
    first_use: dict[str, int] = {}
    users: dict[str, list[int]] = {}
    for view in active:
        for key in large_refs(view).values():
            first_use.setdefault(key, view.frame)
            users.setdefault(key, []).append(view.frame)
    candidates = [o for o in store.list() if o.key not in protected]
    # Unreferenced objects (-1) first, then by the oldest frame needing them; ties: oldest stored.
    candidates.sort(key=lambda o: (first_use.get(o.key, -1), o.stored_at))
    return [(o.key, users.get(o.key, [])) for o in candidates]


def evict(store: LargeFileStore, order: list[tuple[str, list[int]]], need: int, why: str) -> int:
    """Remove objects in `order` until `need` bytes are freed (all of them if need < 0)."""
    freed = 0
    for key, frames in order:
        if 0 <= need <= freed:
            break
        freed += store.remove(key, why=why, frames=frames)
    return freed


def dir_bytes(root: Path) -> int:
    """Bytes of the regular files under `root` (for the storage report)."""
    total = 0
    for base, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                continue
    return total


@dataclass
class StorageReport:
    """What `.logician/` holds, for `%logician storage`."""

    root: Path
    budget: int
    large_bytes: int
    git_bytes: int
    ledger_bytes: int
    free_bytes: int
    frames: list[FrameUsage]
    unreferenced_bytes: int
    """Side-store bytes no active frame needs (current file contents, rewound frames)."""
    evictions: list[dict]


class SideStoreBudget:
    """Keeps the side store within its budget for one frame stack (see the module docstring)."""

    def __init__(
        self,
        frames: Callable[[], dict[int, FrameView]],
        large: LargeFiles,
        live: Callable[[], set[str]],
    ) -> None:
        self._frames = frames
        self.large = large
        self._live = live
        large.evict = self.evict_for_room

    def _order(self, keep: int) -> list[tuple[str, list[int]]]:
        frames = list(self._frames().values())
        return eviction_order(frames, self._live() | self.large.live_keys(), keep, self.large.store)

    def evict_for_room(self, need: int) -> int:
        order = self._order(self.large.limits.keep_recent_frames)
        freed = evict(self.large.store, order, need, "budget")
        if freed:
            lost = sorted(
                {f for key, frames in order if not self.large.store.has(key) for f in frames}
            )
            where = f" of frame(s) {', '.join(map(str, lost))}" if lost else ""
            self.large.notices.append(
                f"Logician: evicted {freed / 1e6:,.1f} MB of large pre-images{where} to stay "
                f"within checkpoints.max_store_bytes ({self.large.budget / 1e6:,.1f} MB)."
            )
        return freed

    def gc(self, keep: int | None) -> tuple[int, list[int]]:
        """Evict every large pre-image outside the `keep` newest frames; bytes freed and the
        frames that lost pre-images."""
        order = self._order(self.large.limits.keep_recent_frames if keep is None else keep)
        freed = evict(self.large.store, order, -1, "gc")
        return freed, sorted({f for _, frames in order for f in frames})

    def evicted(self) -> dict[int, list[str]]:
        """Frame -> paths whose large pre-image was evicted."""
        return {
            u.frame: u.evicted
            for u in usage(self._frames().values(), self.large.store)
            if u.evicted
        }

    def report(self) -> StorageReport:
        state = self.large.store.root.parent
        rows = usage(self._frames().values(), self.large.store)
        needed = set().union(*(r.keys for r in rows)) if rows else set()
        objects = list(self.large.store.list())
        try:
            free = shutil.disk_usage(state).free
        except OSError:
            free = 0
        return StorageReport(
            root=state,
            budget=self.large.budget,
            large_bytes=sum(o.size for o in objects),
            git_bytes=dir_bytes(state / "git"),
            ledger_bytes=dir_bytes(state / "threads"),
            free_bytes=free,
            frames=rows,
            unreferenced_bytes=sum(o.size for o in objects if o.key not in needed),
            evictions=self.large.store.evictions(),
        )


def _mb(n: int) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 10**10 else f"{n / 1e6:,.1f} MB"


def format_report(r: StorageReport) -> str:
    """The plain text of `%logician storage`."""
    total = r.large_bytes + r.git_bytes + r.ledger_bytes
    lines = [
        f"Logician storage in {r.root}: {_mb(total)}; {_mb(r.free_bytes)} free on the disk",
        f"  large files (side store)  {_mb(r.large_bytes):>12}   budget {_mb(r.budget)} "
        "(checkpoints.max_store_bytes)",
        f"  small files (git objects) {_mb(r.git_bytes):>12}",
        f"  ledger (threads)          {_mb(r.ledger_bytes):>12}",
        f"  current file contents and no longer needed versions: {_mb(r.unreferenced_bytes)}",
    ]
    if r.frames:
        lines.append("frame  cell     large pre-images  size          state")
        for u in r.frames:
            cell = f"In [{u.execution_count}]" if u.execution_count is not None else "-"
            state = f"large files evicted: {', '.join(u.evicted)}" if u.evicted else "kept"
            lines.append(
                f"{u.frame:<6} {cell:<8} {len(u.keys):<17} {_mb(u.present_bytes):<13} {state}"
            )
    else:
        lines.append("no frame holds a large pre-image")
    if r.evictions:
        size = sum(e.get("size", 0) for e in r.evictions)
        lines.append(f"evicted so far: {len(r.evictions)} object(s), {_mb(size)}")
    return "\n".join(lines)
