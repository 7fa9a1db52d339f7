"""Resolution: which layers apply, their one merge and their one validation.

Given the layers already read, `resolve` finds the workspace, reads its project file (applied
only when trusted, minus the keys a project may not set), merges, and validates once. When
validation fails, each error is blamed on the layer that set the offending key; those layers
are left out with a notice naming file, line, key and what was expected, and the rest is
merged again. It never raises for user input.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import ValidationError

from ._errors import CREDENTIAL_HINT, explain
from ._gated import hold_back
from ._keys import KeyPath, format_key, is_credential_redirect, is_secret_key
from ._merge import Merged, highest, merge_layers
from ._profiles import profile_definitions, profile_layer, selected_profile
from ._schema import LogicianSettings
from ._sources import LAYER_ORDER, Layer, LayerName, read_file_layer
from ._trust import TrustEntry, TrustRecord, trust_key

__all__ = ["PROJECT_FILE", "Resolution", "default_layer", "project_file", "resolve"]

PROJECT_FILE = Path(".logician") / "config.toml"
_PROVIDER_DEFAULTED: frozenset[KeyPath] = frozenset({("model", "name"), ("model", "api_key_env")})


_PROJECT_RANK = LAYER_ORDER.index("project")


def user_data_dir() -> Path:
    """Where the user's own kernel data may live (a project may point recordings here)."""
    return Path(platformdirs.user_data_dir("logician"))


def project_file(workspace: Path) -> Path:
    return workspace / PROJECT_FILE


