"""The models a user can pick for this kernel's session (the sidebar's model picker): the
configured model, the models the configured profiles name, and the ones the server lists
(`/v1/models`, Ollama's `/api/tags`) when a `base_url` is set; picking one, as a session
override of `model.name` (`%logician config set model.name ...` does the same); and *Make
default*, which persists the pick to the user config file through the same atomic field
update as `%logician config set --persist user`.

Must never: ask a public API for its models (no `base_url`: nothing is asked), persist a pick
unasked (a pick is a session override; only *Make default* writes), or raise for a server that
does not answer (it is said instead). Also the configured model's context window
(`context_window`), for what must fit in it, and what the picker shows beside each model: the
context window and price the configuration sets (`configured`), and what the server's list says
of each model (`served_facts`, as sent: the lab extension reads it), and the built-in table's
figures for each listed model (`known`: `providers.known_model`, the one table the budget
prices by, so the picker never shows a price the budget does not use).
"""

from __future__ import annotations

import json
from typing import Any

from ..config import EffectiveConfig
from ..config import commands as config_commands
from ..providers import known_model, resolve_context_window

_SESSION_HIGHER = "The effective value still comes from the session layer, which is higher."


def model_choices(config: EffectiveConfig) -> dict[str, Any]:
    """What the picker lists: `current`, `provider`, `profiles` (name and the model it names),
    `served` (the server's model ids), `served_error` (why none could be read, or None),
    `profile` (the profile in use, or None), `configured` (model -> the `context_window`,
    `input_per_mtok`, `output_per_mtok` the configuration sets), `served_facts` (model ->
    what the server's entry says of it) and `known` (model -> the built-in table's figures,
    same keys, for each listed model the table knows)."""
    settings = config.settings
    model = settings.model
    profiles = [
        {"name": name, "model": (table.get("model") or {}).get("name")}
        for name, table in sorted(settings.profiles.items())
    ]
    entries: list[dict[str, Any]] = []
    error: str | None = None
    if model.base_url and model.provider == "openai":
        # httpx and the provider clients load when a server is asked, not for the picker
        from ..providers import listing_headers, served_model_entries

        key = config.api_key()
        headers = listing_headers(model.provider, key.get_secret_value() if key else None)
        entries, error = served_model_entries(model.base_url, headers=headers)
    return {
        "current": model.name,
        "provider": model.provider,
        "profiles": profiles,
        "served": [e["id"] for e in entries],
        "served_error": error,
        "profile": config.layer("profile").profile,
        "configured": _configured(config),
        "served_facts": {e["id"]: e for e in entries if len(e) > 1},
        "known": _known([model.name, *(p["model"] for p in profiles), *(e["id"] for e in entries)]),
    }


def _known(names: list[Any]) -> dict[str, dict[str, Any]]:
    """Model -> the built-in table's context window and prices (exact name, else its family
    by the longest prefix, as the budget prices it)."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        if isinstance(name, str) and name not in out and (known := known_model(name)):
            out[name] = {
                "context_window": known.context_window,
                "input_per_mtok": known.input_per_mtok,
                "output_per_mtok": known.output_per_mtok,
            }
    return out


def _configured(config: EffectiveConfig) -> dict[str, dict[str, Any]]:
    """Model -> the context window and prices the configuration sets for it: `model.*` and
    `budget.prices` in effect, then each profile's own tables."""
    settings = config.settings
    out: dict[str, dict[str, Any]] = {}

    def note(name: Any, window: Any, prices: Any) -> None:
        if not isinstance(name, str) or not name:
            return
        facts = out.setdefault(name, {})
        if isinstance(window, int) and window > 0:
            facts.setdefault("context_window", window)
        price = prices.get(name) if isinstance(prices, dict) else None
        if price is not None:
            price = price if isinstance(price, dict) else price.model_dump()
            for key in ("input_per_mtok", "output_per_mtok"):
                if isinstance(price.get(key), (int, float)):
                    facts.setdefault(key, price[key])

    note(settings.model.name, settings.model.context_window, settings.budget.prices)
    for table in settings.profiles.values():
        model = table.get("model") or {}
        budget = table.get("budget") or {}
        note(model.get("name"), model.get("context_window"), budget.get("prices") or {})
        note(model.get("name"), None, settings.budget.prices)
    return {name: facts for name, facts in out.items() if facts}


def use_model(config: EffectiveConfig, name: str) -> tuple[EffectiveConfig, str]:
    """`model.name = name` for this session (validated like `config set`); the new snapshot
    and the line `config set` says."""
    return config_commands.config_set(config, "model.name", json.dumps(name))


def context_window(model: Any) -> int:
    """The `[model]` settings' context window: configured, said by the server, known, or the
    common default (`providers.resolve_context_window`)."""
    return resolve_context_window(model).tokens


def make_default(config: EffectiveConfig, name: str) -> tuple[EffectiveConfig, str]:
    """Persist `name` (and the profile in use) to the user file, where it takes effect: in
    the profile's own table when a profile of the user file is in use (a top-level
    `model.name` would sit below it), else as `model.name`. It stays in use this session.
    Returns the new snapshot and what was written where."""
    said: list[str] = []
    layer = config.layer("profile")
    profile = layer.profile
    mine = profile is not None and any(o.name == "user" for o in layer.origins)
    if mine and profile is not None:
        if config.provenance("profile") != "user":
            config, line = config_commands.config_set(
                config, "profile", json.dumps(profile), persist="user"
            )
            said.append(line)
        key = f"profiles.{profile}.model.name"
    else:
        key = "model.name"
    config, line = config_commands.config_set(config, key, json.dumps(name), persist="user")
    said.append(line)
    # this session's pick stands above the file with the same value: nothing to warn of
    said = [s.replace(f" {_SESSION_HIGHER}", "") for s in said]
    if config.settings.model.name != name:  # an older session pick still stands above it
        config, _ = use_model(config, name)
    return config, " ".join(said)
