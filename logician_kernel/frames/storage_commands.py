"""`storage` and `gc`: what the side store holds, and freeing it on demand (Jupyter-free, so
the magics, the headless runner and scripts share them).

Must never: evict a large pre-image of the current workspace content, or raise anything but a
one-line `RewindError` for a user's mistake.
"""

from __future__ import annotations

import shutil

from .file_checkpoints import FileCheckpoints, RewindError
from .storage_report import StorageReport, by_kind, format_report
from .store_budget import SideStoreBudget


def _budget(checkpoints: FileCheckpoints, what: str) -> SideStoreBudget:
    checkpoints.settle()
    if checkpoints.budget is None:
        why = checkpoints.capture_disabled_reason or "large files are not captured"
        raise RewindError(f"{what}: the large-file side store is not in use ({why})")
    return checkpoints.budget


def storage_text(checkpoints: FileCheckpoints) -> str:
    """`.logician/` by kind, and the side store and variables by frame, with what was
    evicted; by kind only when large files are not captured (no side store, no budget)."""
    checkpoints.settle()
    if checkpoints.budget is not None:
        return format_report(checkpoints.budget.report())
    state = checkpoints.ledger.path.parent.parent  # <state>/threads/<thread>.jsonl
    kinds, others = by_kind(state)
    try:
        free = shutil.disk_usage(state).free
    except OSError:
        free = 0
    why = checkpoints.capture_disabled_reason or "large files are not captured"
    report = StorageReport(
        root=state,
        budget=0,
        large_bytes=kinds["large"],
        git_bytes=kinds["git"],
        ledger_bytes=kinds["ledger"],
        free_bytes=free,
        frames=[],
        unreferenced_bytes=0,
        evictions=[],
        variables_bytes=kinds["variables"],
        logs_bytes=kinds["logs"],
        other_bytes=kinds["other"],
        other_names=[name for _, name in others[:3]],
    )
    return format_report(report) + f"\n(file capture is off: {why})"


def collect_garbage(checkpoints: FileCheckpoints, keep: int | None) -> str:
    """Evict pre-images (large files, variables) outside the `keep` newest frames (default:
    keep_recent_frames)."""
    if keep is not None and keep < 0:
        raise RewindError(f"gc: --keep must be 0 or more, not {keep}")
    budget = _budget(checkpoints, "gc")
    kept = budget.large.limits.keep_recent_frames if keep is None else keep
    freed, frames = budget.gc(keep)
    if not freed:
        return f"gc: nothing to free (the {kept} newest frames and current files are kept)"
    lost = (
        f"; frames {', '.join(map(str, frames))} can no longer restore their large files or "
        "variables"
        if frames
        else ""
    )
    return f"gc: freed {freed / 1e6:,.1f} MB of pre-images{lost}"
