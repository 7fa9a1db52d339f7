"""Per-key failure of configuration, and the one case that fails closed for the whole agent.

A key that a layer states badly (unknown, of the wrong type, out of range, a table where a
value belongs or the other way round, one list item that is not a rule) is dropped from that
layer alone, with a notice naming the file and line or the environment variable and why; the
rest of the layer applies. This module decides what to drop and removes it from a copy of the
layer; it reads no file and never raises for user input.

The model endpoint is the exception. `model.base_url`, `model.provider` and
`model.api_key_env` decide where the user's API key is sent: if a layer that would set one of
them cannot be read, or its value for one is dropped, falling back to a lower layer or to the
default would send the key to a public endpoint the user never chose (issue 27, finding 8).
`model_refusal` then names the layer, and the agent refuses every model call until the
configuration is fixed - or until a higher layer validly sets the same key, which then
decides whatever the broken one said. A file that does not parse may set anything, so it
counts as setting all three. Everything else keeps working with the rest of the configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ._errors import explain
from ._keys import KeyPath, format_key, parse_key, shown_key, suggest
from ._merge import Merged, highest
from ._sources import LAYER_ORDER, Layer, LayerName

__all__ = ["GUARDED", "Dropped", "blame", "drops_for", "model_refusal", "present", "strip"]

GUARDED: tuple[KeyPath, ...] = (
    ("model", "base_url"),
    ("model", "provider"),
    ("model", "api_key_env"),
)
"""The keys that choose where the API key goes: never silently replaced by a default."""
_GUARDED_KEYS = frozenset(format_key(path) for path in GUARDED)


class _Whole:
    def __repr__(self) -> str:
        return "WHOLE"


WHOLE: Any = _Whole()
"""`Dropped.item` when the whole key is dropped, not one item of its list."""


@dataclass(frozen=True)
class Dropped:
    """One key (or one list item) left out of one layer."""

    layer: LayerName
    """The layer that stated it."""
    path: KeyPath
    """The key as the layer states it (`profiles.NAME.KEY` inside a profile's definition)."""
    problem: str
    """`where: key: what is wrong`, worded for the user (no secret values)."""
    item: Any = WHOLE
    """For one bad item of a list: that item; the rest of the list stays."""
    near: KeyPath | None = None
    """For an unknown key whose closest known key is a `GUARDED` one: that key (a typo)."""

    def notice(self, title: str) -> str:
        return f"{self.problem} - dropped; the rest of the {title} applies."

    def guarded(self, selected_profile: str | None) -> tuple[LayerName, tuple[KeyPath, ...]]:
        """The layer the key would have applied in, and the `GUARDED` keys it may have set."""
        path, rank = self.path, self.layer
        if len(path) >= 2 and path[0] == "profiles":
            if path[1] != selected_profile:
                return rank, ()  # a profile nobody selected sets nothing
            path, rank = path[2:], "profile"
        if self.near is not None:
            return rank, (self.near,)
        return rank, tuple(g for g in GUARDED if path[: len(g)] == g or g[: len(path)] == path)


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


def present(data: Mapping[str, Any], path: KeyPath, item: Any = WHOLE) -> bool:
    """Whether `data` states `path` (and, for a list item, that item)."""
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return item is WHOLE or (isinstance(node, (list, tuple)) and item in node)


def strip(layer: Layer, drops: Sequence[Dropped]) -> Layer:
    """`layer` without the keys (and list items) dropped from it."""
    mine = [d for d in drops if d.layer == layer.name]
    if not mine:
        return layer
    data = _copy(layer.data)
    for dropped in mine:
        if not present(data, dropped.path, dropped.item):
            continue
        parent: Any = data
        for part in dropped.path[:-1]:
            parent = parent[part]
        last = dropped.path[-1]
        if dropped.item is WHOLE:
            del parent[last]
        else:
            parent[last] = [v for v in parent[last] if v != dropped.item]
    return replace(layer, data=data)


def blame(
    loc: tuple[Any, ...], merged: Merged, applied: Sequence[LayerName]
) -> tuple[LayerName, KeyPath, Any]:
    """The layer responsible for a validation error at `loc`, the path it set, and (for one
    list item) that item.

    The deepest key on `loc` that some layer set decides: a list item is blamed on the layer
    that contributed it, a table (e.g. one missing a required key) on the highest layer
    that set anything inside it.
    """
    path = tuple(p for p in loc if isinstance(p, str))
    index = next((p for p in loc if isinstance(p, int)), None)
    for depth in range(len(path), 0, -1):
        prefix = path[:depth]
        if index is not None and prefix in merged.elements and depth == len(path):
            owners = merged.elements[prefix]
            if index < len(owners):
                node: Any = merged.data
                for part in prefix:
                    node = node[part]
                return owners[index], prefix, node[index]
        if prefix in merged.provenance:
            return merged.provenance[prefix], prefix, WHOLE
        under = [n for p, n in merged.provenance.items() if p[:depth] == prefix and n != "default"]
        if under:
            return highest(under), prefix, WHOLE
    fallback: list[LayerName] = ["default"]
    return highest([n for n in applied if n != "default"] or fallback), path, WHOLE


def _expand(error: Mapping[str, Any]) -> list[tuple[tuple[Any, ...], str | None, str]]:
    """(loc, shown key or None, kind) for one pydantic error; a profile's table reports each
    of its problems at its own key (see `_profiles.check_profile`)."""
    loc = tuple(error.get("loc", ()))
    details = (error.get("ctx") or {}).get("details")
    if error.get("type") == "profile_invalid" and details:
        return [((*loc, *inner), what, "profile_invalid") for inner, what in details]
    return [(loc, None, str(error.get("type", "")))]


def drops_for(
    errors: Sequence[Mapping[str, Any]],
    merged: Merged,
    applied: Sequence[LayerName],
    where: Callable[[LayerName, KeyPath], str],
) -> list[Dropped]:
    """What to drop for one failed validation: one `Dropped` per error. A drop blamed on the
    built-in defaults is returned too; the caller treats it as the bug it is."""
    out: list[Dropped] = []
    for error in errors:
        for loc, what, kind in _expand(error):
            name, set_at, item = blame(loc, merged, applied)
            if what is None:
                key, what = explain({**error, "loc": loc}, env=name == "env")
            else:
                key = shown_key(loc)
            near = None
            if kind == "extra_forbidden":
                inner = set_at[2:] if set_at[:1] == ("profiles",) else set_at
                hint = suggest(inner)
                near = parse_key(hint) if hint in _GUARDED_KEYS else None
            problem = f"{where(name, set_at)}: {key}: {what}"
            out.append(Dropped(name, set_at, problem, item, near))
    return out


def _decided_above(
    layer: LayerName, keys: Sequence[KeyPath], provenance: Mapping[KeyPath, LayerName]
) -> bool:
    """Whether `layer` itself (with its bad key dropped: a typo beside the real key) or a layer
    above validly sets every one of `keys`, so the broken entry cannot decide them."""
    rank = LAYER_ORDER.index(layer)
    return all(key in provenance and LAYER_ORDER.index(provenance[key]) >= rank for key in keys)


def model_refusal(
    unreadable: Mapping[LayerName, tuple[str, ...]],
    unsure: Mapping[LayerName, Sequence[str]],
    drops: Sequence[Dropped],
    selected_profile: str | None,
    provenance: Mapping[KeyPath, LayerName],
) -> tuple[str, ...]:
    """Why model calls must stop, one line per cause; empty when the endpoint is known.

    `unreadable`: layers left out whole (a file that does not parse, cannot be read), which
    may have set the endpoint; `unsure`: entries dropped while reading that may have meant it;
    `provenance`: the applied merge's, to see what a higher layer decides anyway.
    """
    keys = ", ".join(format_key(path) for path in GUARDED)
    reasons = [
        f"{problem} (the file could not be read, so it may set {keys})"
        for name, problems in unreadable.items()
        if not _decided_above(name, GUARDED, provenance)
        for problem in problems
    ]
    reasons += [
        f"{problem} (it may have been meant to set {keys})"
        for name, problems in unsure.items()
        if not _decided_above(name, GUARDED, provenance)
        for problem in problems
    ]
    for dropped in drops:
        layer, touched = dropped.guarded(selected_profile)
        if touched and not _decided_above(layer, touched, provenance):
            typo = f" (may be a typo of {format_key(dropped.near)})" if dropped.near else ""
            reasons.append(dropped.problem + typo)
    return tuple(reasons)
