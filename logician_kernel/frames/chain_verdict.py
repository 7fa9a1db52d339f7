"""What a rewind may do with each path, from who changed it (attribution.py recorded that in
each frame's close): the popped frames' own changes are reverted, external ones kept or, when
they came after an own change, a conflict (`judge_chain`); and the words that say who changed a
path (`who`) and what the cell did not write (`external_notice`).

Must never: do I/O, or let a rewind put back an external change without `include_external`
(or, for a path the frame changed too, `force`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..ledger.entries import FrameClose
from ..types.path_states import PathChange


def who(change: PathChange) -> str:
    """One phrase for listings: "cell", "tool bash (call_1)", "external", "cell + saved"."""
    by = change.by or "cell"
    text = f"tool {change.tool or '?'} ({change.call_id})" if by == "tool" else by
    if change.outside_write and by != "external":
        text += f" + {change.outside_write}"
    return text


@dataclass(frozen=True)
class ChainVerdict:
    """What a rewind may do with one path, given every popped frame's change to it."""

    start: int | None
    """Index in the chain of the first change the rewind reverts (None: leave the path)."""
    external: str = ""
    """Why the path is left alone as external (when `start` is None)."""
    conflict: str = ""
    """Why reverting it would destroy someone else's later change ("" when it would not)."""


_REVERT_ALL = ChainVerdict(start=0)


def judge_chain(
    chain: Sequence[tuple[int, PathChange]],
    *,
    include_external: bool,
    keep_uncertain: bool = False,
) -> ChainVerdict:
    """Rewinding reverts the popped frames' own changes only. External changes before the
    first own one are kept by restoring to that own change's pre-state; an external change
    after it (or a save during it) is a conflict. `keep_uncertain`: a change whose writer
    could not be established counts as external (left alone, and said why)."""
    if include_external:
        return ChainVerdict(start=0)
    if len(chain) == 1:  # the common case, 20,000 times in a big rewind: what the rest decides
        change = chain[0][1]
        if change.by != "external" and not change.outside_write:
            if not (keep_uncertain and change.uncertain):
                return _REVERT_ALL
    own = [
        i
        for i, (_, c) in enumerate(chain)
        if (c.by or "cell") != "external" and not (keep_uncertain and c.uncertain)
    ]
    if not own:
        frame, change = chain[-1]
        if change.uncertain and keep_uncertain:
            return ChainVerdict(
                start=None,
                external=f"frame {frame}: {change.uncertain}; left alone (--keep-uncertain)",
            )
        return ChainVerdict(
            start=None,
            external=(
                f"changed outside this kernel during frame {frame} ({change.basis or 'external'}); "
                "left alone - `--include-external` reverts it"
            ),
        )
    first = own[0]
    for frame, change in chain[first:]:
        if change.by == "external" or (keep_uncertain and change.uncertain):
            return ChainVerdict(
                start=first,
                conflict=(
                    f"changed outside this kernel during frame {frame} ({change.basis}) after "
                    f"frame {chain[first][0]} changed it; left alone - `--force` reverts it"
                ),
            )
        if change.outside_write:
            return ChainVerdict(
                start=first,
                conflict=(
                    f"frame {frame} changed it and it was also changed outside this kernel during "
                    f"that frame ({change.outside_write}); left alone - `--force` reverts it"
                ),
            )
    return ChainVerdict(start=first)


def clock(iso: str | None) -> str:
    """A ledger (UTC) time as the user's local HH:MM:SS."""
    if not iso:
        return "?"
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return iso


def external_notice(closed: FrameClose) -> str | None:
    """The cell's line about changes made outside this kernel during it (None if none): said
    at once, so a write of the cell's own that looked external is one flag away."""
    external = [c for c in closed.changes if c.by == "external"]
    mixed = [c for c in closed.changes if c.by != "external" and c.outside_write]
    uncertain = [c for c in closed.changes if c.uncertain and not c.outside_write]
    if not external and not mixed and not uncertain:
        return None
    parts = []
    if uncertain:
        names = ", ".join(c.path for c in uncertain[:3])
        more = f" and {len(uncertain) - 3} more" if len(uncertain) > 3 else ""
        parts.append(
            f"Logician: frame {closed.frame}: {len(uncertain)} path(s) with an uncertain writer "
            f"({names}{more}: {uncertain[0].uncertain}); a rewind reverts them unless "
            "`--keep-uncertain`."
        )
    if external:
        names = ", ".join(c.path for c in external[:3])
        more = f" and {len(external) - 3} more" if len(external) > 3 else ""
        bases = {c.basis for c in external}
        why = external[0].basis if len(bases) == 1 else f"`%logician diff {closed.frame}` says how"
        parts.append(
            f"Logician: frame {closed.frame}: {len(external)} path(s) changed outside this kernel "
            f"during the cell ({names}{more}; {why}); a rewind leaves them alone "
            f"(`%logician rewind {closed.frame} --include-external` reverts them)."
        )
    if mixed:
        names = ", ".join(c.path for c in mixed[:3])
        parts.append(
            f"Logician: frame {closed.frame}: {names} changed by the cell and also outside this "
            f"kernel during it ({mixed[0].outside_write}); a rewind leaves them alone (`--force` "
            "reverts them)."
        )
    return "\n".join(parts)
