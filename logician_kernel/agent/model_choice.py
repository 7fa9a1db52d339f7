"""The models a user can pick for this kernel's session (the sidebar's model picker): the
configured model, the models the configured profiles name, and the ones the server lists
(`/v1/models`, Ollama's `/api/tags`) when a `base_url` is set; and picking one, as a session
override of `model.name` (`%logician config set model.name ...` does the same).

Must never: ask a public API for its models (no `base_url`: nothing is asked), persist a choice
(a session override only), or raise for a server that does not answer (it is said instead).
Also the configured model's context window (`context_window`), for what must fit in it.
"""

from __future__ import annotations

import json
from typing import Any

from ..config import EffectiveConfig
from ..config import commands as config_commands
from ..providers import resolve_context_window, served_models


def model_choices(config: EffectiveConfig) -> dict[str, Any]:
    """What the picker lists: `current`, `provider`, `profiles` (name and the model it names),
    `served` (the server's model ids) and `served_error` (why none could be read, or None)."""
    settings = config.settings
    model = settings.model
    profiles = [
        {"name": name, "model": (table.get("model") or {}).get("name")}
        for name, table in sorted(settings.profiles.items())
    ]
    served: list[str] = []
    error: str | None = None
    if model.base_url and model.provider == "openai":
        served, error = served_models(model.base_url)
    return {
        "current": model.name,
        "provider": model.provider,
        "profiles": profiles,
        "served": served,
        "served_error": error,
    }


def use_model(config: EffectiveConfig, name: str) -> tuple[EffectiveConfig, str]:
    """`model.name = name` for this session (validated like `config set`); the new snapshot
    and the line `config set` says."""
    return config_commands.config_set(config, "model.name", json.dumps(name))


def context_window(model: Any) -> int:
    """The `[model]` settings' context window: configured, said by the server, known, or the
    common default (`providers.resolve_context_window`)."""
    return resolve_context_window(model).tokens
