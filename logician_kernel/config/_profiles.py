"""Configuration profiles: named subsets of the settings, applied as a layer of their own.

`[profiles.NAME]` in the user file or a trusted project file holds any subset of the
settings; the top-level `profile` key (or `LOGICIAN_PROFILE`, or `%%logician --profile NAME`
for one cell) selects one. The selected profile becomes the `profile` layer, between the
project layer and the environment: defaults < user < trusted project < profile < env <
session. A profile defined in a project file passes the same per-field trust as the project
file itself (`_gated.hold_back`), so a profile is never a way around gating.

Pure: builds layers from layers already read; reads no file and no environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, ValidationError
from pydantic_core import PydanticCustomError

if TYPE_CHECKING:  # the schema imports this module; layers come later in the import order
    from ._sources import Layer

__all__ = [
    "NOT_IN_PROFILE",
    "ProfileData",
    "check_profile",
    "profile_definitions",
    "profile_layer",
    "selected_profile",
    "unknown_profile",
]

NOT_IN_PROFILE = ("profile", "profiles", "workspace")
"""Top-level keys a profile may not set: it cannot select or define profiles, nor move the
workspace (a restart-only setting)."""

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def check_profile(data: dict[str, Any]) -> dict[str, Any]:
    """Validate one profile's table like the settings themselves; the error names the field."""
    # `details` carries each problem's key inside the profile, so the resolver drops that key
    # alone (and keeps the rest of the profile) instead of the whole table.
    for key in NOT_IN_PROFILE:
        if key in data:
            raise PydanticCustomError(
                "profile_invalid",
                "{key}: may not be set inside a profile",
                {"key": key, "details": [((key,), "may not be set inside a profile")]},
            )
    from ._errors import explain
    from ._schema import LogicianSettings

    try:
        LogicianSettings.model_validate(data)
    except ValidationError as exc:
        problems, details = [], []
        for error in exc.errors():
            key, what = explain(error)
            problems.append(f"{key}: {what}")
            details.append((tuple(error.get("loc", ())), what))
        raise PydanticCustomError(
            "profile_invalid", "{problems}", {"problems": "; ".join(problems), "details": details}
        ) from None
    return data


ProfileData = Annotated[dict[str, Any], AfterValidator(check_profile)]
"""One profile's table: checked as a whole, kept as written (only what it sets applies)."""


def valid_name(name: str) -> bool:
    return bool(_NAME.match(name))


def selected_profile(layers: Sequence[Layer]) -> tuple[str | None, Layer | None]:
    """The profile the highest layer selecting one names, and that layer."""
    for layer in sorted(layers, key=lambda item: item.rank, reverse=True):
        name = layer.data.get("profile")
        if isinstance(name, str) and name:
            return name, layer
    return None, None


def profile_definitions(layers: Sequence[Layer]) -> dict[str, list[Layer]]:
    """Profile name -> the layers (lowest first) whose `[profiles.NAME]` defines it."""
    found: dict[str, list[Layer]] = {}
    for layer in sorted(layers, key=lambda item: item.rank):
        profiles = layer.data.get("profiles")
        if not isinstance(profiles, Mapping):
            continue
        for name, table in profiles.items():
            if isinstance(table, Mapping):
                found.setdefault(str(name), []).append(layer)
    return found


def unknown_profile(name: str, known: Sequence[str]) -> str:
    """The error for a selected profile that no applied layer defines."""
    names = ", ".join(sorted(known)) if known else "none are defined"
    return (
        f"unknown profile {name!r}; the known profiles are: {names} "
        "(a profile is a [profiles.NAME] table in the user file or a trusted project file)"
    )


def profile_layer(name: str, origins: Sequence[Layer]) -> Layer:
    """The `profile` layer: profile `name` as the `origins` (lowest first) define it, merged."""
    from ._merge import merge_layers
    from ._sources import Layer

    parts = [
        Layer(origin.name, origin.data["profiles"][name], path=origin.path, text=origin.text)
        for origin in origins
    ]
    top = origins[-1]
    return Layer(
        "profile",
        merge_layers(parts).data,
        path=top.path,
        text=top.text,
        profile=name,
        origins=tuple(origins),
    )
