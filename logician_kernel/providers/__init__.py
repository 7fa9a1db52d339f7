"""Model clients: OpenAI-compatible Chat Completions and Anthropic Messages over httpx, plus
replay and recording of sessions. Providers own transport and auth; wire formats own bodies.

Never imports Jupyter, never reads the process environment or config files by itself, and
never lets an API key reach a repr, an exception, a log line or a recording.
Names load from their modules on first use (`_lazy`): the model picker's table of known
models needs neither httpx nor a client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._anthropic import AnthropicMessagesFormat, AnthropicProvider
    from ._assembly import argument_problem
    from ._base import Metered, MeteredProvider, Provider, complete
    from ._connect import ConnectRefused, check_server, listing_headers
    from ._errors import (
        AuthenticationError,
        BadRequestError,
        ContextLengthExceededError,
        IncompleteStreamError,
        MissingApiKeyError,
        MissingStoredKeyError,
        ModelNotFoundError,
        ProviderConnectionError,
        ProviderError,
        ProviderHTTPError,
        ProviderStreamError,
        ProviderTimeoutError,
        RateLimitError,
        ReplayError,
        ReplayMismatchError,
        ServerError,
    )
    from ._factory import ProviderSettings, create_provider
    from ._http import HttpProvider, RetryPolicy, StreamDecoder, WireFormat
    from ._models import (
        DEFAULT_CONTEXT_WINDOW,
        KNOWN_MODELS,
        ContextWindow,
        KnownModel,
        known_model,
        resolve_context_window,
        served_model_entries,
        served_models,
    )
    from ._openai import OpenAIChatFormat, OpenAIProvider
    from ._replay import (
        RecordedExchange,
        RecordingProvider,
        ReplayProvider,
        load_recording,
        request_fingerprint,
    )
    from ._sse import SSEEvent, SSEParser

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "KNOWN_MODELS",
    "ContextWindow",
    "KnownModel",
    "Metered",
    "MeteredProvider",
    "AnthropicMessagesFormat",
    "AnthropicProvider",
    "AuthenticationError",
    "BadRequestError",
    "ContextLengthExceededError",
    "HttpProvider",
    "IncompleteStreamError",
    "MissingApiKeyError",
    "MissingStoredKeyError",
    "ConnectRefused",
    "check_server",
    "listing_headers",
    "ModelNotFoundError",
    "OpenAIChatFormat",
    "OpenAIProvider",
    "Provider",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderSettings",
    "ProviderStreamError",
    "ProviderTimeoutError",
    "RateLimitError",
    "RecordedExchange",
    "RecordingProvider",
    "ReplayError",
    "ReplayMismatchError",
    "ReplayProvider",
    "RetryPolicy",
    "SSEEvent",
    "SSEParser",
    "ServerError",
    "StreamDecoder",
    "WireFormat",
    "argument_problem",
    "complete",
    "create_provider",
    "known_model",
    "load_recording",
    "request_fingerprint",
    "resolve_context_window",
    "served_model_entries",
    "served_models",
]

__getattr__ = exports(__name__)
