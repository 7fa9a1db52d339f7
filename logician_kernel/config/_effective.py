"""The effective configuration: every layer read, merged once, validated once.

`load_effective_config` is the only entry point that reads configuration files, the trust
record, the stored keys (`_credentials.py`) or the environment; subsystems receive the
resulting `EffectiveConfig` and never read those sources themselves. Loading never writes
anything. A broken layer is left out and
reported in `notices` - the kernel still starts. A bad key is dropped alone; when the model
endpoint's source is broken, `model_refusal` says why model calls must not be made.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import platformdirs
from pydantic import SecretStr

from ._credentials import credentials_path, read_stored_keys
from ._errors import ConfigError, unknown_key
from ._keys import KeyPath, format_key, lookup, parse_key
from ._resolve import Resolution, default_layer, project_file, resolve
from ._schema import LogicianSettings
from ._sources import LAYER_ORDER, Layer, LayerName, read_env_layer, read_file_layer, session_layer
from ._trust import TrustEntry, TrustRecord, read_trusted

__all__ = ["CONFIG_DIR_ENV", "EffectiveConfig", "load_effective_config", "user_config_dir"]

CONFIG_DIR_ENV = "LOGICIAN_CONFIG_DIR"


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$LOGICIAN_CONFIG_DIR`, else the platform's user config dir for `logician`."""
    env = os.environ if env is None else env
    configured = env.get(CONFIG_DIR_ENV)
    return (
        Path(configured).expanduser()
        if configured
        else Path(platformdirs.user_config_dir("logician"))
    )


@dataclass(frozen=True, eq=False)
class EffectiveConfig:
    """One validated, immutable configuration snapshot and where each value came from."""

    settings: LogicianSettings
    """The validated settings every subsystem reads."""
    workspace: Path
    """The resolved workspace root this snapshot was loaded for (absolute)."""
    notices: tuple[str, ...]
    """Human-readable problems, one per line; empty when all is well."""
    trusted: bool
    """Whether the workspace is trusted (its project file may apply)."""
    user_dir: Path
    """The user config dir (user file and trust record live here)."""
    start_dir: Path
    _resolution: Resolution = field(repr=False)
    _env: Mapping[str, str] = field(repr=False)
    _trusted_roots: TrustRecord = field(repr=False)
    _trust_notice: str | None = field(repr=False, default=None)
    _keys: Mapping[str, str] = field(repr=False, default_factory=dict)
    """The stored keys (`_credentials.py`) as they were when loaded."""
    _keys_problem: str | None = field(repr=False, default=None)
    """Why the stored keys could not be read (also among `notices`)."""

    @property
    def credentials_file(self) -> Path:
        """Where *Connect a model* stores keys (`model.key_name` names one)."""
        return credentials_path(self.user_dir)

    @property
    def user_file(self) -> Path:
        return self.user_dir / "config.toml"

    @property
    def project_file(self) -> Path:
        return project_file(self.workspace)

    @property
    def layers(self) -> tuple[Layer, ...]:
        """Every layer as read, applied or not (see `applied_layers`)."""
        return self._resolution.layers

    @property
    def applied_layers(self) -> tuple[LayerName, ...]:
        return self._resolution.applied

    @property
    def trust(self) -> TrustEntry | None:
        """The trust entry that applies the project file, when the workspace is trusted."""
        return self._resolution.trust

    @property
    def held_back(self) -> tuple[str, ...]:
        """Gated keys the project file sets that were not applied (see `_gated.py`)."""
        return self._resolution.held_back

    def layer(self, name: LayerName) -> Layer:
        return next(layer for layer in self.layers if layer.name == name)

    def layer_problems(self, name: LayerName) -> tuple[str, ...]:
        """Everything wrong with one layer: why it was left out whole, or each key dropped."""
        dropped = (d.problem for d in self._resolution.dropped if d.layer == name)
        return (*self._resolution.excluded.get(name, ()), *dropped)

    def dropped_keys(self, name: LayerName) -> frozenset[KeyPath]:
        """The keys dropped alone from layer `name` (it applies without them)."""
        return frozenset(d.path for d in self._resolution.dropped if d.layer == name)

    def left_out(self, name: LayerName) -> bool:
        """Whether layer `name` was left out whole (it could not be read)."""
        return name in self._resolution.excluded

    def problems_since(self, before: EffectiveConfig, name: LayerName) -> tuple[str, ...]:
        """What is wrong with layer `name` here that was not already wrong in `before`: how a
        change is refused for what it adds, not for an older bad key beside it."""
        if name in self._resolution.excluded and name not in before._resolution.excluded:
            return self._resolution.excluded[name]
        old = before.dropped_keys(name)
        return tuple(
            d.problem for d in self._resolution.dropped if d.layer == name and d.path not in old
        )

    @property
    def dropped(self) -> tuple[str, ...]:
        """One line per key dropped from a layer that otherwise applies."""
        return tuple(d.problem for d in self._resolution.dropped)

    @property
    def lowered(self) -> tuple[str, ...]:
        """`key = value` for each capture-lowering setting a project applies (`_capture.py`)."""
        return self._resolution.lowered

    @property
    def model_refusal(self) -> str | None:
        """Why no model may be called with this snapshot (a broken source of the model
        endpoint; `_dropping.py`), naming the layer; None when calls may go."""
        reasons = self._resolution.model_refusal
        if not reasons:
            return None
        return (
            "model calls are refused until the configuration is fixed, because falling back to "
            "a default endpoint could send your API key elsewhere: "
            + "; ".join(reasons)
            + ". Fix it and restart the kernel, or set the key for this session with `%logician "
            "config set` (`logician config show` lists every problem)."
        )

    def _path(self, key: str | Sequence[str]) -> KeyPath:
        try:
            path = parse_key(key) if isinstance(key, str) else tuple(key)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if lookup(path) is None and path not in self._resolution.merged.provenance:
            raise ConfigError(f"{format_key(path)}: {unknown_key(path)}")
        return path

    def provenance(self, key: str | Sequence[str]) -> LayerName:
        """The layer that set `key` (the highest one, for a table or a union list)."""
        path = self._path(key)
        return self.sources(path)[-1]

    def sources(self, key: str | Sequence[str]) -> tuple[LayerName, ...]:
        """Every layer contributing to `key`, lowest first."""
        path = self._path(key)
        merged = self._resolution.merged
        names = {n for p, n in merged.provenance.items() if p[: len(path)] == path}
        names.update(n for p, ns in merged.elements.items() if p[: len(path)] == path for n in ns)
        if not names:
            names = {n for p, n in merged.provenance.items() if path[: len(p)] == p} or {"default"}
        return tuple(sorted(names, key=LAYER_ORDER.index))

    def elements(self, key: str | Sequence[str]) -> tuple[LayerName, ...]:
        """For a list setting: the layer each of its items came from, in order."""
        path = self._path(key)
        return tuple(self._resolution.merged.elements.get(path, ()))

    def value(self, key: str | Sequence[str]) -> Any:
        """The effective value at `key` (a plain value; a section is a dict)."""
        path = self._path(key)
        node: Any = self.settings.model_dump(mode="python")
        for part in path:
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(f"{format_key(path)} is not set")
            node = node[part]
        return node

    def api_key(self) -> SecretStr | None:
        """The API key: the stored key named by `model.key_name` when it is set, else the
        environment variable named by `model.api_key_env` (each as it was when loaded), or
        None. Wrapped so it is never printed by accident."""
        model = self.settings.model
        if model.key_name:
            value = self._keys.get(model.key_name)
        else:
            value = self._env.get(model.api_key_env) if model.api_key_env else None
        return SecretStr(value) if value else None

    def with_session(self, updates: Mapping[str, Any]) -> EffectiveConfig:
        """A new snapshot with `updates` (dotted keys) in the session layer. Pure: reads and
        writes nothing. Raises ConfigError naming the key when the result is invalid."""
        try:
            applied = "session" in self.applied_layers
            base = self.layer("session").data if applied else {}
            session = session_layer(updates, base=base)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        for key in updates:
            self._path(key)  # an unknown key is refused with a suggestion
        new = self._replace_layer(session)
        problems = new.problems_since(self, "session")
        if problems:
            raise ConfigError(problems)
        return new

    def _replace_layer(
        self, layer: Layer, *, trusted_roots: TrustRecord | None = None
    ) -> EffectiveConfig:
        layers = [other for other in self.layers if other.name not in (layer.name, "project")]
        project = layer if layer.name == "project" else self.layer("project")
        roots = self._trusted_roots if trusted_roots is None else trusted_roots
        resolution = resolve(
            [*layers, layer] if layer.name != "project" else layers,
            start=self.start_dir,
            user_dir=self.user_dir,
            trusted_roots=roots,
            workspace=self.workspace,
            project=project,
            trust_notice=self._trust_notice,
        )
        return _snapshot(
            resolution,
            self.user_dir,
            self.start_dir,
            self._env,
            roots,
            self._trust_notice,
            self._keys,
            self._keys_problem,
        )


