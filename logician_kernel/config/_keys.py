"""Key paths: parsing and printing dotted keys, the index of known fields, suggestions for
unknown keys, secret detection and masking, and typing of raw strings.

Pure functions over the schema; nothing here reads a file or the environment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from ..durable import MASK as _REDACT_MASK
from ..durable import is_credential_name, redact
from ._field_docs import describe_fields
from ._schema import LogicianSettings

__all__ = [
    "KeyPath",
    "FieldSpec",
    "parse_key",
    "format_key",
    "lookup",
    "known_keys",
    "leaf_specs",
    "suggest",
    "is_secret_key",
    "is_credential_redirect",
    "mask",
    "parse_literal",
    "coerce_raw",
    "to_toml_literal",
    "shown_key",
    "shown_name",
]

KeyPath = tuple[str, ...]
WILDCARD = "*"

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
# A key segment that names a credential. `max_input_tokens` is not one: the word must end at
# a separator, so `tokens` does not match `token`.
_SECRET = re.compile(
    r"(^|[_-])(api[_-]?keys?|apikey|token|secret|password|passwd|credentials?|private[_-]?key)"
    r"([_-]|$)",
    re.IGNORECASE,
)
_CREDENTIAL_REDIRECT: KeyPath = ("model", "api_key_env")


@dataclass(frozen=True)
class FieldSpec:
    """One known key of the schema. Paths use `*` for a free-form mapping key."""

    path: KeyPath
    kind: Literal["section", "mapping", "leaf"]
    annotation: Any
    info: FieldInfo | None
    merge: Literal["union", "replace"] | None
    restart_required: bool

    @property
    def description(self) -> str:
        describe_fields()
        return (self.info.description or "") if self.info else ""


def parse_key(key: str) -> KeyPath:
    """Split a dotted key (`model.name`, `budget.prices."gpt-4.1".input_per_mtok`)."""
    parts: list[str] = []
    i, n = 0, len(key)
    while True:
        while i < n and key[i] in " \t":
            i += 1
        if i < n and key[i] in "\"'":
            quote = key[i]
            end = key.find(quote, i + 1)
            if end < 0:
                raise ValueError(f"unterminated quote in key {key!r}")
            parts.append(key[i + 1 : end])
            i = end + 1
        else:
            start = i
            while i < n and key[i] not in ". \t":
                i += 1
            segment = key[start:i]
            if not segment or not _BARE.match(segment):
                raise ValueError(f"{key!r} is not a dotted key like 'model.name'")
            parts.append(segment)
        while i < n and key[i] in " \t":
            i += 1
        if i == n:
            return tuple(parts)
        if key[i] != ".":
            raise ValueError(f"{key!r} is not a dotted key like 'model.name'")
        i += 1


def format_key(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        seg = part if _BARE.match(part) else '"' + part.replace('"', '\\"') + '"'
        out += ("." if out else "") + seg
    return out


_SHOWN_MAX = 64
# A name made of one long run of letters and digits is more likely a pasted key than a setting.
_KEYLIKE = re.compile(r"^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9+/=_\-]{24,}$")


def _shown_segment(segment: str) -> str:
    """One key segment as a notice may print it: never a secret, never a control character,
    never a screenful."""
    if redact(segment) != segment or (_KEYLIKE.match(segment) and segment.count("_") < 2):
        return f"<a {len(segment)}-character name that looks like a secret>"
    if not segment.isprintable():
        segment = segment.encode("unicode_escape").decode("ascii")
    if len(segment) > _SHOWN_MAX:
        segment = f"{segment[: _SHOWN_MAX - 16]}...({len(segment)} characters)"
    return segment


def shown_key(path: Sequence[str | int]) -> str:
    """`format_key` for a key that came from outside (an unknown key, an environment
    variable): control characters escaped, long segments cut, secret-looking ones masked."""
    return format_key([p if isinstance(p, int) else _shown_segment(p) for p in path])


def shown_name(name: str) -> str:
    """An environment variable's name, shown like `shown_key` (each `__` part on its own)."""
    return "__".join(_shown_segment(part) if part else part for part in name.split("__"))


