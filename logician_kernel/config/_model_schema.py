"""The `[model]` section's shape: which provider and model, where its key and endpoint come
from, and what a request may add. Part of the settings schema (`_schema.py`), which it never
reads a file or the environment for either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)  # descriptions: _field_docs.py


def _provider_default(schema: dict[str, Any]) -> None:
    # The stored default ("") is a placeholder filled from the provider; editors should not
    # offer it.
    schema.pop("default", None)
    schema["provider_default"] = True


ProviderName = Literal["openai", "anthropic", "replay"]


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
"""`auto`, `required`, `none`, or a tool name as the model APIs accept them (an MCP tool's
name included)."""


RESERVED_BODY_FIELDS = frozenset({"model", "messages", "tools", "system", "stream"})
"""Request fields `model.extra_body` may not set: replacing them would change the
conversation the ledger records, or the wire format the decoder reads."""


DEFAULT_API_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "replay": "",
}
"""Conventional API-key variable per provider; the replay provider needs no key."""


DEFAULT_MODEL_NAME: dict[str, str] = {
    "openai": "gpt-4.1",
    "anthropic": "claude-sonnet-4-5",
    "replay": "replay",
}


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_KEY_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ModelSettings(_Section):
    """The model the agent talks to."""

    provider: ProviderName = "openai"
    """Model provider: `openai` (any OpenAI-compatible endpoint), `anthropic`, or `replay`
    (plays a recorded session; no network)."""

    name: str = Field(default="", min_length=1, json_schema_extra=_provider_default)
    """Model name as the provider knows it. Default: `gpt-4.1` for openai,
    `claude-sonnet-4-5` for anthropic, `replay` for replay."""

    base_url: str | None = Field(default=None, examples=["https://api.openai.com/v1"])
    """API base URL; unset means the provider's public endpoint. Must start with
    `http://` or `https://`."""

    api_key_env: str = Field(default="", json_schema_extra=_provider_default)
    """Name of the environment variable holding the API key - the key itself never appears in
    any config file. Default: `OPENAI_API_KEY` for openai, `ANTHROPIC_API_KEY` for anthropic,
    empty (no key) for replay. Set it to "" to send no key (local servers such as Ollama).
    A project file sets it only after `logician trust --allow model.api_key_env`."""

    key_name: str = Field(default="", examples=["openai"])
    """Name of a key stored with *Connect a model* (the lab sidebar) in the user's
    credentials file (`<user config dir>/credentials.json`, mode 0600; never in a config file
    or the workspace). When set, that key is sent instead of `api_key_env`'s variable. A
    project file sets it only after `logician trust --allow model.key_name`."""

    request_timeout_seconds: float = Field(default=600.0, gt=0)
    """Seconds to wait for a whole model response, streaming included."""

    connect_timeout_seconds: float = Field(default=10.0, gt=0)
    """Seconds to wait for the connection to the provider."""

    max_retries: int = Field(default=2, ge=0, le=10)
    """Retries of a failed model request (rate limits, overload, connection errors)."""

    stream: bool = True
    """Stream replies as they are written. Set false for a server that only answers whole
    (or cannot stream tool calls): the cell then shows each reply when it is complete."""

    thinking_budget_tokens: int | None = Field(default=None, ge=1024, examples=[8000])
    """Anthropic extended thinking: tokens the model may think before answering (at least
    1024); unset means no extended thinking. OpenAI-compatible reasoning models think without
    being asked; their reasoning is shown either way."""

    replay_file: Path | None = Field(default=None, examples=["recordings/session.jsonl"])
    """Recorded session played by the `replay` provider; relative to the workspace root."""

    record_file: Path | None = Field(default=None, examples=["recordings/session.jsonl"])
    """When set, every exchange with the (real) provider is also written to this recording,
    for later offline replay with `provider = "replay"`; relative to the workspace root."""

    context_window: int | None = Field(default=None, gt=0, examples=[128_000])
    """Context window in tokens; unset means the provider's known value for the model.
    Compaction triggers relative to it."""

    max_response_tokens: int | None = Field(default=None, gt=0, examples=[8192])
    """Upper bound on tokens in one model response; unset means the provider's default."""

    temperature: float | None = Field(default=None, ge=0, le=2, examples=[0.2])
    """Sampling temperature; unset means the provider's default."""

    tool_choice: str | None = Field(default=None, examples=["required"])
    """Whether the model must call a tool: `auto` (it decides), `required` (it must call
    one), `none` (it may not), or a tool's name (it must call that one). Unset sends nothing,
    which servers treat as `auto`. Small local models often call tools only when forced, as
    the server's tool grammar then shapes the reply. A project file sets it only after
    `logician trust --allow model.tool_choice`."""

    tool_choice_scope: Literal["first", "every"] = "first"
    """Which requests of a run carry `tool_choice`: `first` (the run's first request only, so
    the model can still answer once its tools have run) or `every` request."""

    extra_body: dict[str, Any] = Field(
        default_factory=dict, examples=[{"top_k": 20, "chat_template_kwargs": {}}]
    )
    """Fields merged into the body of every model request, for what a server takes beyond
    the standard ones: `top_k`, `parallel_tool_calls`, llama.cpp's `chat_template_kwargs`,
    Ollama's `options = {num_ctx = 32768}`, vLLM's `guided_json` (docs/providers.md lists
    them per server). Tables merge into the agent's own (`stream_options`), other values
    replace them; the fields the agent builds the conversation from (`model`, `messages`,
    `tools`, `system`, `stream`) cannot be set here. A project file sets it only after
    `logician trust --allow model.extra_body`."""

    @model_validator(mode="before")
    @classmethod
    def _provider_defaults(cls, data: Any) -> Any:
        # The key variable and model name follow the provider unless a layer names them, so a
        # user switching provider never keeps the other provider's key variable by accident.
        # An unknown provider still gets openai's defaults, so it is reported once, alone.
        if isinstance(data, dict):
            provider = data.get("provider", "openai")
            if not (isinstance(provider, str) and provider in DEFAULT_API_KEY_ENV):
                provider = "openai"
            data = dict(data)
            # Absent means the provider's variable; an explicit "" means "send no key" (Ollama,
            # llama.cpp, vLLM, LM Studio on loopback need none).
            if data.get("api_key_env") is None:
                data["api_key_env"] = DEFAULT_API_KEY_ENV[provider]
            if not data.get("name"):
                data["name"] = DEFAULT_MODEL_NAME[provider]
        return data

    @field_validator("key_name")
    @classmethod
    def _key_name(cls, value: str) -> str:
        if value and not _KEY_NAME.match(value):
            raise ValueError("a stored key's name (letters, digits, _ . -; at most 64)")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if value and not _ENV_NAME.match(value):
            raise ValueError("an environment variable name (letters, digits, underscore)")
        return value

    @field_validator("tool_choice")
    @classmethod
    def _tool_choice(cls, value: str | None) -> str | None:
        if value is not None and not _TOOL_NAME.match(value):
            raise ValueError("`auto`, `required`, `none`, or a tool's name")
        return value

    @field_validator("extra_body")
    @classmethod
    def _extra_body(cls, value: dict[str, Any]) -> dict[str, Any]:
        taken = sorted(RESERVED_BODY_FIELDS & set(value))
        if taken:
            raise ValueError(
                f"{', '.join(taken)}: set by the agent itself; extra_body may not replace "
                f"{', '.join(sorted(RESERVED_BODY_FIELDS))}"
            )
        try:  # it is sent as JSON: a TOML date or time has no JSON form
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"JSON values only (text, numbers, booleans, arrays, tables): {exc}"
            ) from None
        return value

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^\s/]+", value):
            raise ValueError("a URL starting with http:// or https://")
        return value
