"""Branches as a read-only view derived from ledger entries (pure; no I/O).

What a rewind discarded is a branch. Every projection item with reason `rewind` makes one
branch, named `b<seq>` after that item's sequence number, holding the frames the rewind popped
and the conversation messages it dropped: the messages of the projection just before the
rewind that lie beyond the common prefix with the rewind's replacement messages.

A branch stays `open` until a later projection item with reason `branch-merge` or
`branch-discard` names it; an undo of the rewind (a `restore` item that `undoes` it) takes
an open branch away again, its messages being the conversation once more. The naming convention is the item's `note`: it starts with
`branch <id>` (e.g. `branch b12`, optionally followed by `: free text`). The first such item
decides the branch's status; later ones naming the same branch change nothing. A note naming
no branch created before the item is ignored.

Merging appends one user message summarising the branch to the current conversation;
discarding keeps the conversation as it is. Both are recorded (so the decision survives
restarts) through the ordinary `ThreadLedger.append(ProjectionItem, **fields)` with the fields
the helpers below return.

Must never: touch the ledger or the workspace, or depend on anything but the entries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from .thread_ledger import MessageEntry, ProjectionItem

BranchStatus = Literal["open", "merged", "discarded"]

_NOTE = re.compile(r"^branch (b\d+)(?![0-9A-Za-z_])")
_RESOLUTION: dict[str, BranchStatus] = {"branch-merge": "merged", "branch-discard": "discarded"}


@dataclass
class Branch:
    """One rewind's discarded work."""

    id: str
    """`b<seq>` of the rewind projection item that made the branch."""
    created_at: str
    """Time of that rewind."""
    frames: list[int] = field(default_factory=list)
    """The frame ids the rewind popped."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The conversation messages the rewind dropped, in order."""
    status: BranchStatus = "open"
    """Whether a later item merged or discarded it."""
    rewind_seq: int = 0
    """Sequence number of the rewind item."""
    resolved_by: int | None = None
    """Sequence number of the item that merged or discarded it."""


def branch_id_of_note(note: str) -> str | None:
    """The branch id a merge/discard item's note names (`branch b12...`), if any."""
    match = _NOTE.match(note)
    return match.group(1) if match else None


def derive_branches(entries: Sequence[BaseModel]) -> list[Branch]:
    """Fold ledger entries into branches, in order of their rewinds."""
    branches: dict[str, Branch] = {}
    messages: list[dict[str, Any]] = []  # the projection so far (as `project` computes it)
    for entry in entries:
        if isinstance(entry, MessageEntry):
            messages.append(entry.message)
        elif isinstance(entry, ProjectionItem):
            if entry.reason == "rewind":
                common = _common_prefix(messages, entry.messages)
                branch = Branch(
                    id=f"b{entry.seq}",
                    created_at=entry.time,
                    frames=list(entry.frames),
                    messages=list(messages[common:]),
                    rewind_seq=entry.seq,
                )
                branches[branch.id] = branch
            elif entry.undoes is not None:
                # An undone rewind discarded nothing: its messages are the conversation again.
                undone = branches.get(f"b{entry.undoes}")
                if undone is not None and undone.status == "open":
                    del branches[undone.id]
            elif entry.reason in _RESOLUTION:
                target = branches.get(branch_id_of_note(entry.note) or "")
                if target is not None and target.status == "open":
                    target.status = _RESOLUTION[entry.reason]
                    target.resolved_by = entry.seq
            messages = list(entry.messages)
    return list(branches.values())


def branch_discard_fields(branch: Branch, current_messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Fields for `ledger.append(ProjectionItem, **fields)` discarding `branch`.

    The conversation stays as it is; the item only records the decision.
    """
    _require_open(branch)
    return {
        "reason": "branch-discard",
        "messages": list(current_messages),
        "note": f"branch {branch.id}",
    }


def branch_merge_fields(
    branch: Branch, summary_text: str, current_messages: list[dict[str, Any]]
) -> dict[str, Any]:
    """Fields for `ledger.append(ProjectionItem, **fields)` merging `branch` as a summary.

    The current conversation gains one user message:
    `[Summary of discarded branch <id>]` followed by the summary on the next line.
    """
    _require_open(branch)
    summary = {
        "kind": "user",
        "content": [
            {"kind": "text", "text": f"[Summary of discarded branch {branch.id}]\n{summary_text}"}
        ],
    }
    return {
        "reason": "branch-merge",
        "messages": [*current_messages, summary],
        "note": f"branch {branch.id}",
    }


def _require_open(branch: Branch) -> None:
    if branch.status != "open":
        raise ValueError(f"branch {branch.id} is already {branch.status}")


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
