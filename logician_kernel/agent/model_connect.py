"""*Connect a model* (the lab sidebar's form): check the server with ONE request and the key
(`providers.check_server`), store the key in the user's credentials file (`config.store_key`:
0600, outside the workspace), and write `[profiles.NAME.model]` to the user config file,
naming the stored key in `key_name`, never the key itself.

Must never: store or write anything when the check fails; return, log or write the key (the
answer carries it masked, `sk-…abcd`); write into the workspace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..config import ConfigError, EffectiveConfig, masked_key, save_profile, store_key

__all__ = ["Connection", "connect_model", "profile_name"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A profile's name (and its stored key's)."""


@dataclass(frozen=True)
class Connection:
    """What the form asked for. `api_key` is the only place the key is held."""

    provider: str
    base_url: str | None
    api_key: str | None
    model: str | None
    name: str | None

    def __repr__(self) -> str:  # never the key, whoever prints it
        return f"Connection(provider={self.provider!r}, base_url={self.base_url!r}, ...)"


def profile_name(provider: str, base_url: str | None) -> str:
    """A profile's name from where it points: the host (and port), else the provider."""
    if not base_url:
        return provider
    parts = urlsplit(base_url)
    host = parts.hostname or provider
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", host).strip("-")
    return f"{name}-{parts.port}" if parts.port else name


def connect_model(
    config: EffectiveConfig, form: Connection
) -> tuple[EffectiveConfig, dict[str, Any]]:
    """Check, store, write; the new snapshot (the user layer re-read) and what to show.
    Raises `ConnectRefused` (a field to fix) or `ConfigError` (naming the file or field)."""
    base_url = form.base_url.strip().rstrip("/") if form.base_url else None
    key = form.api_key.strip() if form.api_key else None
    wanted = form.model.strip() if form.model else None
    name = (form.name or "").strip() or profile_name(form.provider, base_url)
    if not _NAME.match(name):
        raise ConfigError(f"name: {name!r} is not a profile name (letters, digits, _ and -)")
    from ..providers import check_server  # httpx: loaded when a connection is tried

    base, served = check_server(form.provider, base_url, key, model=wanted)
    table: dict[str, Any] = {"provider": form.provider}
    if base_url:
        table["base_url"] = base_url
    model = wanted or (served[0] if served else None)
    if model:
        table["name"] = model
    table["api_key_env"] = ""
    stored = None
    if key:
        stored = store_key(config.user_dir, name, key, workspace=config.workspace)
        table["key_name"] = name
    config, said = save_profile(config, name, table)
    return config, {
        "profile": name,
        "provider": form.provider,
        "base_url": base,
        "model": model,
        "models": served[:1000],
        "key": masked_key(key) if key else None,
        "key_file": str(stored) if stored else None,
        "config_file": str(config.user_file),
        "said": said,
    }
