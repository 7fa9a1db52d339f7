"""What is known about a model before talking to it: its context window and its price.

The context window comes, in order, from `[model] context_window` when the user set it, from
the server when it says (`/v1/models`: vLLM's `max_model_len`, LM Studio's and OpenRouter's
`context_length`, llama.cpp's `meta.n_ctx_train` refined by `/props`; Ollama's `/api/show`),
from the built-in table of known OpenAI and Anthropic models, else a common default. Asking
the server is one short, best-effort GET/POST per kernel and model; it never asks a public
API (no `base_url`) and never fails a run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("logician_kernel.providers")

DEFAULT_CONTEXT_WINDOW = 128_000
"""Used when nothing else says: a common size for current models."""
DISCOVERY_TIMEOUT_SECONDS = 3.0
"""How long asking a local server about its model may take before we fall back."""


@dataclass(frozen=True)
class KnownModel:
    """A model of the built-in table; prices in US dollars per million tokens."""

    context_window: int
    """Tokens the model accepts, prompt and answer together."""
    input_per_mtok: float
    """Price of a million input tokens."""
    output_per_mtok: float
    """Price of a million output tokens (reasoning tokens are billed as output)."""
    cached_input_per_mtok: float | None = None
    """Price of a million cached input tokens, when the provider discounts them."""


# Public list prices as published by OpenAI and Anthropic (late 2025); `budget.prices`
# overrides any of them. Names match by longest prefix, so dated snapshots
# (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`) find their family.
KNOWN_MODELS: dict[str, KnownModel] = {
    "gpt-5": KnownModel(400_000, 1.25, 10.0, 0.125),
    "gpt-5-mini": KnownModel(400_000, 0.25, 2.0, 0.025),
    "gpt-5-nano": KnownModel(400_000, 0.05, 0.40, 0.005),
    "gpt-4.1": KnownModel(1_047_576, 2.0, 8.0, 0.50),
    "gpt-4.1-mini": KnownModel(1_047_576, 0.40, 1.60, 0.10),
    "gpt-4.1-nano": KnownModel(1_047_576, 0.10, 0.40, 0.025),
    "gpt-4o": KnownModel(128_000, 2.50, 10.0, 1.25),
    "gpt-4o-mini": KnownModel(128_000, 0.15, 0.60, 0.075),
    "o3": KnownModel(200_000, 2.0, 8.0, 0.50),
    "o3-mini": KnownModel(200_000, 1.10, 4.40, 0.55),
    "o4-mini": KnownModel(200_000, 1.10, 4.40, 0.275),
    "claude-opus-4": KnownModel(200_000, 15.0, 75.0, 1.50),
    "claude-sonnet-4": KnownModel(200_000, 3.0, 15.0, 0.30),
    "claude-3-7-sonnet": KnownModel(200_000, 3.0, 15.0, 0.30),
    "claude-haiku-4-5": KnownModel(200_000, 1.0, 5.0, 0.10),
    "claude-3-5-haiku": KnownModel(200_000, 0.80, 4.0, 0.08),
}


def known_model(name: str) -> KnownModel | None:
    """The table's entry for `name` (exact, else the longest matching prefix)."""
    if name in KNOWN_MODELS:
        return KNOWN_MODELS[name]
    prefixes = [p for p in KNOWN_MODELS if name.startswith(p + "-") or name.startswith(p + ":")]
    return KNOWN_MODELS[max(prefixes, key=len)] if prefixes else None


@dataclass(frozen=True)
class ContextWindow:
    """A resolved context window and where it came from, for the status display."""

    tokens: int
    """The window in tokens."""
    source: str
    """`config`, `server`, `table` or `default`."""


def resolve_context_window(settings: Any, *, client: httpx.Client | None = None) -> ContextWindow:
    """The context window for the `[model]` settings (see the module docstring for the order)."""
    if getattr(settings, "context_window", None):
        return ContextWindow(settings.context_window, "config")
    provider, name = getattr(settings, "provider", "openai"), settings.name
    base_url = getattr(settings, "base_url", None)
    if provider == "openai" and base_url:
        base = base_url.rstrip("/")
        found = _ask_server(base, name, client) if client else server_context_window(base, name)
        if found:
            return ContextWindow(found, "server")
    known = known_model(name)
    if known is not None:
        return ContextWindow(known.context_window, "table")
    return ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")


@cache
def _cached_server_window(base_url: str, name: str) -> int | None:
    return _ask_server(base_url, name, None)


def server_context_window(base_url: str, name: str) -> int | None:
    """What the server at `base_url` says about `name`, asked once per kernel."""
    return _cached_server_window(base_url.rstrip("/"), name)


