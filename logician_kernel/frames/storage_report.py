"""What `.logician/` holds, by kind, and the plain text of `%logician storage`.

Counting only: the budget's decisions (what to evict, in which order) are `store_budget.py`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import variable_usage

if TYPE_CHECKING:
    from .store_budget import FrameUsage

__all__ = ["KINDS", "StorageReport", "by_kind", "dir_bytes", "format_report"]


def dir_bytes(root: Path, *, exclude: tuple[str, ...] = ()) -> int:
    """Bytes of the regular files under `root` (for the storage report); the top-level
    directories named in `exclude` are left out (a benchmark's `.logician/`)."""
    total = 0
    for base, dirs, files in os.walk(root):
        if exclude and base == str(root):
            dirs[:] = [d for d in dirs if d not in exclude]
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
    variables_bytes: int = 0
    logs_bytes: int = 0
    other_bytes: int = 0
    other_names: list[str] = field(default_factory=list)
    """The biggest entries counted as `other`, for the user to recognise."""
    variables: dict[int, variable_usage.FrameVariables] = field(default_factory=dict)
    """Active frame -> what its variables take and which were evicted."""
    cells: dict[int, int | None] = field(default_factory=dict)
    """Frame -> its cell's execution count."""
    variable_evictions: list[dict] = field(default_factory=list)

    @property
    def total(self) -> int:
        return (
            self.large_bytes
            + self.git_bytes
            + self.variables_bytes
            + self.ledger_bytes
            + self.logs_bytes
            + self.other_bytes
        )


KINDS = {
    "git": "git",
    "large": "large",
    "variables": "variables",
    "threads": "ledger",
    "logs": "logs",
    "audit.jsonl": "logs",
}
"""Top-level entries of `.logician/` by the kind the storage report counts them as (the
rest is `other`)."""


def by_kind(state: Path) -> tuple[dict[str, int], list[tuple[int, str]]]:
    """Bytes of every regular file under `state`, by kind; and the `other` entries by size."""
    kinds = dict.fromkeys(set(KINDS.values()) | {"other"}, 0)
    others: list[tuple[int, str]] = []
    try:
        entries = list(os.scandir(state))
    except OSError:
        return kinds, others
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                size = dir_bytes(Path(entry.path))
            else:
                size = entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
        kind = KINDS.get(entry.name, "other")
        kinds[kind] += size
        if kind == "other" and size:
            others.append((size, entry.name))
    others.sort(reverse=True)
    return kinds, others


def _mb(n: int) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 10**10 else f"{n / 1e6:,.1f} MB"


def format_report(r: StorageReport) -> str:
    """The plain text of `%logician storage`."""
    other = f" ({', '.join(r.other_names)})" if r.other_names else ""
    lines = [
        f"Logician storage in {r.root}: {_mb(r.total)}; {_mb(r.free_bytes)} free on the disk",
        f"  large files (side store)  {_mb(r.large_bytes):>12}   "
        + (
            f"budget {_mb(r.budget)} with variables (checkpoints.max_store_bytes)"
            if r.budget
            else "no budget applies: large files are not captured"
        ),
        f"  variables                 {_mb(r.variables_bytes):>12}",
        f"  small files (git objects) {_mb(r.git_bytes):>12}",
        f"  ledger (threads)          {_mb(r.ledger_bytes):>12}",
        f"  logs                      {_mb(r.logs_bytes):>12}",
        f"  other                     {_mb(r.other_bytes):>12}{other}",
        f"  current file contents and no longer needed versions: {_mb(r.unreferenced_bytes)}",
    ]
    large = {u.frame: u for u in r.frames}
    frames = sorted(set(large) | set(r.variables))
    if frames:
        lines.append("frame  cell     large pre-images  size          variables stored  state")
        for f in frames:
            count = r.cells.get(f)
            cell = f"In [{count}]" if count is not None else "-"
            u, v = large.get(f), r.variables.get(f)
            state = []
            if u is not None and u.evicted:
                state.append(f"large files evicted: {', '.join(u.evicted)}")
            if v is not None and v.evicted:
                state.append(f"variables evicted: {', '.join(v.evicted)}")
            if v is not None and v.shared:
                state.append(f"{v.shared} value(s) shared with an earlier frame, counted there")
            n_large = len(u.keys) if u is not None else 0
            size = _mb(u.present_bytes) if u is not None else "-"
            stored = _mb(v.stored_bytes) if v is not None else "-"
            lines.append(
                f"{f:<6} {cell:<8} {n_large:<17} {size:<13} {stored:<17} "
                f"{'; '.join(state) or 'kept'}"
            )
        lines.append(
            "(each stored value and file version is counted once, at the first frame that "
            "stored it; git objects are shared by all frames and not split)"
        )
    else:
        lines.append("no frame holds a large pre-image or a stored variable")
    if r.evictions:
        size = sum(e.get("size", 0) for e in r.evictions)
        lines.append(f"large files evicted so far: {len(r.evictions)} object(s), {_mb(size)}")
    if r.variable_evictions:
        size = sum(e.get("size", 0) for e in r.variable_evictions)
        lines.append(f"variables evicted so far: {len(r.variable_evictions)} value(s), {_mb(size)}")
    return "\n".join(lines)
