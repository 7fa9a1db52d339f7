"""ConfigError and the wording of configuration problems.

Every problem names where it comes from (file and line, environment variable, or session),
the dotted key, and what was expected. Values of secret-like keys are never repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._keys import KeyPath, is_secret_key, mask, shown_key, suggest

__all__ = ["ConfigError", "explain", "unknown_key", "CREDENTIAL_HINT"]

CREDENTIAL_HINT = (
    "API keys are never read from configuration; put the key in the environment variable "
    "named by model.api_key_env"
)


class ConfigError(ValueError):
    """A configuration problem, worded for the user.

    `problems` holds one line per problem; `str(error)` joins them.
    """

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems: tuple[str, ...] = (
            (problems,) if isinstance(problems, str) else tuple(problems)
        )
        super().__init__("\n".join(self.problems))


_EXPECTED = {
    "model_type": "a table",
    "model_attributes_type": "a table",
    "dict_type": "a table",
    "list_type": "an array",
    "tuple_type": "an array",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "path_type": "a path string",
}


def _got(path: Sequence[str | int], value: Any) -> str:
    if is_secret_key(path):
        return ""
    text = repr(mask(path, value))
    if len(text) > 60:
        text = text[:57] + "..."
    kind = {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "table",
    }.get(type(value), type(value).__name__)
    return f", got {text} ({kind})"


def unknown_key(path: KeyPath, *, env: bool = False) -> str:
    """'unknown key' with the closest known key, or the credential hint."""
    if is_secret_key(path):
        return f"unknown key; {CREDENTIAL_HINT}"
    hint = suggest(path)
    if hint is None:
        return "unknown key"
    if env:
        return f"unknown key; did you mean LOGICIAN_{hint.upper().replace('.', '__')}?"
    return f"unknown key; did you mean {hint}?"


def explain(error: Any, *, env: bool = False) -> tuple[str, str]:
    """(dotted key, 'what is wrong') for one pydantic error dict."""
    loc = tuple(error.get("loc", ()))
    key = shown_key(loc) or "(top level)"
    kind = error.get("type", "")
    if kind == "missing":
        return key, "required key missing"
    if kind == "extra_forbidden":
        path = tuple(str(p) for p in loc)
        return key, unknown_key(path, env=env)
    if kind in ("profile_invalid", "profile_unknown"):
        return key, str(error.get("msg", "invalid profile"))  # already names field and value
    got = _got(loc, error.get("input"))
    if kind in _EXPECTED:
        return key, f"expected {_EXPECTED[kind]}{got}"
    message = str(error.get("msg", "invalid value"))
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
        return key, f"expected {message}{got}"
    if kind == "literal_error":
        message = message.removeprefix("Input should be ")
        return key, f"expected one of {message}{got}"
    if message.startswith("Input should be "):
        rest = message.removeprefix("Input should be ")
        if rest.startswith(("greater", "less")):
            rest = "a value " + rest
        return key, f"expected {rest}{got}"
    if kind == "string_too_short":
        return key, f"expected a non-empty string{got}"
    return key, f"{message}{got}"