def _ask_server(base_url: str, name: str, client: httpx.Client | None) -> int | None:
    import httpx  # loaded when a server is asked, not with the table of known models

    owned = client is None
    http = client or httpx.Client(timeout=DISCOVERY_TIMEOUT_SECONDS)
    try:
        return _from_models(http, base_url, name) or _from_ollama(http, base_url, name)
    except (httpx.HTTPError, ValueError, TypeError, AttributeError) as exc:
        logger.info("could not ask %s about model %r's context window: %s", base_url, name, exc)
        return None
    finally:
        if owned:
            http.close()


def _root(base_url: str) -> str:
    return base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url


def _from_models(http: httpx.Client, base_url: str, name: str) -> int | None:
    response = http.get(f"{base_url}/models")
    if response.status_code != 200:
        return None
    entries = response.json().get("data") or []
    entry = next((e for e in entries if e.get("id") == name), None)
    if entry is None and len(entries) == 1:
        entry = entries[0]  # llama-server names its one model after the file, whatever we ask
    if entry is None:
        return None
    for key in ("max_model_len", "context_length", "context_window", "max_context_length"):
        if isinstance(entry.get(key), int) and entry[key] > 0:
            return int(entry[key])
    trained = (entry.get("meta") or {}).get("n_ctx_train")
    if isinstance(trained, int) and trained > 0:
        # llama.cpp: the slot size it was started with (`-c`) is what really fits.
        return _llama_cpp_n_ctx(http, base_url) or trained
    return None


def _llama_cpp_n_ctx(http: httpx.Client, base_url: str) -> int | None:
    response = http.get(f"{_root(base_url)}/props")
    if response.status_code != 200:
        return None
    n_ctx = (response.json().get("default_generation_settings") or {}).get("n_ctx")
    return int(n_ctx) if isinstance(n_ctx, int) and n_ctx > 0 else None


def _from_ollama(http: httpx.Client, base_url: str, name: str) -> int | None:
    response = http.post(f"{_root(base_url)}/api/show", json={"model": name})
    if response.status_code != 200:
        return None
    payload = response.json()
    # An explicit num_ctx (Modelfile PARAMETER) is what the server allocates.
    for line in str(payload.get("parameters") or "").splitlines():
        key, _, value = line.partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            return int(value.strip())
    info = payload.get("model_info") or {}
    lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
    return lengths[0] if lengths else None


SERVED_FACTS = ("context_length", "pricing", "max_model_len", "meta")
"""What a `/v1/models` entry may say of a model that the picker shows (OpenRouter's
`context_length` and `pricing`, vLLM's `max_model_len`, llama.cpp's `meta`), passed on as sent."""


def served_models(
    base_url: str, *, client: httpx.Client | None = None, headers: dict[str, str] | None = None
) -> tuple[list[str], str | None]:
    """The models a server says it serves (`/v1/models`, else Ollama's `/api/tags`), and why
    none could be read (None when the server answered). One short, best-effort request each;
    never raises."""
    entries, error = served_model_entries(base_url, client=client, headers=headers)
    return [str(e["id"]) for e in entries], error


def served_model_entries(
    base_url: str, *, client: httpx.Client | None = None, headers: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """As `served_models`, each model an `{"id": ...}` with the `SERVED_FACTS` its entry has
    (JSON objects, numbers and strings only); never raises."""
    import httpx  # loaded when a server is asked, not with the table of known models

    owned = client is None
    http = client or httpx.Client(timeout=DISCOVERY_TIMEOUT_SECONDS)
    base = base_url.rstrip("/")
    try:
        response = http.get(f"{base}/models", headers=headers)
        if response.status_code == 200:
            data = response.json().get("data") or []
            return [_facts(e) for e in data if isinstance(e, dict) and e.get("id")], None
        tags = http.get(f"{_root(base)}/api/tags")
        if tags.status_code == 200:
            models = tags.json().get("models") or []
            named = [m for m in models if isinstance(m, dict) and m.get("name")]
            return [{"id": str(m["name"])} for m in named], None
        return [], f"{base}/models answered HTTP {response.status_code}"
    except (httpx.HTTPError, ValueError, TypeError, AttributeError, KeyError) as exc:
        return [], f"could not ask {base}/models: {exc}"
    finally:
        if owned:
            http.close()


def _facts(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": str(entry["id"])}
    for key in SERVED_FACTS:
        value = entry.get(key)
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if isinstance(v, (int, float, str))}
        if isinstance(value, (int, float, str, dict)) and not isinstance(value, bool):
            out[key] = value
    return out
