"""The rewind dialog's files, grouped by directory with counts and sent in pages: a rewind of
20,000 files is "data/parts/ - 20,000 files created -> delete" on one line, expanded a page at
a time, never 20,000 lines in one message.

Pure: a plan's files in, groups and pages out (`rewind_source.py` keeps the last preview's
grouping, so the pages of one dialog cost no second plan).

Must never: do I/O, or drop a file from every group (each file is in exactly one group).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GROUPS_SHOWN = 200
"""Groups at most: past this, deeper directories fold into their ancestors."""

FILES_PAGE = 200
"""Files sent with the preview (the first ones) and per page when a group is expanded."""

DETAILS_SHOWN = 200
"""Conflicts, skipped and external paths sent with the preview at most (their totals are sent)."""


@dataclass
class Group:
    """The files of one directory (with `below`, of its subdirectories too)."""

    directory: str
    """`data/parts/`; `` for the workspace's top level."""
    below: bool = False
    """It also holds the files of its subdirectories (folded to keep the groups few)."""
    files: list[dict[str, Any]] = field(default_factory=list)
    """Its files, in the plan's order."""

    def summary(self) -> dict[str, Any]:
        """As the `frames.preview` answer sends it."""
        delete = sum(1 for f in self.files if f["action"] == "delete")
        return {
            "directory": self.directory,
            "below": self.below,
            "delete": delete,
            "restore": len(self.files) - delete,
            "recreate": sum(1 for f in self.files if f["action"] == "recreate"),
        }


def group_files(files: list[dict[str, Any]], limit: int = GROUPS_SHOWN) -> dict[str, Group]:
    """The files grouped by their directory; when there would be more than `limit` groups,
    by their directory cut to the deepest level that gives at most `limit` (folded)."""
    # Worked out per distinct directory (a few), not per file (20,000): no object is made
    # per file beyond its place in its group's list, so a dialog's preview starts no
    # collection of the kernel's heap.
    where = [f["path"].rstrip("/").rpartition("/")[0] for f in files]
    dirs = {d: d.split("/") if d else [] for d in set(where)}
    depth = max((len(d) for d in dirs.values()), default=0)
    while depth > 0 and len({tuple(d[:depth]) for d in dirs.values()}) > limit:
        depth -= 1
    key_of = {
        name: ("".join(p + "/" for p in d[:depth]), len(d) > depth) for name, d in dirs.items()
    }
    groups: dict[str, Group] = {}
    for key, below in key_of.values():
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(key)
        group.below = group.below or below
    for f, name in zip(files, where, strict=True):
        groups[key_of[name][0]].files.append(f)
    return dict(sorted(groups.items()))


def page(group: Group, offset: int, limit: int) -> list[dict[str, Any]]:
    """One page of a group's files."""
    return group.files[offset : offset + limit]