def _plain_defaults(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain_defaults(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_defaults(v) for v in value]
    return value


def default_layer() -> Layer:
    """The schema's defaults as a layer. Provider-dependent defaults are left to the schema,
    so a user who only changes the provider gets that provider's key variable and model."""
    data = _plain_defaults(LogicianSettings().model_dump(mode="python"))
    for section, key in _PROVIDER_DEFAULTED:
        data[section].pop(key, None)
    return Layer("default", data)


def _git_toplevel(start: Path) -> Path | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=start,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    top = out.stdout.strip()
    return Path(top).resolve() if out.returncode == 0 and top else None


def _root_override(layers: Sequence[Layer], start: Path) -> Path | None:
    for layer in sorted(layers, key=lambda item: LAYER_ORDER.index(item.name), reverse=True):
        section = layer.data.get("workspace")
        root = section.get("root") if isinstance(section, Mapping) else None
        if isinstance(root, (str, os.PathLike)) and str(root):
            return (start / Path(root).expanduser()).resolve()
    return None


def _filter_project(layer: Layer) -> tuple[Layer, list[str]]:
    """Drop the keys a project file may not set, saying why for each."""
    notices: list[str] = []
    data = _copy(layer.data)

    def walk(node: dict[str, Any], prefix: KeyPath) -> None:
        for key in list(node):
            path = prefix + (key,)
            if path == ("workspace", "root"):
                reason = "may not be set by a project file (the file lives inside the workspace it would choose)"
            elif is_secret_key(path) and not is_credential_redirect(path):
                reason = (
                    f"looks like a credential, which a project file may not set; {CREDENTIAL_HINT}"
                )
            elif isinstance(node[key], dict):
                walk(node[key], path)
                continue
            else:
                continue
            del node[key]
            notices.append(f"{layer.where(path)}: {format_key(path)} {reason}; ignored.")

    walk(data, ())
    return replace(layer, data=data), notices


def _project_profiles(layer: Layer) -> list[tuple[str, dict[str, Any]]]:
    profiles = layer.data.get("profiles")
    if not isinstance(profiles, dict):
        return []
    return [(str(name), table) for name, table in profiles.items() if isinstance(table, dict)]


def _profile(stack: Sequence[Layer]) -> Layer | None:
    """The selected profile's layer, when one is selected and a file layer defines it (an
    unknown name is left to validation, which blames the layer that selected it)."""
    name, _selector = selected_profile(stack)
    if name is None:
        return None
    files = [layer for layer in stack if layer.name in ("user", "project")]
    origins = profile_definitions(files).get(name)
    return profile_layer(name, origins) if origins else None


def _copy(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in data.items()}


def _validate(data: Mapping[str, Any]) -> LogicianSettings:
    """The one validation of a merged snapshot."""
    return LogicianSettings.model_validate(data)


def _blame(
    loc: tuple[Any, ...], merged: Merged, applied: Sequence[LayerName]
) -> tuple[LayerName, KeyPath]:
    """The layer responsible for a validation error at `loc`, and the path it set.

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
                return owners[index], prefix
        if prefix in merged.provenance:
            return merged.provenance[prefix], prefix
        under = [n for p, n in merged.provenance.items() if p[:depth] == prefix and n != "default"]
        if under:
            return highest(under), prefix
    fallback: list[LayerName] = ["default"]
    return highest([n for n in applied if n != "default"] or fallback), path


@dataclass(frozen=True)
class Resolution:
    settings: LogicianSettings
    merged: Merged
    applied: tuple[LayerName, ...]
    layers: tuple[Layer, ...]
    workspace: Path
    trusted: bool
    notices: tuple[str, ...]
    excluded: Mapping[LayerName, tuple[str, ...]]
    trust: TrustEntry | None = None
    held_back: tuple[str, ...] = ()


def resolve(
    layers: Sequence[Layer],
    *,
    start: Path,
    user_dir: Path,
    trusted_roots: TrustRecord,
    workspace: Path | None = None,
    project: Layer | None = None,
    trust_notice: str | None = None,
) -> Resolution:
    """Merge and validate `layers` (plus the workspace's project file), leaving out any layer
    whose settings do not validate. `workspace`/`project` pin them (no I/O) after a load."""
    layers = [layer for layer in layers if layer.name != "profile"]  # derived below, each time
    excluded: dict[LayerName, tuple[str, ...]] = {
        layer.name: layer.problems for layer in layers if layer.problems
    }
    while True:
        active = [
            layer for layer in layers if layer.name not in excluded and layer.name != "project"
        ]
        ws = workspace
        if ws is None:
            ws = _root_override(active, start) or _git_toplevel(start) or start
        if project is None or project.path != project_file(ws):
            project = read_file_layer("project", project_file(ws))
        entry = trusted_roots.get(trust_key(ws))
        lapsed = entry.problem(ws, project.text if project.exists else None) if entry else None
        trusted = entry is not None and lapsed is None
        held: list[str] = []
        notices: list[str] = []
        if trust_notice:
            notices.append(trust_notice)
        for layer in layers:
            notices.extend(layer.notes)
        stack = list(active)
        if project.exists and lapsed:
            notices.append(
                f"project config {project.path} was NOT applied: {lapsed}. Review the file, "
                f"then run `logician trust {ws}` in a terminal or `%logician trust` in the "
                "notebook to trust it again."
            )
        elif project.exists and not trusted:
            notices.append(
                f"project config {project.path} was NOT applied: the workspace {ws} is not "
                f"trusted. Review the file, then run `logician trust {ws}` in a terminal or "
                "`%logician trust` in the notebook."
            )
        elif project.problems:
            excluded.setdefault("project", project.problems)
        elif project.exists and "project" not in excluded:
            filtered, refused = _filter_project(project)
            notices.extend(refused)
            below = [layer for layer in active if LAYER_ORDER.index(layer.name) < _PROJECT_RANK]
            gated, held = hold_back(
                filtered.data,  # type: ignore[arg-type]  # our own copy, see _filter_project
                base=merge_layers(below).data,
                allows=entry.allows if entry is not None else (lambda key, value: False),
                where=project.where,
                workspace=ws,
                data_dir=user_data_dir(),
            )
            notices.extend(gated)
            for name, table in _project_profiles(filtered):
                # A project's profile passes the same per-field trust as the file itself.
                gated, held_here = hold_back(
                    table, base=merge_layers(below).data,
                    allows=entry.allows if entry is not None else (lambda key, value: False),
                    where=project.where, workspace=ws, data_dir=user_data_dir(),
                    prefix=("profiles", name),
                )  # fmt: skip
                notices.extend(gated)
                held.extend(held_here)
            stack.append(filtered)
        profile = _profile(stack) if "profile" not in excluded else None
        if profile is not None:
            stack.append(profile)
        merged = merge_layers(stack)
        applied = tuple(layer.name for layer in stack)
        try:
            settings = _validate(merged.data)
        except ValidationError as exc:
            blamed: dict[LayerName, list[str]] = {}
            by_name = {layer.name: layer for layer in stack}
            for error in exc.errors():
                name, set_at = _blame(error["loc"], merged, applied)
                if name == "default":
                    raise  # the built-in defaults are invalid: a bug, not a user error
                key, what = explain(error, env=name == "env")
                where = by_name[name].where(set_at)
                blamed.setdefault(name, []).append(f"{where}: {key}: {what}")
            for name, problems in blamed.items():
                excluded[name] = tuple(problems)
            continue
        for layer in (*layers, project, profile or Layer("profile", {})):
            for problem in excluded.get(layer.name, ()):
                notices.append(f"{problem} - the {layer.title} was left out.")
        all_layers = tuple(layer for layer in layers if layer.name != "project") + (
            project,
            profile or Layer("profile", {}, exists=False),
        )
        return Resolution(
            settings, merged, applied, all_layers, ws, trusted, tuple(notices), excluded,
            trust=entry if trusted else None, held_back=tuple(held),
        )  # fmt: skip