def _unwrap_optional(annotation: Any) -> Any:
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is not None and len(args) == 1 and type(None) in get_args(annotation):
        return args[0]
    return annotation


def _walk(model: type[BaseModel], prefix: KeyPath, out: dict[KeyPath, FieldSpec]) -> None:
    for name, info in model.model_fields.items():
        path = prefix + (name,)
        ann = _unwrap_optional(info.annotation)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        restart = bool(extra.get("restart_required"))
        merge = extra.get("merge")
        if merge not in (None, "union", "replace"):
            raise TypeError(f"{path}: merge rule must be 'union' or 'replace', not {merge!r}")
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out[path] = FieldSpec(path, "section", ann, info, None, restart)
            _walk(ann, path, out)
        elif get_origin(ann) is dict:
            value_type = get_args(ann)[1]
            out[path] = FieldSpec(path, "mapping", ann, info, None, restart)
            child = path + (WILDCARD,)
            if isinstance(value_type, type) and issubclass(value_type, BaseModel):
                out[child] = FieldSpec(child, "section", value_type, None, None, restart)
                _walk(value_type, child, out)
            else:
                # A scalar entry is described by its mapping (`env`: "Environment variables ...").
                out[child] = FieldSpec(child, "leaf", value_type, info, None, restart)
        else:
            out[path] = FieldSpec(path, "leaf", info.annotation, info, merge, restart)  # type: ignore[arg-type]


_PROFILE_TABLE = FieldSpec(("profiles", WILDCARD), "section", dict, None, None, False)


@cache
def _index() -> dict[KeyPath, FieldSpec]:
    out: dict[KeyPath, FieldSpec] = {}
    _walk(LogicianSettings, (), out)
    out[_PROFILE_TABLE.path] = _PROFILE_TABLE  # its keys are the settings' own (see lookup)
    return out


def lookup(path: Sequence[str]) -> FieldSpec | None:
    """The spec for a concrete path, matching mapping keys against `*`; None if unknown.
    Inside `profiles.NAME` every key is the settings key of the same name."""
    index = _index()
    if len(path) >= 2 and path[0] == "profiles":
        return _PROFILE_TABLE if len(path) == 2 else lookup(path[2:])
    pattern: KeyPath = ()
    for part in path:
        parent = index.get(pattern) if pattern else None
        pattern = pattern + (WILDCARD if parent and parent.kind == "mapping" else part,)
        if pattern not in index:
            return None
    return index.get(pattern) if pattern else None


def leaf_specs() -> list[FieldSpec]:
    return [s for s in _index().values() if s.kind == "leaf"]


def known_keys(*, leaves_only: bool = False) -> list[str]:
    """Every known key, dotted; a free-form mapping key shows as `<name>`."""
    return [
        format_key(s.path).replace('"*"', "<name>")
        for s in _index().values()
        if not leaves_only or s.kind == "leaf"
    ]


def _children(prefix: KeyPath) -> list[str]:
    return [p[-1] for p in _index() if len(p) == len(prefix) + 1 and p[:-1] == prefix]


def suggest(path: Sequence[str]) -> str | None:
    """The closest known key to an unknown one, or None when nothing is close."""
    path = tuple(path)
    # The deepest known ancestor, mapping keys matched as wildcards.
    depth = 0
    while depth < len(path) and lookup(path[: depth + 1]) is not None:
        depth += 1
    if depth == len(path):
        return None
    known = path[:depth]
    spec = lookup(known) if known else None
    pattern = spec.path if spec else ()
    import difflib  # 7 ms to import: only for a key nobody knows

    match = difflib.get_close_matches(path[depth], _children(pattern), n=1, cutoff=0.6)
    if match:
        return format_key(known + (match[0],) + path[depth + 1 :])
    candidates = [k for k in known_keys() if "<name>" not in k]
    match = difflib.get_close_matches(format_key(path), candidates, n=1, cutoff=0.75)
    return match[0] if match else None


def is_credential_redirect(path: Sequence[str]) -> bool:
    return tuple(path) == _CREDENTIAL_REDIRECT


