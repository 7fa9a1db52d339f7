"""The text of `%logician rewind N --dry-run`, and of a rewind's, resume's or undo's report:
one line per path for a few, and for thousands per-directory counts ("data/parts/ — 19,998
files created → delete", "data/parts/ — 19,998 deleted") then the first `PATHS_SHOWN` paths,
never 20,000 lines in a cell's output. A report's paths that did not simply go back (conflicts,
failures, paths left alone, anything with a reason) are listed before the routine ones.

Pure: a plan in, lines out. The directories are grouped as the rewind dialog groups them
(`preview_groups.py`), so the sidebar and the cell show the same directories.

Must never: do I/O, or leave a path out of every count (each path is in exactly one group,
and the totals say how many paths were not listed one by one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from ..types.path_states import PathState
from ..workspace import RewindPlan
from .preview_groups import group_files

PATHS_SHOWN = 50
"""Paths listed one by one at most, per kind (to restore or delete, conflicts, ...)."""

REPORT_LISTED = 200
"""A rewind's, resume's or undo's report lists every path up to this many (a nested
repository's few hundred files read better one by one than counted)."""

GROUPS_SHOWN = 30
"""Directories counted at most: past this, deeper ones fold into their ancestors."""


class _Listed(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def detail(self) -> str: ...


class _Done(_Listed, Protocol):
    @property
    def action(self) -> str: ...


ROUTINE = ("restored", "deleted", "recreated")
"""A report's actions that need no line of their own among thousands (without a detail)."""


def file_action(plan: RewindPlan, path: str, target: PathState) -> str:
    """What a rewind does to one path of its plan, in the user's word: delete (a popped cell
    created it), recreate (a popped cell deleted it) or restore."""
    if target.kind == "absent":
        return "delete"
    return "recreate" if path in plan.recreate else "restore"


def rewind_plan_lines(plan: RewindPlan, frames: str) -> list[str]:
    """The dry run's lines; `frames` is the popped frames as the user reads them (`3..5`)."""
    lines = [f"Dry run: rewinding would pop frame(s) {frames}"]
    restore = [(p, file_action(plan, p, t)) for p, t in plan.restore]
    if len(restore) <= PATHS_SHOWN:
        lines += [f"  would {verb} {p}" for p, verb in restore]
    else:
        lines += _grouped(restore)
    lines += _listed("conflict", plan.conflicts)
    lines += _listed("external", plan.external)
    lines += _listed("not restorable", plan.skipped)
    if plan.messages_dropped:
        lines.append(f"  {plan.messages_dropped} conversation message(s) would be dropped")
    return lines


def _grouped(restore: list[tuple[str, str]]) -> list[str]:
    deletes = sum(1 for _, verb in restore if verb == "delete")
    lines = [
        f"  {len(restore):,} files: {deletes:,} would be deleted, "
        f"{len(restore) - deletes:,} restored; by directory:"
    ]
    files: list[dict[str, Any]] = [{"path": p, "action": verb} for p, verb in restore]
    for group in group_files(files, GROUPS_SHOWN).values():
        where = (group.directory or "(top level)/") + (" and below" if group.below else "")
        summary = group.summary()
        changed = summary["restore"] - summary["recreate"]
        if summary["delete"]:
            lines.append(f"    {where} — {_files(summary['delete'])} created → delete")
        if summary["recreate"]:
            lines.append(f"    {where} — {_files(summary['recreate'])} deleted → recreate")
        if changed:
            lines.append(f"    {where} — {_files(changed)} changed → restore")
    lines.append(f"  the first {PATHS_SHOWN}:")
    lines += [f"  would {verb} {p}" for p, verb in restore[:PATHS_SHOWN]]
    lines.append(f"  … and {len(restore) - PATHS_SHOWN:,} more (counted above)")
    return lines


def _listed(label: str, paths: Sequence[_Listed]) -> list[str]:
    lines = [f"  {label}: {r.path}: {r.detail}" for r in paths[:PATHS_SHOWN]]
    if len(paths) > PATHS_SHOWN:
        lines.append(f"  … and {len(paths) - PATHS_SHOWN:,} more {label} path(s)")
    return lines


def _files(n: int) -> str:
    return f"{n:,} file{'s' if n != 1 else ''}"


def result_lines(paths: Sequence[_Done]) -> list[str]:
    """A report's path lines: each path up to `REPORT_LISTED`; for thousands, the paths with
    something to say (at most `PATHS_SHOWN` per action), counts of the rest by directory, and
    the first `PATHS_SHOWN` of them."""
    if len(paths) <= REPORT_LISTED:
        return [_line(p) for p in paths]
    routine = [p for p in paths if p.action in ROUTINE and not p.detail]
    said: dict[str, list[_Done]] = {}
    for p in paths:
        if p.action not in ROUTINE or p.detail:
            said.setdefault(p.action, []).append(p)
    lines: list[str] = []
    for action, some in said.items():
        lines += [_line(p) for p in some[:PATHS_SHOWN]]
        if len(some) > PATHS_SHOWN:
            lines.append(f"  … and {len(some) - PATHS_SHOWN:,} more {action}")
    if not routine:
        return lines
    lines.append(f"  {len(routine):,} other files, by directory:")
    files: list[dict[str, Any]] = [{"path": p.path, "action": p.action} for p in routine]
    for group in group_files(files, GROUPS_SHOWN).values():
        where = (group.directory or "(top level)/") + (" and below" if group.below else "")
        tally = Counter(f["action"] for f in group.files)
        lines.append(f"    {where} — " + ", ".join(f"{n:,} {a}" for a, n in sorted(tally.items())))
    lines += [_line(p) for p in routine[:PATHS_SHOWN]]
    if len(routine) > PATHS_SHOWN:
        lines.append(f"  … and {len(routine) - PATHS_SHOWN:,} more (counted above)")
    return lines


def _line(p: _Done) -> str:
    return f"  {p.action:<9} {p.path}" + (f" ({p.detail})" if p.detail else "")
