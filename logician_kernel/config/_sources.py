"""Configuration layers: reading each source into a plain nested dict.

A `Layer` is what one source says, before merging and before validation. Reading a layer
never writes anything and never raises for bad input: a file that cannot be read or parsed
becomes a layer with `problems`, which the resolver leaves out and reports.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._keys import KeyPath, coerce_raw, known_keys, parse_key, shown_name

if TYPE_CHECKING:
    from tomlkit.toml_document import TOMLDocument

__all__ = [
    "LAYER_ORDER",
    "LayerName",
    "Layer",
    "ENV_PREFIX",
    "read_file_layer",
    "layer_from_text",
    "parse_layer",
    "read_env_layer",
    "session_layer",
    "set_path",
    "locate_line",
]

LayerName = Literal["default", "user", "project", "profile", "env", "session"]
LAYER_ORDER: tuple[LayerName, ...] = ("default", "user", "project", "profile", "env", "session")
ENV_PREFIX = "LOGICIAN_"

_LAYER_TITLE = {
    "default": "built-in defaults",
    "user": "user config file",
    "project": "project config file",
    "profile": "selected profile",
    "env": "environment layer",
    "session": "session overrides",
}


@dataclass(frozen=True)
class Layer:
    """One source's settings as a nested plain dict (treated as immutable once built)."""

    name: LayerName
    data: Mapping[str, Any]
    path: Path | None = None
    text: str | None = field(default=None, repr=False)
    env_names: Mapping[KeyPath, str] = field(default_factory=dict, repr=False)
    problems: tuple[str, ...] = ()
    """Problems found while reading the whole source (a file that does not parse); a layer
    with problems is left out, and may have set anything (see `_dropping.py`)."""
    unsure: tuple[str, ...] = ()
    """Entries dropped while reading that may have been meant for the model endpoint (an
    environment variable that is not a key path but names `MODEL`): model calls stop."""
    notes: tuple[str, ...] = ()
    """Notices that do not leave the layer out (e.g. a lookalike environment variable)."""
    exists: bool = True
    unreadable: bool = False
    """The file exists but could not be read (permissions): said as that, never as "not
    trusted", whatever the trust of its workspace."""
    profile: str | None = None
    """For the `profile` layer: the selected profile's name."""
    origins: tuple[Layer, ...] = field(default=(), repr=False)
    """For the `profile` layer: the file layers defining the profile, lowest first."""

    @property
    def title(self) -> str:
        return _LAYER_TITLE[self.name]

    @property
    def rank(self) -> int:
        return LAYER_ORDER.index(self.name)

    def where(self, path: KeyPath | None = None) -> str:
        """Where a key was set, as precisely as the source allows."""
        if self.name == "env":
            var = self.env_names.get(path or ())
            if var is None and path:  # a table the variables set keys inside of
                var = next((v for p, v in self.env_names.items() if p[: len(path)] == path), None)
            return f"environment variable {shown_name(var)}" if var else "environment"
        if self.name == "session":
            return "session override"
        if self.name == "default":
            return "built-in defaults"
        if self.name == "profile" and self.profile is not None:
            return self._profile_where(path or ())
        line = locate_line(self.text, path) if self.text is not None and path else None
        return f"{self.path}, line {line}" if line else str(self.path)

    def _profile_where(self, path: KeyPath) -> str:
        # The highest file that sets the key inside the profile (else that defines it) says.
        full = ("profiles", self.profile or "") + path
        for origin in reversed(self.origins):
            node: Any = origin.data
            for part in full:
                node = node.get(part) if isinstance(node, Mapping) else None
            if node is not None:
                return f"{origin.where(full)} (profile {self.profile})"
        top = self.origins[-1] if self.origins else None
        place = top.where(full[:2]) if top is not None else "profile"
        return f"{place} (profile {self.profile})"


def set_path(target: dict[str, Any], path: KeyPath, value: Any) -> None:
    """Set `value` at `path` in a nested dict, creating (or replacing non-dict) parents."""
    node = target
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


def read_file_layer(name: LayerName, path: Path) -> Layer:
    """Read one TOML file; a missing file is an empty layer, a broken one has problems."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Layer(name, {}, path=path, exists=False)
    except OSError as exc:
        problem = f"{path}: cannot read: {exc.strerror}"
        return Layer(name, {}, path=path, problems=(problem,), unreadable=True)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Layer(name, {}, path=path, problems=(f"{path}: not UTF-8 text ({exc.reason})",))
    return layer_from_text(name, path, text)


def layer_from_text(name: LayerName, path: Path, text: str) -> Layer:
    """Parse one file's text into a layer (problems instead of exceptions)."""
    return parse_layer(name, path, text)[0]


