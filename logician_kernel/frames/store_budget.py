"""The disk budget of the side store and the variables store, and what `.logician/` holds.

Pure decisions over the frame stack (`FrameView`s) plus the stores' listings. A frame
references the large pre-images its rewind would restore (`change.before`) and the variable
values it would restore (`variable_usage.py`); the current content of workspace files
(`live`), the current value of every variable, and the pre-images of the newest `keep` active
frames are never evicted. Everything else goes oldest first, large files and variables alike:
objects no active frame needs (rewound frames, superseded versions), then pre-images of the
oldest frames. `checkpoints.max_store_bytes` bounds both stores together.

Must never: delete an object itself (the stores do, and log it), or touch git's objects.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from ..ledger.frame_view import FrameView
from ..snapshots.large_files import LargeFiles
from ..snapshots.large_store import LargeFileStore
from . import variable_usage
from .storage_report import StorageReport, by_kind
from .variable_store import VariableStore

__all__ = ["FrameUsage", "SideStoreBudget", "usage"]


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


@dataclass
class Victim:
    """One object the budget may evict: a large pre-image or a variables blob."""

    store: str
    """`large` or `variables`."""
    key: str
    first_use: int
    """The oldest active frame whose rewind needs it; -1 when none does."""
    stored_at: float
    frames: list[int]
    names: list[str] = field(default_factory=list)
    """Variables it holds the earlier value of (for a variables blob)."""
    size: int = 0
    """Bytes freed when it was evicted."""


def eviction_order(
    frames: Sequence[FrameView], live: set[str], keep: int, store: LargeFileStore
) -> list[Victim]:
    """Large pre-images that may be evicted, first to go first, each with the frames that lose
    it."""
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
    # Unreferenced objects (-1) first, then by the oldest frame needing them; ties: oldest stored.
    out = [
        Victim("large", o.key, first_use.get(o.key, -1), o.stored_at, users.get(o.key, []))
        for o in store.list()
        if o.key not in protected
    ]
    out.sort(key=lambda v: (v.first_use, v.stored_at))
    return out


def evict(
    large: LargeFileStore,
    variables: VariableStore | None,
    order: list[Victim],
    need: int,
    why: str,
) -> list[Victim]:
    """Remove objects in `order` until `need` bytes are freed (all of them if need < 0); the
    objects removed, each with its `size`."""
    freed = 0
    gone: list[Victim] = []
    for victim in order:
        if 0 <= need <= freed:
            break
        if victim.store == "variables" and variables is not None:
            size = variables.remove(victim.key, why=why, frames=victim.frames, names=victim.names)
        else:
            size = large.remove(victim.key, why=why, frames=victim.frames)
        if size:
            freed += size
            gone.append(victim)
            victim.size = size
    return gone


class SideStoreBudget:
    """Keeps the side store and the variables store within their budget for one frame stack
    (see the module docstring)."""

    def __init__(
        self,
        frames: Callable[[], dict[int, FrameView]],
        large: LargeFiles,
        live: Callable[[], set[str]],
    ) -> None:
        self._frames = frames
        self.large = large
        self._live = live
        self.variables: VariableStore | None = None
        self._entries: Callable[[], Sequence[BaseModel]] = list
        large.evict = self.evict_for_room

    def attach_variables(
        self, store: VariableStore, entries: Callable[[], Sequence[BaseModel]]
    ) -> None:
        """Count the thread's variables store against the same budget (and evict from it)."""
        self.variables = store
        self._entries = entries
        self.large.others = store.total_bytes

    def _order(self, keep: int) -> list[Victim]:
        frames = list(self._frames().values())
        order = eviction_order(
            frames, self._live() | self.large.live_keys(), keep, self.large.store
        )
        if self.variables is not None:
            active = [f.frame for f in frames if f.status == "active"]
            folded = variable_usage.needs(self._entries())
            for c in variable_usage.candidates(folded, active, keep, self.variables):
                order.append(
                    Victim("variables", c.digest, c.first_use, c.stored_at, c.frames, c.names)
                )
            order.sort(key=lambda v: (v.first_use, v.stored_at))
        return order

    def used_bytes(self) -> int:
        used = self.large.store.total_bytes()
        return used + (self.variables.total_bytes() if self.variables is not None else 0)

    def evict_for_room(self, need: int) -> int:
        gone = evict(
            self.large.store,
            self.variables,
            self._order(self.large.limits.keep_recent_frames),
            need,
            "budget",
        )
        freed = sum(v.size for v in gone)
        if freed:
            self.large.notices.append(_eviction_notice(gone, freed, self.large.budget))
        return freed

    def fit(self) -> int:
        """Evict until both stores are within the budget again (after variables were stored;
        the side store makes room before each large file itself). Bytes freed."""
        over = self.used_bytes() - self.large.budget
        if over > 0 and self.variables is not None:  # exact before anything is given up
            over = self.large.store.total_bytes() + self.variables.recount() - self.large.budget
        return self.evict_for_room(over) if over > 0 else 0

    def gc(self, keep: int | None) -> tuple[int, list[int]]:
        """Evict every pre-image (large files and variables) outside the `keep` newest frames;
        bytes freed and the frames that lost pre-images."""
        order = self._order(self.large.limits.keep_recent_frames if keep is None else keep)
        gone = evict(self.large.store, self.variables, order, -1, "gc")
        freed = sum(v.size for v in gone)
        return freed, sorted({f for v in gone for f in v.frames})

    def evicted(self) -> dict[int, list[str]]:
        """Frame -> paths whose large pre-image was evicted."""
        return {
            u.frame: u.evicted
            for u in usage(self._frames().values(), self.large.store)
            if u.evicted
        }

    def evicted_variables(self) -> dict[int, list[str]]:
        """Frame -> variables whose value from before it was evicted."""
        if self.variables is None:
            return {}
        folded = variable_usage.needs(self._entries())
        return variable_usage.evicted_names(folded, (d for d, _, _ in self.variables.blobs()))

    def report(self) -> StorageReport:
        state = self.large.store.root.parent
        views = self._frames()
        rows = usage(views.values(), self.large.store)
        needed = set().union(*(r.keys for r in rows)) if rows else set()
        objects = list(self.large.store.list())
        try:
            free = shutil.disk_usage(state).free
        except OSError:
            free = 0
        kinds, others = by_kind(state)
        per_frame: dict[int, variable_usage.FrameVariables] = {}
        if self.variables is not None:
            sizes = {d: size for d, size, _ in self.variables.blobs()}
            folded = variable_usage.needs(self._entries())
            per_frame = variable_usage.by_frame(folded, sizes)
        return StorageReport(
            root=state,
            budget=self.large.budget,
            large_bytes=kinds["large"],
            git_bytes=kinds["git"],
            ledger_bytes=kinds["ledger"],
            free_bytes=free,
            frames=rows,
            unreferenced_bytes=sum(o.size for o in objects if o.key not in needed),
            evictions=self.large.store.evictions(),
            variables_bytes=kinds["variables"],
            logs_bytes=kinds["logs"],
            other_bytes=kinds["other"],
            other_names=[name for _, name in others[:3]],
            variables=per_frame,
            cells={f: v.execution_count for f, v in views.items()},
            variable_evictions=self.variables.evictions() if self.variables is not None else [],
        )


def _eviction_notice(gone: list[Victim], freed: int, budget: int) -> str:
    frames = sorted({f for v in gone for f in v.frames})
    where = f" of frame(s) {', '.join(map(str, frames))}" if frames else ""
    names = sorted({n for v in gone if v.store == "variables" for n in v.names})
    what = "large pre-images" if all(v.store == "large" for v in gone) else "pre-images"
    lost = f"; variables a rewind can no longer restore: {', '.join(names)}" if names else ""
    return (
        f"Logician: evicted {freed / 1e6:,.1f} MB of {what}{where} to stay within "
        f"checkpoints.max_store_bytes ({budget / 1e6:,.1f} MB){lost}."
    )