def _snapshot(
    resolution: Resolution,
    user_dir: Path,
    start: Path,
    env: Mapping[str, str],
    roots: TrustRecord,
    trust_notice: str | None,
    keys: Mapping[str, str],
    keys_problem: str | None,
) -> EffectiveConfig:
    return EffectiveConfig(
        settings=resolution.settings,
        workspace=resolution.workspace,
        notices=resolution.notices + ((keys_problem,) if keys_problem else ()),
        trusted=resolution.trusted,
        user_dir=user_dir,
        start_dir=start,
        _resolution=resolution,
        _env=env,
        _trusted_roots=roots,
        _trust_notice=trust_notice,
        _keys=MappingProxyType(dict(keys)),
        _keys_problem=keys_problem,
    )


def load_effective_config(
    start_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    session: Mapping[str, Any] | None = None,
    user_dir: Path | None = None,
) -> EffectiveConfig:
    """Read every layer for a kernel started in `start_dir`, merge once, validate once.

    `env` defaults to `os.environ` (copied); `user_dir` defaults to `$LOGICIAN_CONFIG_DIR` from
    `env`, else the platform user config dir. Never raises for bad configuration: a bad
    layer is left out and described in `notices`.
    """
    env = MappingProxyType(dict(os.environ if env is None else env))
    start = Path(start_dir).expanduser().resolve()
    user_dir = Path(user_dir).expanduser() if user_dir is not None else user_config_dir(env)
    roots, trust_notice = read_trusted(user_dir)
    layers = [
        default_layer(),
        read_file_layer("user", user_dir / "config.toml"),
        read_env_layer(env),
    ]
    try:
        layers.append(session_layer(session or {}))
    except ValueError as exc:
        layers.append(Layer("session", {}, problems=(f"session override: {exc}",)))
    resolution = resolve(
        layers, start=start, user_dir=user_dir, trusted_roots=roots, trust_notice=trust_notice
    )
    keys, keys_problem = read_stored_keys(user_dir)
    return _snapshot(resolution, user_dir, start, env, roots, trust_notice, keys, keys_problem)
