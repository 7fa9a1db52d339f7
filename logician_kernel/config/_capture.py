"""Capture lowering: the project settings that make rewind able to restore less.

A trusted project file may tune capture, and it may lower it - turn frames or variables off,
ignore paths, shrink the size limits - for good reasons (a data repository, a huge
checkpoint folder). Lowering applies, but never silently (issue 27, finding 6): the resolver
turns what `lowered` finds into a notice naming the file and the fields, shown in the first
cell and in `%logician config`. Pure: compares plain dicts; reads nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._keys import KeyPath, format_key, mask, to_toml_literal, value_at

__all__ = ["CAPTURE_FIELDS", "lowered"]


def _off(value: Any, base: Any) -> bool:
    return value is False and base is not False


def _added(value: Any, base: Any) -> bool:
    return isinstance(value, (list, tuple)) and any(v not in (base or ()) for v in value)


def _smaller(value: Any, base: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return base is None or (isinstance(base, (int, float)) and value < base)


def _larger(value: Any, base: Any) -> bool:
    return isinstance(value, (int, float)) and isinstance(base, (int, float)) and value > base


@dataclass(frozen=True)
class CaptureField:
    """One setting that, moved one way, makes frames hold less."""

    path: KeyPath
    lowers: Callable[[Any, Any], bool]
    """(project value, value of the layers below) -> whether the project lowers capture."""


CAPTURE_FIELDS: tuple[CaptureField, ...] = (
    CaptureField(("checkpoints", "enabled"), _off),
    CaptureField(("checkpoints", "variables"), _off),
    CaptureField(("checkpoints", "attribution"), _off),
    CaptureField(("checkpoints", "ignore"), _added),
    CaptureField(("checkpoints", "variable_ignore"), _added),
    CaptureField(("checkpoints", "max_file_bytes"), _smaller),
    CaptureField(("checkpoints", "max_variable_bytes"), _smaller),
    CaptureField(("checkpoints", "max_store_bytes"), _smaller),
    CaptureField(("checkpoints", "keep_recent_frames"), _smaller),
    CaptureField(("checkpoints", "min_free_bytes"), _larger),
)
"""Every capture-lowering field, in the order notices name them."""


def lowered(
    data: Mapping[str, Any], base: Mapping[str, Any], *, prefix: KeyPath = ()
) -> list[tuple[str, str]]:
    """(dotted key, value as written) for each field `data` sets lower than `base`. With
    `prefix`, keys are named as inside that table (`profiles.NAME.checkpoints.enabled`)."""
    out = []
    for field in CAPTURE_FIELDS:
        present, value = value_at(data, field.path)
        if not present or not field.lowers(value, value_at(base, field.path)[1]):
            continue
        shown = mask(field.path, value)
        try:
            text = to_toml_literal(list(shown) if isinstance(shown, tuple) else shown)
        except Exception:  # a value validation will refuse anyway; still name the key
            text = repr(shown)[:60]
        out.append((format_key(prefix + field.path), text[:200]))
    return out
