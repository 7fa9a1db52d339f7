"""The frame diff: what changed between two snapshots, from git's raw tree diff, the side
store's large files and the fingerprints of uncaptured paths (pure; no git process here).

Must never: report a SQLite side file (`-wal`, `-journal`) as a change of its own - it is part
of its database.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..types.path_states import PathChange, PathState, SkippedPath
from ._fs import split_z, state
from .large_files import journal_of

if TYPE_CHECKING:
    from .git_snapshot import Snapshot


def snapshot_diff(
    raw: bytes, before: Snapshot, after: Snapshot
) -> tuple[list[PathChange], list[SkippedPath]]:
    """Changes from `git diff-tree -r -z --raw` output `raw`, plus large and skipped paths."""
    changes: list[PathChange] = []
    parts = split_z(raw)
    for meta, raw_path in zip(parts[0::2], parts[1::2], strict=False):
        old_mode, new_mode, old_sha, new_sha, _status = meta.decode()[1:].split(" ")
        changes.append(
            PathChange(
                path=raw_path.decode("utf-8", "surrogateescape"),
                before=state(old_mode, old_sha),
                after=state(new_mode, new_sha),
            )
        )
    skipped: list[SkippedPath] = []
    captured = {c.path: c for c in changes}
    for change in large_changes(before, after, captured):
        if change.path not in captured:
            changes.append(change)
        captured[change.path] = change
    for path in sorted(set(before.uncaptured) | set(after.uncaptured)):
        b, a = before.uncaptured.get(path), after.uncaptured.get(path)
        if (b is not None and a is not None and b[1] == a[1]) or journal_of(path):
            continue
        reason = (a or b)[0]  # type: ignore[index]
        if path in captured:  # e.g. a small file grew past the cap: the pre-image is known
            change = captured[path]
            captured[path] = change.model_copy(
                update={"after": PathState.uncaptured(reason, a[1])} if a else {}
            )
            continue
        skipped.append(
            SkippedPath(
                path=path, reason=reason, existed_before=b is not None, exists_after=a is not None
            )
        )
    return [captured[c.path] for c in changes], skipped


def large_changes(
    before: Snapshot, after: Snapshot, in_git: Mapping[str, PathChange]
) -> list[PathChange]:
    """Changes of paths that were or became large; a path that moved between git and the side
    store keeps git's side of the change (its small version)."""
    out = []
    for path in sorted(set(before.large) | set(after.large)):
        b, a = before.large.get(path), after.large.get(path)
        if b is not None and a is not None and b.same_as(a):
            continue
        git_side = in_git.get(path)
        out.append(
            PathChange(
                path=path,
                before=b or _other_side(before, path, git_side, True),
                after=a or _other_side(after, path, git_side, False),
            )
        )
    return out


def _other_side(snap: Snapshot, path: str, git_side: PathChange | None, pre: bool) -> PathState:
    if git_side is not None:
        return git_side.before if pre else git_side.after
    if path in snap.uncaptured:
        reason, fp = snap.uncaptured[path]
        return PathState.uncaptured(reason, fp)
    return PathState.absent()