def is_secret_key(path: Iterable[str | int]) -> bool:
    """True when a key names a credential (its value must never be shown or stored)."""
    parts = [p for p in path if isinstance(p, str)]
    if tuple(parts) == _CREDENTIAL_REDIRECT or (
        len(parts) == 4 and parts[0] == "profiles" and tuple(parts[2:]) == _CREDENTIAL_REDIRECT
    ):
        return False  # names a variable, holds no secret (in a profile too)
    return any(_SECRET.search(p) or is_credential_name(p) for p in parts)


MASK = _REDACT_MASK


def mask(path: Sequence[str | int], value: Any) -> Any:
    """`value` with anything secret-like replaced by `****` (recursively), by the one
    redactor every durable record uses (`session.redact`)."""
    if is_secret_key(path):
        return MASK
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: mask((*path, k), v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(mask(path, v) for v in value)
    return value


def parse_literal(raw: str) -> Any:
    """Parse a TOML value literal (`5`, `true`, `"x"`, `["a", "b"]`, `{ a = 1 }`).

    Raises ValueError when `raw` is not exactly one TOML value.
    """
    import tomlkit  # loaded when first needed (_sources.parse_layer)

    try:
        doc = tomlkit.parse(f"v = {raw}\n")
    except Exception as exc:
        raise ValueError(str(exc)) from None
    if list(doc.keys()) != ["v"]:
        raise ValueError("not a single TOML value")
    return doc.unwrap()["v"]


def command_line_value(rest: str) -> str:
    """The value of `config set KEY <rest of the line>`, as the string `coerce_raw` types.

    The rest of the line is one value, spaces included: a TOML literal (`["bash", "edit"]`,
    `{ top_k = 20 }`), JSON (`{"top_k": 20}`, which TOML does not read), or a bare string.
    Shell quotes around an array or a table are dropped (`'["bash", "edit"]'`), since that
    is how the value had to be typed before; quotes around anything else keep their meaning
    (`"5"` is the string 5)."""
    text = rest.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1].strip()
        if inner[:1] in ("[", "{") and _structured(inner) is not None:
            text = inner
    if text[:1] in ("[", "{"):
        value = _structured(text)
        if value is not None:
            try:
                return to_toml_literal(value)
            except (TypeError, ValueError):  # JSON null has no TOML form: let validation say
                return text
    return text


def _structured(text: str) -> Any:
    """`text` as an array or table, read as TOML or else JSON; None if it is neither."""
    try:
        value = parse_literal(text)
    except ValueError:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: thousands of nested brackets
            return None
    return value if isinstance(value, (list, dict)) else None


@cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def coerce_raw(path: Sequence[str], raw: str) -> Any:
    """Type a string from the environment or the command line for the key at `path`.

    The TOML literal is used when it parses (`5` is an int); the bare string is used when it
    does not, or when the field wants a string and only the bare string fits (`name=5`).
    """
    try:
        value = parse_literal(raw)
    except ValueError:
        return raw
    spec = lookup(path)
    if spec is None or spec.kind != "leaf" or isinstance(value, str):
        return value
    adapter = _adapter(spec.annotation)
    try:
        adapter.validate_python(value)
        return value
    except ValidationError:
        pass
    try:
        adapter.validate_python(raw)
        return raw
    except ValidationError:
        return value


def to_toml_literal(value: Any) -> str:
    """Render a plain value as a TOML literal (for messages and the environment)."""
    import tomlkit  # loaded when first needed (_sources.parse_layer)

    def inline(node: Any) -> Any:
        if isinstance(node, Mapping):
            table = tomlkit.inline_table()
            for key, child in node.items():
                table[key] = inline(child)
            return table
        if isinstance(node, (list, tuple)):
            return [inline(child) for child in node]
        return node

    return tomlkit.item(inline(value)).as_string()


def value_at(data: Mapping[str, Any], path: KeyPath) -> tuple[bool, Any]:
    """(whether `path` is set in the nested tables `data`, its value or None)."""
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node
