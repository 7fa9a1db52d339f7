"""The provider exception hierarchy and the mapping from HTTP failures onto it.

Every exception carries its payload as attributes and says what to fix in its message: the
env var, the model, the base URL, the status. None of them ever contains the API key: error
bodies are scrubbed of it before they are stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import SecretStr

from ..durable import redact

_DETAIL_LIMIT = 500
_CONTEXT_LENGTH_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "context size",
    "exceed_context_size",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)


# What a server says when it cannot do what we asked, and what the user should do about it.
# Checked before the status mapping: llama.cpp answers 500 here, which must not be retried.
_SERVER_LIMITS: tuple[tuple[str, str], ...] = (
    (
        "requires --jinja",
        "llama.cpp's llama-server was started without tool support: restart it with `--jinja` "
        "(tool calls need the model's Jinja chat template).",
    ),
    (
        "--enable-auto-tool-choice",
        "vLLM was started without automatic tool choice: restart `vllm serve` with "
        "`--enable-auto-tool-choice --tool-call-parser <parser>` (e.g. `hermes` for Qwen).",
    ),
    (
        "does not support tools",
        "this Ollama model has no tool support, and the agent needs tools: pull a model that "
        "has it (e.g. `ollama pull qwen2.5-coder:7b`; ollama.com lists them under Tools) and "
        "set [model] name to it.",
    ),
    (
        "cannot use tools with stream",
        "this server cannot stream tool calls: set `stream = false` in [model] so it answers "
        "whole replies.",
    ),
    (
        "streaming is not supported",
        "this server cannot stream: set `stream = false` in [model].",
    ),
)


# What a server says when it could not read the request itself: sending the same bytes again
# cannot succeed, whatever the status (llama-server answers 500 `Failed to parse tool call
# arguments as JSON: [json.exception.parse_error.101] ...` to a history it cannot template).
_MALFORMED_REQUEST_MARKERS = (
    "failed to parse",
    "could not parse",
    "unable to parse",
    "parse error",
    "json.exception",
    "invalid json",
    "malformed",
)


def says_malformed(detail: str) -> bool:
    """Whether an error body says the request (not the server's state) is at fault."""
    lowered = detail.lower()
    return any(marker in lowered for marker in _MALFORMED_REQUEST_MARKERS)


def server_limit(detail: str) -> str | None:
    """The fix for a server that cannot do tools or streaming, if `detail` says so."""
    lowered = detail.lower()
    return next((fix for marker, fix in _SERVER_LIMITS if marker in lowered), None)


class ProviderError(Exception):
    """Base of every error a provider raises."""

    retryable: bool = False
    """Whether trying the same request again may succeed."""

    def __init__(self, message: str, *, provider: str = "", model: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.model = model
        self.attempts = 1
        """How many attempts were made before giving up (set by the retry loop)."""

    def __str__(self) -> str:
        if self.attempts > 1:
            return f"{self.message} (gave up after {self.attempts} attempts)"
        return self.message


class MissingApiKeyError(ProviderError):
    """The environment variable that should hold the API key is unset or empty."""

    def __init__(
        self, env_var: str, *, provider: str, model: str, under_gateway: bool = False
    ) -> None:
        self.env_var = env_var
        # A gateway hands its kernels only the variables it is told to forward: setting the
        # key in the gateway's shell is not enough, and the user has to know which knob.
        where = (
            f" This kernel was started by a kernel gateway, which forwards only the variables "
            f"it is told to: add {env_var} to KG_ENV_PROCESS_WHITELIST (Jupyter Kernel "
            f"Gateway) or EG_INHERITED_ENVS (Enterprise Gateway) where the gateway starts, and "
            f"restart the kernel."
            if under_gateway
            else ""
        )
        super().__init__(
            f"no API key for {provider} model {model!r}: environment variable {env_var} is not "
            f'set. Set it, or set [model] api_key_env to the variable that holds the key (or to "" '
            f"for a server that needs none).{where}",
            provider=provider,
            model=model,
        )


class MissingStoredKeyError(ProviderError):
    """`model.key_name` names a stored key that is not in the user's credentials file."""

    def __init__(self, key_name: str, *, provider: str, model: str) -> None:
        self.key_name = key_name
        super().__init__(
            f"no API key for {provider} model {model!r}: the stored key {key_name!r} "
            "(model.key_name) is not in your credentials file. Connect the model again "
            "(Logician sidebar: Connect a model), or unset model.key_name to use api_key_env.",
            provider=provider,
            model=model,
        )


class ProviderConnectionError(ProviderError):
    """The server could not be reached, or it dropped the connection before answering."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """Connecting, sending, or waiting for the next bytes took longer than the timeout."""

    retryable = True


class IncompleteStreamError(ProviderError):
    """The stream ended (or the connection broke) before the provider's final event."""

    retryable = True


class ProviderStreamError(ProviderError):
    """The server reported an error inside an already-started stream."""

    def __init__(self, message: str, *, error_type: str, retryable: bool, **names: str) -> None:
        super().__init__(message, **names)
        self.error_type = error_type
        self.retryable = retryable


class ProviderHTTPError(ProviderError):
    """The server answered with an HTTP error status."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        detail: str,
        error_type: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
        **names: str,
    ) -> None:
        super().__init__(message, **names)
        self.status = status
        self.detail = detail
        self.error_type = error_type
        self.request_id = request_id
        self.retry_after = retry_after
        self.retryable = retryable


class AuthenticationError(ProviderHTTPError):
    """401/403: the key is missing, wrong, or not allowed to use this model."""


class ModelNotFoundError(ProviderHTTPError):
    """404: the model does not exist on this server (or the base URL is wrong)."""


class ContextLengthExceededError(ProviderHTTPError):
    """The request does not fit the model's context window."""


class RateLimitError(ProviderHTTPError):
    """429: too many requests or tokens; `retry_after` says how long the server asked for."""


class ServerError(ProviderHTTPError):
    """5xx: the server failed or is overloaded."""


class BadRequestError(ProviderHTTPError):
    """Any other 4xx: the server rejected the request."""


class ReplayError(ProviderError):
    """A recording could not be read or written."""

    def __init__(self, message: str, *, path: str, index: int | None = None) -> None:
        super().__init__(message, provider="replay")
        self.path = path
        self.index = index


class ReplayMismatchError(ReplayError):
    """A request does not match the recorded exchange at the same position."""


@dataclass(frozen=True)
class ErrorContext:
    """What an error message names; `secret` is scrubbed from everything stored."""

    provider: str
    model: str
    base_url: str
    api_key_env: str
    secret: SecretStr | None = field(default=None, repr=False)
    key_name: str = ""
    """`model.key_name`: the key is a stored one (not `api_key_env`'s variable)."""

    def redact(self, text: str) -> str:
        """`text` through the one redactor, with this provider's key among the secrets."""
        key = self.secret.get_secret_value() if self.secret else ""
        return redact(text, (key,) if key else ())


def error_from_response(
    response: httpx.Response, body: bytes, ctx: ErrorContext
) -> ProviderHTTPError:
    """Map an HTTP error response onto the hierarchy."""
    status = response.status_code
    detail, error_type = _describe_body(body)
    detail = ctx.redact(detail)
    names = {"provider": ctx.provider, "model": ctx.model}
    fields: dict[str, Any] = {
        "status": status,
        "detail": detail,
        "error_type": error_type,
        "request_id": response.headers.get("x-request-id") or response.headers.get("request-id"),
        "retry_after": parse_retry_after(response.headers),
        **names,
    }
    said = f"(HTTP {status}): {detail}"
    lowered = f"{detail} {error_type or ''}".lower()
    fix = server_limit(detail)
    if fix is not None and status >= 400:
        return BadRequestError(
            f"{ctx.provider} server at {ctx.base_url} cannot serve model {ctx.model!r} as "
            f"asked {said}. {fix}",
            **fields,
        )
    if status in (400, 413, 422) and any(m in lowered for m in _CONTEXT_LENGTH_MARKERS):
        return ContextLengthExceededError(
            f"context length exceeded for model {ctx.model!r} {said}", **fields
        )
    if status in (401, 403):
        key = f"${ctx.api_key_env}" if ctx.api_key_env else "no key (api_key_env is empty)"
        if ctx.key_name:
            key = f"the stored key {ctx.key_name!r} (model.key_name)"
        return AuthenticationError(
            f"{ctx.provider} rejected the API key {said}. The key came from {key}.", **fields
        )
    if status == 404:
        return ModelNotFoundError(
            f"model {ctx.model!r} not found at {ctx.base_url} {said}. "
            "Check [model] name and base_url.",
            **fields,
        )
    if status == 429:
        wait = f"; it asked to wait {fields['retry_after']:g}s" if fields["retry_after"] else ""
        return RateLimitError(f"{ctx.provider} rate limit {said}{wait}", retryable=True, **fields)
    if status >= 500 and says_malformed(detail):
        return BadRequestError(
            f"{ctx.provider} server at {ctx.base_url} rejected the request as malformed {said}. "
            "Not retried: the same request would fail the same way.",
            **fields,
        )
    if status >= 500:
        return ServerError(f"{ctx.provider} server error {said}", retryable=True, **fields)
    # 408 (request timeout) and 409 (lock conflict) are transient on the big providers.
    return BadRequestError(
        f"{ctx.provider} rejected the request for model {ctx.model!r} {said}",
        retryable=status in (408, 409),
        **fields,
    )


def _describe_body(body: bytes) -> tuple[str, str | None]:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return (text[:_DETAIL_LIMIT] or "(empty body)"), None
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, str):
        return error[:_DETAIL_LIMIT], None
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or json.dumps(error)
        kind = error.get("code") or error.get("type")
        return str(message)[:_DETAIL_LIMIT], (str(kind) if kind else None)
    return text[:_DETAIL_LIMIT], None


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)
