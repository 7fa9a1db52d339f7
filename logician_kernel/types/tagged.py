"""Validating one record of a tagged union (a `kind` or `type` field names its model) through
that kind's own model, so a process that reads one kind never builds every kind's validator.

Must never: change what a record validates to or the error it gets: a record that does not
validate, or whose kind is unknown, gets the union's error (its location names the kind).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError


def validate_by_kind(
    models: Mapping[str, type[BaseModel]],
    union: TypeAdapter[Any],
    data: Any,
    kind: object,
) -> Any:
    """`union.validate_python(data)`, through `models[kind]` when `kind` names one: the
    union's validator is built only when the kind's own model refuses `data`, for its error."""
    model = models.get(kind) if isinstance(kind, str) else None
    if model is not None:
        try:
            return model.model_validate(data)
        except ValidationError:
            pass  # the union's error, as before
    return union.validate_python(data)
