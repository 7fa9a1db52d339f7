"""The configuration commands shared by `%logician config ...` and `logician config ...`.

Each returns text and prints nothing; the magic and the CLI only present it. Values of
secret-like keys are masked everywhere, and no command ever writes a secret.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ._atomic import DELETE, atomic_update, patch_toml
from ._effective import EffectiveConfig, user_config_dir
from ._errors import CREDENTIAL_HINT, ConfigError, unknown_key
from ._field_docs import describe_fields
from ._gated import GATED_KEYS, format_allowed, gated_field
from ._keys import (
    KeyPath,
    coerce_raw,
    format_key,
    is_credential_redirect,
    is_secret_key,
    lookup,
    mask,
    parse_key,
    to_toml_literal,
)
from ._schema import SCHEMA_FILE, LogicianSettings
from ._sources import LAYER_ORDER, Layer, LayerName, layer_from_text, parse_layer
from ._trust import ANY_CONTENT, TrustEntry, read_trusted, record_trust, trust_key
from ._trust import is_trusted as _is_trusted

__all__ = [
    "Persist",
    "config_show",
    "config_get",
    "config_set",
    "config_unset",
    "config_schema",
    "SCHEMA_FILE",
    "trust",
    "untrust",
    "is_trusted",
    "effective_items",
    "save_profile",
    "shown_value",
]

Persist = Literal["user", "project"]


def _literal(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, tuple):
        value = list(value)
    try:
        return to_toml_literal(value)
    except Exception:  # a value TOML cannot spell is still shown, as Python writes it
        return repr(value)


def shown_value(value: Any) -> str:
    """A value as `config show` prints it (a TOML literal; `(unset)` for none), which `config
    set` reads back."""
    return _literal(value)


def _leaves(node: Any, path: KeyPath) -> Iterator[tuple[KeyPath, Any]]:
    spec = lookup(path) if path else None
    if isinstance(node, dict) and (spec is None or spec.kind != "leaf") and node:
        for key, value in node.items():
            yield from _leaves(value, path + (key,))
    else:
        yield path, node


def effective_items(
    cfg: EffectiveConfig, key: str | None = None
) -> list[tuple[str, Any, LayerName]]:
    """(dotted key, masked value, layer) for every effective leaf, under `key` if given."""
    root: KeyPath = cfg._path(key) if key else ()
    value = cfg.value(root) if root else cfg.settings.model_dump(mode="python")
    return [
        (format_key(path), mask(path, leaf), cfg.provenance(path))
        for path, leaf in _leaves(value, root)
    ]


def _layer_rows(cfg: EffectiveConfig) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for name in LAYER_ORDER:
        layer = cfg.layer(name)
        source = str(layer.path) if layer.path else layer.title
        if name == "profile":
            source = _profile_source(cfg, layer)
        elif name == "env":
            source = f"{len(layer.env_names)} LOGICIAN_* variable(s)"
        elif name == "session":
            count = sum(1 for path, _ in _leaves(dict(layer.data), ()) if path)
            source = f"{count} override(s)"
        if cfg.left_out(name):
            status = "LEFT OUT (see notices)"
        elif cfg.dropped_keys(name):
            status = f"applied, {len(cfg.dropped_keys(name))} key(s) dropped"
        elif name == "project" and layer.exists and not cfg.trusted:
            status = "NOT APPLIED (workspace not trusted)"
        elif name == "profile" and not layer.exists:
            status = "none selected"
        elif not layer.exists:
            status = "not found"
        else:
            status = "applied"
        rows.append((name, source, status))
    return rows


def _profile_source(cfg: EffectiveConfig, layer: Layer) -> str:
    """Which profile applies, the files defining it, and who selected it."""
    if layer.profile is None:
        return "(set `profile`, LOGICIAN_PROFILE or %%logician --profile NAME)"
    files = " and ".join(str(origin.path) for origin in layer.origins)
    selector = cfg.provenance("profile")
    by = cfg.layer(selector).where(("profile",))
    return f"{layer.profile}, defined in {files}; selected by {by}"


def _profile_json(cfg: EffectiveConfig) -> dict[str, Any] | None:
    layer = cfg.layer("profile")
    if layer.profile is None:
        return None
    return {
        "name": layer.profile,
        "defined_in": [str(origin.path) for origin in layer.origins],
        "selected_by": cfg.layer(cfg.provenance("profile")).where(("profile",)),
    }


def _api_key_line(cfg: EffectiveConfig) -> tuple[str, bool]:
    var = cfg.settings.model.api_key_env
    return var, bool(var) and cfg.api_key() is not None


def _api_key_said(cfg: EffectiveConfig) -> str | None:
    """Where the key comes from, and whether it is there (never the key)."""
    name = cfg.settings.model.key_name
    if name:
        state = "set (****)" if cfg.api_key() is not None else "NOT stored"
        return f"api key: stored key {name!r} in {cfg.credentials_file} is {state}"
    var, present = _api_key_line(cfg)
    return f"api key: ${var} is {'set (****)' if present else 'NOT set'}" if var else None


def config_show(cfg: EffectiveConfig, *, as_json: bool = False) -> str:
    """Every effective value with the layer that set it; secrets masked."""
    items = effective_items(cfg)
    var = cfg.settings.model.api_key_env
    if as_json:
        values = {}
        for key, value, layer in items:
            spec = lookup(parse_key(key))
            values[key] = {
                "value": _jsonable(value),
                "layer": layer,
                "restart_required": bool(spec and spec.restart_required),
            }
        document = {
            "workspace": str(cfg.workspace),
            "trusted": cfg.trusted,
            "layers": [{"name": n, "source": s, "status": st} for n, s, st in _layer_rows(cfg)],
            "notices": list(cfg.notices),
            "trust": {
                "allowed": sorted(cfg.trust.allowed) if cfg.trust else [],
                "held_back": list(cfg.held_back),
            },
            "dropped": list(cfg.dropped),
            "capture_lowered": list(cfg.lowered),
            "model_calls": {"refused": cfg.model_refusal},
            "profile": _profile_json(cfg),
            "api_key": {
                "env": var,
                "stored": cfg.settings.model.key_name or None,
                "set": cfg.api_key() is not None,
                "value": "****" if cfg.api_key() is not None else None,
                "said": _api_key_said(cfg),
            },
            "settings": values,
        }
        return json.dumps(document, indent=2)
    lines = [
        f"workspace: {cfg.workspace} ({'trusted' if cfg.trusted else 'not trusted'})",
        "layers:",
    ]
    lines += [f"  {n:<8} {st:<36} {s}" for n, s, st in _layer_rows(cfg)]
    if cfg.trust is not None and cfg.trust.allowed:
        lines.append("project fields you allowed:")
        lines += format_allowed(cfg.trust.allowed)
    if cfg.held_back:
        lines.append(f"project fields held back: {', '.join(cfg.held_back)} (see notices)")
    if cfg.dropped:
        lines.append("keys dropped (each alone; the rest of its layer applies):")
        lines += [f"  - {line}" for line in cfg.dropped]
    if cfg.lowered:
        lines.append(f"the project lowers capture: {', '.join(cfg.lowered)} (see notices)")
    if cfg.model_refusal:
        lines.append(f"MODEL CALLS REFUSED: {cfg.model_refusal}")
    if cfg.notices:
        lines.append("notices:")
        lines += [f"  ! {notice}" for notice in cfg.notices]
    lines.append("settings:")
    rendered = [(f"{key} = {_literal(value)}", layer) for key, value, layer in items]
    width = max(len(text) for text, _ in rendered)
    lines += [f"  {text:<{width}}  # {layer}" for text, layer in rendered]
    said = _api_key_said(cfg)
    if said:
        lines.append(said)
    return "\n".join(lines)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def config_get(cfg: EffectiveConfig, key: str) -> str:
    """One key (or every key under a section) with its layer. Unknown keys raise ConfigError
    with the closest known key."""
    items = effective_items(cfg, key)
    return "\n".join(f"{k} = {_literal(v)}  # {layer}" for k, v, layer in items)


def _checked_path(key: str) -> KeyPath:
    try:
        path = parse_key(key)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if is_secret_key(path):
        # Refused before the value is looked at, so it is never echoed or written.
        raise ConfigError(f"{format_key(path)}: refused; {CREDENTIAL_HINT}")
    if lookup(path) is None:
        raise ConfigError(f"{format_key(path)}: {unknown_key(path)}")
    return path


def _project_refusal(path: KeyPath) -> str | None:
    if path[:2] == ("workspace", "root") or path == ("workspace",):
        return "a project file may not choose the workspace it lives in"
    if is_credential_redirect(path) or path == ("model",):
        return "a project file may not redirect which environment variable the API key is read from"
    return None


def config_set(
    cfg: EffectiveConfig, key: str, value: str, *, persist: Persist | None = None
) -> tuple[EffectiveConfig, str]:
    """Set `key` from the string `value` (a TOML literal, else a bare string).

    Without `persist` only the session layer changes and nothing is written. With `persist`,
    exactly that key is written to the user or project file, atomically, and only after the
    whole new snapshot validated. Returns the new snapshot and a message for the user.
    """
    path = _checked_path(key)
    parsed = coerce_raw(path, value)
    return _change(cfg, path, parsed, persist=persist)


def save_profile(
    cfg: EffectiveConfig, name: str, model: Mapping[str, Any]
) -> tuple[EffectiveConfig, str]:
    """Write `[profiles.NAME.model]` to the user file as exactly `model` (replacing the
    table), with the same atomic, validated update as `config set --persist user`. The caller
    names no secret in `model` (`key_name` refers to a stored key)."""
    path = ("profiles", name, "model")
    for key in model:
        if is_secret_key((*path, key)) and key != "api_key_env":
            raise ConfigError(f"{format_key((*path, key))}: refused; {CREDENTIAL_HINT}")
    return _change(cfg, path, dict(model), persist="user")


def config_unset(
    cfg: EffectiveConfig, key: str, *, persist: Persist | None = None
) -> tuple[EffectiveConfig, str]:
    """Remove `key` from the session layer, or (with `persist`) from that file."""
    path = _checked_path(key)
    return _change(cfg, path, DELETE, persist=persist)


def _change(
    cfg: EffectiveConfig, path: KeyPath, parsed: Any, *, persist: Persist | None
) -> tuple[EffectiveConfig, str]:
    spec = lookup(path)
    restart = bool(spec and spec.restart_required)
    dotted = format_key(path)
    shown = "(removed)" if parsed is DELETE else f"= {_literal(mask(path, parsed))}"
    if persist is None:
        return _change_session(cfg, path, parsed, restart, dotted, shown)
    if persist not in ("user", "project"):
        raise ConfigError(f"--persist must be 'user' or 'project', not {persist!r}")
    if persist == "project":
        refusal = _project_refusal(path)
        if refusal:
            raise ConfigError(f"{dotted}: refused for the project file; {refusal}")
    file = cfg.user_file if persist == "user" else cfg.project_file
    outcome: dict[str, EffectiveConfig] = {}

    def patch(old: str | None) -> str:
        # Runs under the file's lock with its current text: a concurrent writer's keys are
        # kept, and nothing is written unless the new snapshot validates.
        document = None
        if old is not None:
            current, document = parse_layer(persist, file, old)
            if current.problems:
                raise ConfigError((*current.problems, f"{file} was not modified."))
        new_text = patch_toml(document if old and old.strip() else None, path, parsed)
        layer = layer_from_text(persist, file, new_text)
        roots = _trusting(cfg) if persist == "project" else None
        candidate = cfg._replace_layer(layer, trusted_roots=roots)
        problems = candidate.problems_since(cfg, persist)
        if candidate.left_out(persist) and not problems:
            problems = candidate.layer_problems(persist)
        if problems:
            raise ConfigError((*problems, f"{file} was not modified."))
        outcome["cfg"] = candidate if roots is None else cfg._replace_layer(layer)
        return new_text

    atomic_update(file, patch)
    if persist == "project" and cfg.trusted:
        # The user's own change to a file they trusted: trust follows it (allowed fields
        # stay bound to their values, so this cannot widen them).
        record_trust(cfg.workspace, cfg.user_dir)
        written = outcome["cfg"]
        outcome["cfg"] = written._replace_layer(
            written.layer("project"), trusted_roots=read_trusted(cfg.user_dir)[0]
        )
    new = outcome["cfg"]
    action = "Removed" if parsed is DELETE else "Saved"
    message = [f"{action} {dotted} {shown} in {file} ({persist} config)."]
    layer = new.provenance(path)
    if LAYER_ORDER.index(layer) > LAYER_ORDER.index(persist) and parsed is not DELETE:
        message.append(f"The effective value still comes from the {layer} layer, which is higher.")
    if persist == "project" and not new.trusted:
        message.append(
            f"The workspace is not trusted, so the project file is not applied; run "
            f"`logician trust {new.workspace}` or `%logician trust` to apply it."
        )
    if restart:
        message.append(f"{dotted} takes effect after a kernel restart.")
    return new, " ".join(message)


def _change_session(
    cfg: EffectiveConfig, path: KeyPath, parsed: Any, restart: bool, dotted: str, shown: str
) -> tuple[EffectiveConfig, str]:
    if restart:
        raise ConfigError(
            f"{dotted} takes effect only after a kernel restart, and a session override does "
            "not survive one; use --persist user or --persist project."
        )
    if parsed is DELETE:
        data = _without(dict(cfg.layer("session").data), path)
        new = cfg._replace_layer(Layer("session", data))
        now = _literal(mask(path, new.value(path)))
        return (
            new,
            f"{dotted}: session override removed; now {now} from the {new.provenance(path)} layer.",
        )
    new = cfg.with_session({dotted: parsed})
    return new, f"{dotted} {shown} (session override; not saved)."


def _without(data: dict[str, Any], path: KeyPath) -> dict[str, Any]:
    if not path or path[0] not in data:
        return data
    out = dict(data)
    if len(path) == 1:
        del out[path[0]]
    elif isinstance(out[path[0]], Mapping):
        out[path[0]] = _without(dict(out[path[0]]), path[1:])
    return out


def config_schema() -> str:
    """The JSON Schema of the configuration files, for editors."""
    describe_fields()
    schema = LogicianSettings.model_json_schema()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://logician.dev/schemas/config.json",
        **schema,
    }
    return json.dumps(schema, indent=2)


def _trusting(cfg: EffectiveConfig) -> dict[str, TrustEntry]:
    """The trust record with this workspace trusted for any project content: how a
    `config set --persist project` is checked before it is written."""
    key = trust_key(cfg.workspace)
    entry = cfg._trusted_roots.get(key)
    allowed = entry.allowed if entry is not None else {}
    return {**cfg._trusted_roots, key: TrustEntry(project_sha256=ANY_CONTENT, allowed=allowed)}


def _user_dir(user_dir: Path | None, env: Mapping[str, str] | None) -> Path:
    return Path(user_dir) if user_dir is not None else user_config_dir(env)


def trust(
    workspace: Path,
    *,
    user_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    allow: Sequence[str] = (),
) -> str:
    """Record `workspace` as trusted for its `.logician/config.toml` as it is now; `allow`
    names gated fields (`model.base_url`, ...) whose current project values may apply.
    Raises `ConfigError` naming a key that is not gated or not set, recording nothing."""
    root = trust_key(workspace)
    project = Path(root) / ".logician" / "config.toml"
    values = _allowed_values(project, allow)
    record = record_trust(workspace, _user_dir(user_dir, env), allow=values)
    state = (
        "will be applied"
        if project.exists()
        else "does not exist yet; when it is created, review it and trust the workspace again"
    )
    lines = [
        f"Trusted workspace {root} (recorded in {record}). Its project config {project} {state}."
    ]
    for key, value in values.items():
        lines.append(
            f"Allowed {key} = {_literal(mask(parse_key(key), value))} from the project file."
        )
    return "\n".join(lines)


def _allowed_values(project: Path, keys: Sequence[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if not keys:
        return values
    try:
        layer = layer_from_text("project", project, project.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {project} to allow {', '.join(keys)}: {exc}") from None
    if layer.problems:
        raise ConfigError(layer.problems)
    for key in keys:
        if gated_field(key) is None:
            known = ", ".join(sorted(GATED_KEYS))
            raise ConfigError(f"--allow {key}: not a gated field; the gated fields are {known}")
        node: Any = layer.data
        for part in parse_key(key):
            if not isinstance(node, Mapping) or part not in node:
                raise ConfigError(f"--allow {key}: {project} does not set {key}; nothing to allow")
            node = node[part]
        values[key] = node
    return values


def untrust(
    workspace: Path, *, user_dir: Path | None = None, env: Mapping[str, str] | None = None
) -> str:
    record = record_trust(workspace, _user_dir(user_dir, env), trusted=False)
    return f"Workspace {trust_key(workspace)} is no longer trusted (recorded in {record})."


def is_trusted(
    workspace: Path, *, user_dir: Path | None = None, env: Mapping[str, str] | None = None
) -> bool:
    return _is_trusted(workspace, _user_dir(user_dir, env))
