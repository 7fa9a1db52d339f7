"""The one merge: plain-dict layers, lowest first, into one dict plus provenance.

Per-key rules come from the schema: a list declared `"merge": "union"` accumulates every
layer's items (first occurrence kept, in layer order); any other value - a `replace` list, a
scalar - is replaced by the highest layer that sets it; tables merge key by key. Nothing is
validated here: the merged dict is validated once, by the resolver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._keys import KeyPath, lookup
from ._sources import LAYER_ORDER, Layer, LayerName

__all__ = ["Merged", "merge_layers", "highest"]


@dataclass(frozen=True)
class Merged:
    data: dict[str, Any]
    provenance: dict[KeyPath, LayerName]
    """Leaf path -> the highest layer that set it (tables are not leaves)."""
    elements: dict[KeyPath, list[LayerName]]
    """Path of a list -> the layer each of its items came from."""


def highest(names: Sequence[LayerName]) -> LayerName:
    return max(names, key=LAYER_ORDER.index)


def merge_layers(layers: Sequence[Layer]) -> Merged:
    """Merge `layers` (in any order; applied lowest to highest)."""
    data: dict[str, Any] = {}
    provenance: dict[KeyPath, LayerName] = {}
    elements: dict[KeyPath, list[LayerName]] = {}
    for layer in sorted(layers, key=lambda item: LAYER_ORDER.index(item.name)):
        _merge_into(data, layer.data, (), layer.name, provenance, elements)
    return Merged(data, provenance, elements)


def _forget(path: KeyPath, provenance: dict[KeyPath, Any], elements: dict[KeyPath, Any]) -> None:
    for table in (provenance, elements):
        for key in [k for k in table if k[: len(path)] == path]:
            del table[key]


def _union(items: Sequence[Any], into: list[Any] | None = None) -> tuple[list[Any], list[int]]:
    out = list(into or [])
    added = []
    for item in items:
        if item not in out:
            out.append(item)
            added.append(len(out) - 1)
    return out, added


def _merge_into(
    target: dict[str, Any],
    source: Mapping[str, Any],
    prefix: KeyPath,
    layer: LayerName,
    provenance: dict[KeyPath, LayerName],
    elements: dict[KeyPath, list[LayerName]],
) -> None:
    for key, value in source.items():
        path = prefix + (key,)
        current = target.get(key)
        if isinstance(value, Mapping):
            if not isinstance(current, dict):
                _forget(path, provenance, elements)
                current = target[key] = {}
            if not value:
                provenance[path] = layer  # an explicit empty table is still "set here"
            _merge_into(current, value, path, layer, provenance, elements)
            continue
        spec = lookup(path)
        is_list = isinstance(value, (list, tuple))
        if is_list and spec is not None and spec.merge == "union":
            if isinstance(current, list) and path in elements:
                merged, added = _union(value, current)
                elements[path] = elements[path] + [layer] * len(added)
            else:
                _forget(path, provenance, elements)
                merged, added = _union(value)
                elements[path] = [layer] * len(merged)
            target[key] = merged
        else:
            _forget(path, provenance, elements)
            target[key] = list(value) if is_list else value
            if is_list:
                elements[path] = [layer] * len(value)
        provenance[path] = layer
