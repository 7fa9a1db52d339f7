"""Which configuration layer contributed a permission rule: read from the config snapshot.

Kept apart from `permissions.py`, which decides, so that module stays about the order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


def config_layer_of(config: Any) -> Callable[[str, str], str | None]:
    """A `layer_of` for `PermissionPolicy` over an `EffectiveConfig`: the lowest applied
    layer whose own data lists the rule (the merge keeps a union list's first occurrence, so
    that is the layer it came from). Reads only the snapshot, never a file."""
    applied: Iterable[str] = getattr(config, "applied_layers", ())
    tables: list[tuple[str, Mapping[str, Any]]] = []
    for name in applied:
        data = config.layer(name).data
        section = data.get("permissions") if isinstance(data, Mapping) else None
        if isinstance(section, Mapping):
            tables.append((name, section))

    def layer_of(list_name: str, rule: str) -> str | None:
        for name, section in tables:
            rules = section.get(list_name)
            if isinstance(rules, (list, tuple)) and any(
                isinstance(r, str) and r.strip() == rule for r in rules
            ):
                return name
        return None

    return layer_of
