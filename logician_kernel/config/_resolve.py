"""Resolution: which layers apply, their one merge and their one validation.

Given the layers already read, `resolve` finds the workspace, reads its project file (applied
only when trusted, minus the keys a project may not set or the user has not allowed), merges,
and validates once. When validation fails, each error is blamed on the layer that set the
offending key; that key alone is dropped from that layer (`_dropping.py`) with a notice naming
file and line or variable, key and what was expected, and the rest is merged again. A layer
that cannot be read at all is left out whole. A bad or unreadable source of the model endpoint
stops model calls (`Resolution.model_refusal`). A project that lowers capture is named in a
notice (`_capture.py`). It never raises for user input.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import ValidationError

from ._capture import lowered
from ._dropping import Dropped, drops_for, model_refusal, present, strip
from ._errors import CREDENTIAL_HINT
from ._gated import hold_back
from ._keys import KeyPath, is_credential_redirect, is_secret_key, shown_key
from ._merge import Merged, merge_layers
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
            notices.append(f"{layer.where(path)}: {shown_key(path)} {reason}; ignored.")

    walk(data, ())
    return replace(layer, data=data), notices


def _project_profiles(layer: Layer) -> list[tuple[str, dict[str, Any]]]:
    profiles = layer.data.get("profiles")
    if not isinstance(profiles, dict):
        return []
    return [(str(name), table) for name, table in profiles.items() if isinstance(table, dict)]


def _profile(stack: Sequence[Layer]) -> tuple[Layer | None, Layer | None]:
    """The selected profile's layer, when one is selected and a file layer defines it (an
    unknown name is left to validation, which blames the layer that selected it)."""
    name, selector = selected_profile(stack)
    if name is None:
        return None, selector
    files = [layer for layer in stack if layer.name in ("user", "project")]
    origins = profile_definitions(files).get(name)
    return (profile_layer(name, origins) if origins else None), selector


def _copy(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in data.items()}


def _where(layers: Mapping[LayerName, Layer], name: LayerName, path: KeyPath) -> str:
    return layers[name].where(path)


def _validate(data: Mapping[str, Any]) -> LogicianSettings:
    """The one validation of a merged snapshot."""
    return LogicianSettings.model_validate(data)


def _profile_gated(
    name: Any, files: Sequence[Layer], below: Mapping[str, Any], ws: Path
) -> list[str]:
    """The gated keys profile `name` (as `files` define it) would turn on: what selecting it
    from a project file must be allowed for."""
    origins = profile_definitions(files).get(name) if isinstance(name, str) else None
    if not origins:
        return []  # an unknown profile sets nothing; validation names it
    table = _copy(profile_layer(name, origins).data)
    _, held = hold_back(
        table,
        base=below,
        allows=lambda key, value: False,
        where=lambda path: "",
        workspace=ws,
        data_dir=user_data_dir(),
    )
    return held


def _apply_project(
    project: Layer, active: Sequence[Layer], entry: TrustEntry | None, ws: Path
) -> tuple[Layer, list[str], list[str]]:
    """The trusted project layer as it applies: refused keys removed, gated values the user
    has not allowed held back (its profiles' too, and its selection of a profile that would
    turn gated fields on). Returns (layer, notices, keys held back)."""
    filtered, notices = _filter_project(project)
    below = merge_layers([layer for layer in active if layer.rank < _PROJECT_RANK]).data
    allows = entry.allows if entry is not None else (lambda key, value: False)
    held: list[str] = []
    later: list[str] = []
    for name, table in _project_profiles(filtered):
        # A project's profile passes the same per-field trust as the file itself.
        gated, held_here = hold_back(
            table,
            base=below,
            allows=allows,
            where=project.where,
            workspace=ws,
            data_dir=user_data_dir(),
            prefix=("profiles", name),
        )
        later.extend(gated)
        held.extend(held_here)
    files = [layer for layer in active if layer.name == "user"] + [filtered]
    gated, top = hold_back(
        filtered.data,  # type: ignore[arg-type]  # our own copy, see _filter_project
        base=below,
        allows=allows,
        where=project.where,
        workspace=ws,
        data_dir=user_data_dir(),
        turns_on=lambda name: _profile_gated(name, files, below, ws),
    )
    return filtered, notices + gated + later, top + held


def _capture_notices(
    stack: Sequence[Layer], merged: Merged, selector: Layer | None
) -> tuple[list[str], list[str]]:
    """(notices, `key = value` lines) for what the project - or a profile it selected or
    defined - applies that lowers capture."""
    notices: list[str] = []
    lines: list[str] = []
    by_name = {layer.name: layer for layer in stack}
    for name in ("project", "profile"):
        layer = by_name.get(name)
        if layer is None:
            continue
        if name == "profile" and not (
            (selector is not None and selector.name == "project")
            or any(origin.name == "project" for origin in layer.origins)
        ):
            continue  # the user's own profile, selected by the user
        base = merge_layers([other for other in stack if other.rank < layer.rank]).data
        found = []
        for key, value in lowered(layer.data, base):
            path = tuple(key.split("."))
            owners: Sequence[str | None] = merged.elements.get(path) or [
                merged.provenance.get(path)
            ]
            if name in owners:  # not overridden by the environment or the session
                found.append((path, f"{key} = {value}"))
        if not found:
            continue
        lines += [text for _, text in found]
        shown = ", ".join(f"{text} ({layer.where(path)})" for path, text in found)
        who = "this project" if name == "project" else f"the profile {layer.profile!r}"
        notices.append(
            f"{who} lowers capture: {shown}. It applies: a rewind cannot restore what was not "
            "captured. To capture anyway, override the field with `%logician config set KEY "
            "VALUE` or a LOGICIAN_* variable, or remove it from the file."
        )
    return notices, lines


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
    """Layers left out whole (they could not be read), with why."""
    trust: TrustEntry | None = None
    held_back: tuple[str, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    """Keys dropped alone from a layer that otherwise applies."""
    lowered: tuple[str, ...] = ()
    """`key = value` for each capture-lowering field the project applies."""
    model_refusal: tuple[str, ...] = ()
    """Why model calls are refused (the endpoint's source is broken); empty when they may go."""


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
    """Merge and validate `layers` (plus the workspace's project file), dropping each key that
    does not validate from the layer that set it. `workspace`/`project` pin them (no I/O)
    after a load."""
    layers = [layer for layer in layers if layer.name != "profile"]  # derived below, each time
    excluded: dict[LayerName, tuple[str, ...]] = {
        layer.name: layer.problems for layer in layers if layer.problems
    }
    drops: list[Dropped] = []
    while True:
        active = [
            strip(layer, drops)
            for layer in layers
            if layer.name not in excluded and layer.name != "project"
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
        if project.unreadable:  # a permission problem, whatever the workspace's trust
            excluded.setdefault("project", project.problems)
        elif project.exists and lapsed:
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
            filtered, gated, held = _apply_project(strip(project, drops), active, entry, ws)
            notices.extend(gated)
            stack.append(filtered)
        profile, selector = _profile(stack) if "profile" not in excluded else (None, None)
        if profile is not None:
            profile = strip(profile, drops)
            stack.append(profile)
        merged = merge_layers(stack)
        applied = tuple(layer.name for layer in stack)
        try:
            settings = _validate(merged.data)
        except ValidationError as exc:
            by_name = {layer.name: layer for layer in stack}
            found = drops_for(exc.errors(), merged, applied, partial(_where, by_name))
            seen = {(d.layer, d.path, repr(d.item)) for d in drops}
            for dropped in found:
                if dropped.layer == "default":
                    raise  # the built-in defaults are invalid: a bug, not a user error
                key = (dropped.layer, dropped.path, repr(dropped.item))
                if key in seen or not present(
                    by_name[dropped.layer].data, dropped.path, dropped.item
                ):
                    # Dropping it changed nothing: leave the layer out whole, so this ends.
                    excluded.setdefault(dropped.layer, (dropped.problem,))
                    continue
                seen.add(key)
                drops.append(dropped)
            continue
        for layer in (*layers, project, profile or Layer("profile", {})):
            for problem in excluded.get(layer.name, ()):
                notices.append(f"{problem} - the {layer.title} was left out.")
        kept = tuple(d for d in drops if d.layer in applied)
        # A selected profile's bad key is reported once, at its definition in the file.
        defined = {d.path for d in kept if d.layer != "profile"}
        named = () if profile is None else ("profiles", profile.profile or "")
        notices.extend(
            d.notice(Layer(d.layer, {}).title)
            for d in kept
            if not (d.layer == "profile" and named + d.path in defined)
        )
        capture, lowered_lines = _capture_notices(stack, merged, selector)
        notices.extend(capture)
        unsure = {layer.name: layer.unsure for layer in layers if layer.name in applied}
        refusal = model_refusal(
            excluded, unsure, kept, profile.profile if profile else None, merged.provenance
        )
        if refusal:
            notices.append(
                "Model calls are refused until the configuration is fixed (falling back to a "
                "default endpoint could send your API key elsewhere): " + "; ".join(refusal)
            )
        all_layers = tuple(layer for layer in layers if layer.name != "project") + (
            project,
            profile or Layer("profile", {}, exists=False),
        )
        return Resolution(
            settings,
            merged,
            applied,
            all_layers,
            ws,
            trusted,
            tuple(notices),
            excluded,
            trust=entry if trusted else None,
            held_back=tuple(held),
            dropped=kept,
            lowered=tuple(lowered_lines),
            model_refusal=refusal,
        )
