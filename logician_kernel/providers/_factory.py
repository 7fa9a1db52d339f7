"""Building a provider from the resolved `[model]` settings.

This module reads no files and no process environment of its own: the config layer passes
the resolved settings and the environment mapping in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from ..types.field_docs import FIELD_DOCS
from ._anthropic import AnthropicProvider
from ._base import Provider
from ._http import HttpProvider, RetryPolicy, Sleep
from ._openai import OpenAIProvider
from ._replay import RecordingProvider, ReplayProvider

_HTTP_PROVIDERS: dict[str, type[HttpProvider]] = {
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
}


class ProviderSettings(BaseModel):
    """What a provider is built from; field names match the `[model]` settings table."""

    model_config = ConfigDict(frozen=True, extra="ignore", use_attribute_docstrings=FIELD_DOCS)

    provider: Literal["openai", "anthropic", "replay"] = "openai"
    """Wire format: `openai` (any Chat Completions server), `anthropic`, or `replay`."""
    name: str
    """Model name sent to the server, e.g. `gpt-4o` or `qwen2.5-coder:7b`."""
    base_url: str | None = None
    """Server URL; the provider's public API when unset."""
    api_key_env: str | None = None
    """Environment variable holding the key (default OPENAI_API_KEY / ANTHROPIC_API_KEY);
    an empty string sends no key."""
    connect_timeout_seconds: float = Field(default=10.0, gt=0)
    """Seconds allowed to connect."""
    request_timeout_seconds: float = Field(default=600.0, gt=0)
    """Seconds allowed for a whole response, streaming included."""
    max_retries: int = Field(default=2, ge=0)
    """Retries on 429, 5xx and connection failures before any output arrived."""
    stream: bool = True
    """Stream replies; false asks for whole replies, for servers that cannot stream them."""
    thinking_budget_tokens: int | None = Field(default=None, ge=1024)
    """Anthropic extended thinking: tokens the model may think before answering."""
    replay_file: Path | None = None
    """Recording the `replay` provider plays back (required for `replay`)."""
    record_file: Path | None = None
    """When set, a real provider's exchanges are written here for later replay."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Fields merged into every request body (`top_k`, Ollama `options`, ...)."""
    key_name: str = ""
    """A stored key's name (`model.key_name`): the key passed as `create_provider(key=...)`
    is sent instead of `api_key_env`'s variable."""

    @model_validator(mode="after")
    def _replay_needs_a_recording(self) -> ProviderSettings:
        if self.provider == "replay" and not self.replay_file:
            raise ValueError('provider "replay" needs `replay_file`, the path of a recording')
        return self


class ModelSpec(Protocol):
    """The validated `[model]` settings a provider is built from: the config's `ModelSettings`
    or a `ProviderSettings`. Taken as they are; the factory never validates them again."""

    @property
    def provider(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def connect_timeout_seconds(self) -> float: ...
    @property
    def request_timeout_seconds(self) -> float: ...
    @property
    def max_retries(self) -> int: ...
    @property
    def stream(self) -> bool: ...
    @property
    def thinking_budget_tokens(self) -> int | None: ...
    @property
    def replay_file(self) -> Path | None: ...
    @property
    def record_file(self) -> Path | None: ...
    @property
    def extra_body(self) -> Mapping[str, Any]: ...
    @property
    def key_name(self) -> str: ...


def create_provider(
    settings: ModelSpec | Mapping[str, Any],
    *,
    env: Mapping[str, str],
    client: httpx.AsyncClient | None = None,
    sleep: Sleep | None = None,
    root: Path | None = None,
    key: SecretStr | None = None,
) -> Provider:
    """A provider for `settings`: already-validated settings (the config's `[model]` section,
    which the config layer validated once, or a `ProviderSettings`) are used as they are; a
    plain mapping, for scripts, is validated as `ProviderSettings`. The API key is looked up in
    `env`, or is `key` when the settings name a stored key (`key_name`, read by the config
    layer); relative recording paths are taken from `root` (the workspace). `client` and
    `sleep` are for tests and for sharing one connection pool."""
    if isinstance(settings, Mapping):
        settings = ProviderSettings.model_validate(settings)
    base = root or Path()
    if settings.provider == "replay":
        if settings.replay_file is None:
            # The config schema lets `provider = "replay"` be set before its file; say so here.
            raise ValueError('provider "replay" needs `model.replay_file`, the path of a recording')
        return ReplayProvider(base / settings.replay_file, model=settings.name)
    options: dict[str, Any] = {} if sleep is None else {"sleep": sleep}
    if settings.provider not in _HTTP_PROVIDERS:
        raise ValueError(f"unknown model provider {settings.provider!r}")
    provider: Provider = _HTTP_PROVIDERS[settings.provider](
        settings.name,
        env=env,
        base_url=settings.base_url,
        api_key_env=settings.api_key_env,
        client=client,
        connect_timeout=settings.connect_timeout_seconds,
        request_timeout=settings.request_timeout_seconds,
        retry=RetryPolicy(max_retries=settings.max_retries),
        stream=settings.stream,
        thinking_budget_tokens=settings.thinking_budget_tokens,
        extra_body=settings.extra_body,
        key_name=settings.key_name,
        stored_key=key,
        **options,
    )
    if settings.record_file:
        secret = env.get(settings.api_key_env or "", "")
        if settings.key_name and key is not None:
            secret = key.get_secret_value()
        provider = RecordingProvider(provider, base / settings.record_file, secrets=(secret,))
    return provider