def parse_layer(name: LayerName, path: Path, text: str) -> tuple[Layer, TOMLDocument | None]:
    """The layer for one file's text, and the round-trip document when it parsed."""
    import tomlkit  # 30 ms and 1.2 MB: loaded by the first config file, not by every start
    from tomlkit.exceptions import ParseError, TOMLKitError

    try:
        doc = tomlkit.parse(text)
        data = doc.unwrap()
    except ParseError as exc:
        # tomlkit appends " at line L col C" to its message; we print the location ourselves.
        reason = re.sub(r"\s+at line \d+ col \d+$", "", str(exc))
        where = f"{path}, line {exc.line}, column {exc.col}"
        problem = f"{where}: invalid TOML: {reason}"
        return Layer(name, {}, path=path, text=text, problems=(problem,)), None
    except TOMLKitError as exc:
        # tomlkit reports a key repeated inside a table without a position; find it.
        line = _repeated_key_line(text, str(exc))
        where = f"{path}, line {line}" if line else str(path)
        problem = f"{where}: invalid TOML: {exc}"
        return Layer(name, {}, path=path, text=text, problems=(problem,)), None
    return Layer(name, data, path=path, text=text), doc


def _repeated_key_line(text: str, message: str) -> int | None:
    found = re.search(r'Key "([^"]+)" already exists', message)
    if not found:
        return None
    pattern = re.compile(r"^\s*[\"']?" + re.escape(found.group(1)) + r"[\"']?\s*=")
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if pattern.match(line)]
    return lines[1] if len(lines) > 1 else None


def _lookalike(var: str) -> str | None:
    # `LOGICIAN_MODEL_NAME` (one underscore) is a likely typo for LOGICIAN_MODEL__NAME.
    flat = var[len(ENV_PREFIX) :].lower()
    for key in known_keys(leaves_only=True):
        if "<name>" in key:
            continue
        if key.replace(".", "_") == flat:
            return ENV_PREFIX + key.upper().replace(".", "__")
    return None


def read_env_layer(env: Mapping[str, str]) -> Layer:
    """`LOGICIAN_<SECTION>__<KEY>=value` variables, and `LOGICIAN_PROFILE` (the top-level
    `profile`). Values are TOML literals when they parse as one the field accepts, else plain
    strings."""
    data: dict[str, Any] = {}
    names: dict[KeyPath, str] = {}
    unsure: list[str] = []
    notes: list[str] = []
    for var in sorted(env):
        if not var.startswith(ENV_PREFIX):
            continue
        rest = var[len(ENV_PREFIX) :]
        if rest == "PROFILE":
            # `LOGICIAN_PROFILE` selects a profile: the one top-level key with a short name.
            data["profile"] = env[var]
            names[("profile",)] = var
            continue
        if "__" not in rest:
            hint = _lookalike(var)
            if hint:
                notes.append(
                    f"environment variable {var} is not a configuration variable and was "
                    f"ignored; did you mean {hint}? (double underscore between section and key)"
                )
            continue
        path = tuple(part.lower() for part in rest.split("__"))
        if not all(path):
            # Dropped alone: the rest of the environment still applies.
            problem = (
                f"environment variable {shown_name(var)}: not a key path; expected "
                f"{ENV_PREFIX}<SECTION>__<KEY> like LOGICIAN_MODEL__NAME"
            )
            notes.append(f"{problem} - dropped; the rest of the environment layer applies.")
            if "MODEL" in var.upper():
                unsure.append(problem)
            continue
        set_path(data, path, coerce_raw(path, env[var]))
        names[path] = var
    return Layer("env", data, env_names=names, notes=tuple(notes), unsure=tuple(unsure))


def session_layer(overrides: Mapping[str, Any], base: Mapping[str, Any] | None = None) -> Layer:
    """Session overrides given as dotted keys; each replaces the value at its key.

    Raises ValueError for a key that is not a dotted key.
    """
    data = _deep_copy(base or {})
    for key, value in overrides.items():
        path = parse_key(key)
        set_path(data, path, _plain(value))
    return Layer("session", data)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def _deep_copy(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, Mapping) else _plain(v) for k, v in data.items()}


_HEADER = re.compile(r"^\s*\[\[?\s*(?P<key>[^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(
    r"""^\s*(?P<key>(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)


def locate_line(text: str | None, path: KeyPath | None) -> int | None:
    """Best-effort 1-based line where `path` (or its nearest ancestor) is set in a TOML text.

    The parser gives no positions for valid documents, so this scans table headers and key
    assignments; values spanning lines are skipped over, not interpreted.
    """
    if not text or not path:
        return None
    want = tuple(p for p in path if isinstance(p, str))
    table: KeyPath = ()
    best: tuple[int, int] | None = None  # (matched depth, line)
    in_multiline = False
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline:
            if line.count('"""') % 2 or line.count("'''") % 2:
                in_multiline = False
            continue
        header = _HEADER.match(line)
        if header:
            try:
                table = parse_key(header.group("key"))
            except ValueError:
                table = ()
            full = table
        else:
            assign = _ASSIGN.match(line)
            if not assign:
                continue
            if line.count('"""') % 2 or line.count("'''") % 2:
                in_multiline = True
            try:
                full = table + parse_key(assign.group("key"))
            except ValueError:
                continue
        depth = _common(full, want)
        # Prefer the exact key; else the deepest line whose key is an ancestor of it, or the
        # first line inside the wanted table.
        if depth == len(want) or depth == len(full):
            if best is None or depth > best[0]:
                best = (depth, number)
    return best[1] if best and best[0] > 0 else None


def _common(a: KeyPath, b: KeyPath) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
