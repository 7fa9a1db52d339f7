"""Checking a model server before its key is stored (*Connect a model*): ONE request, the
server's model list, sent with the headers the real provider sends (its wire format's and its
key's), and a failure said as the form field to fix (`base_url`, `api_key`, `model`).

Must never: put the key into an error (the provider's error context scrubs it), retry, or
ask more than the one list (Ollama's `/api/tags` only when `/models` is not there).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

import httpx
from pydantic import SecretStr

from ._anthropic import AnthropicProvider
from ._errors import AuthenticationError, error_from_response
from ._http import HttpProvider
from ._models import _root
from ._openai import OpenAIProvider

__all__ = ["ConnectRefused", "check_server", "listing_headers"]

_PROVIDERS: Mapping[str, type[HttpProvider]] = {
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
}

CHECK_TIMEOUT_SECONDS = 10.0
"""Seconds the check may take to connect, and again to answer (the sidebar waits 30 s)."""


class ConnectRefused(ValueError):
    """The server check failed; `field` is the form field to fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _provider(kind: str, base_url: str | None, key: str | None) -> HttpProvider:
    cls = _PROVIDERS.get(kind)
    if cls is None:
        raise ConnectRefused("provider", f"must be one of {', '.join(_PROVIDERS)}, not {kind!r}")
    return cls(
        "connect-check",
        env={},
        base_url=base_url or None,
        api_key_env="",
        key_name="connect" if key else "",
        stored_key=SecretStr(key) if key else None,
    )


def listing_headers(kind: str, key: str | None) -> dict[str, str]:
    """The headers a model listing of `kind`'s server carries (its key's among them)."""
    return _provider(kind, None, key).server_headers() if kind in _PROVIDERS else {}


def check_server(
    kind: str,
    base_url: str | None,
    key: str | None,
    *,
    model: str | None = None,
    client: httpx.Client | None = None,
) -> tuple[str, list[str]]:
    """Ask the server for its models with `key`; the normalised base URL and the model ids.
    Raises `ConnectRefused` naming the field: a bad URL or nothing answering (`base_url`),
    the key refused (`api_key`), a model the server does not list (`model`)."""
    if base_url:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConnectRefused(
                "base_url", f"must start with http:// or https:// and name a host, not {base_url!r}"
            )
    provider = _provider(kind, base_url, key)
    url = provider.base_url + provider.models_path
    ctx = provider.error_context
    owned = client is None
    http = client or httpx.Client(timeout=httpx.Timeout(CHECK_TIMEOUT_SECONDS))
    try:
        try:
            response = http.get(url, headers=provider.server_headers())
            if response.status_code == 404 and kind == "openai":
                tags = http.get(f"{_root(provider.base_url)}/api/tags")  # Ollama's own list
                if tags.status_code == 200:
                    return provider.base_url, _names(tags.json().get("models"), "name", model)
        except httpx.HTTPError as exc:
            raise ConnectRefused(
                "base_url",
                f"nothing answered at {url}: {ctx.redact(str(exc)) or type(exc).__name__}",
            ) from None
        except ValueError:
            raise ConnectRefused("base_url", f"{url} did not answer with a model list") from None
        if response.status_code != 200:
            error = error_from_response(response, response.content, ctx)
            if isinstance(error, AuthenticationError):
                raise ConnectRefused(
                    "api_key",
                    f"the server refused the key (HTTP {response.status_code}): "
                    f"{error.detail or 'no detail'}",
                )
            hint = " (an OpenAI-compatible URL usually ends in /v1)" if kind == "openai" else ""
            raise ConnectRefused(
                "base_url",
                f"{url} answered HTTP {response.status_code}: {error.detail or 'no detail'}{hint}",
            )
        try:
            listed = response.json().get("data")
        except (ValueError, AttributeError):
            raise ConnectRefused("base_url", f"{url} did not answer with a model list") from None
        return provider.base_url, _names(listed, "id", model)
    finally:
        if owned:
            http.close()


def _names(entries: object, field: str, model: str | None) -> list[str]:
    if not isinstance(entries, list):
        raise ConnectRefused("base_url", "the server's answer holds no model list")
    names = [str(e[field]) for e in entries if isinstance(e, dict) and e.get(field)]
    if model and names and model not in names:
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        raise ConnectRefused(
            "model", f"{model!r} is not among the {len(names)} model(s) the server lists: {shown}"
        )
    return names
