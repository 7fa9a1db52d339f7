"""The public surface is what we mean it to be, the core stays Jupyter-free, and these tests
cannot reach the internet."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx
import pytest

import logician_kernel.providers as providers
import logician_kernel.types as types
from logician_kernel.providers import ProviderError, create_provider
from logician_kernel.types import ModelRequest, TextPart, UserMessage

from .conftest import RealNetworkForbidden

PROVIDERS_API = {
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
    "complete",
    "argument_problem",
    "create_provider",
    "load_recording",
    "request_fingerprint",
    "DEFAULT_CONTEXT_WINDOW",
    "KNOWN_MODELS",
    "ContextWindow",
    "KnownModel",
    "Metered",
    "MeteredProvider",
    "known_model",
    "resolve_context_window",
    "served_model_entries",
    "served_models",
}
TYPES_API = {
    "MESSAGE_ADAPTER",
    "PROVIDER_EVENT_ADAPTER",
    "AssistantMessage",
    "AssistantPart",
    "ImagePart",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "ProviderEvent",
    "ReasoningDelta",
    "RetryAttempt",
    "StopReason",
    "StreamEvent",
    "ThinkingPart",
    "SystemMessage",
    "TextDelta",
    "TextPart",
    "ToolCall",
    "ToolCallArgumentsDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolResultMessage",
    "ToolSpec",
    "FRONTEND_TOOLS",
    "Usage",
    "UsageReported",
    "UserMessage",
    "UserPart",
}


@pytest.mark.parametrize(("module", "expected"), [(providers, PROVIDERS_API), (types, TYPES_API)])
def test_exported_names(module, expected) -> None:
    assert set(module.__all__) == expected
    assert all(hasattr(module, name) for name in module.__all__)


def test_every_provider_error_is_a_provider_error() -> None:
    errors = [getattr(providers, n) for n in PROVIDERS_API if n.endswith("Error")]
    assert all(issubclass(error, ProviderError) for error in errors)


def test_importing_the_providers_pulls_in_no_jupyter() -> None:
    code = (
        "import sys, logician_kernel.providers, logician_kernel.types\n"
        "banned = {'IPython', 'ipykernel', 'ipywidgets', 'comm'} & set(sys.modules)\n"
        "assert not banned, banned\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_requests_to_real_hosts_are_refused_by_the_suite() -> None:
    request = ModelRequest(messages=[UserMessage(content=[TextPart(text="hi")])])

    async def scenario() -> None:
        async with httpx.AsyncClient(trust_env=False) as client:
            provider = create_provider(
                {"name": "gpt-4o"}, env={"OPENAI_API_KEY": "k"}, client=client
            )
            async for _ in provider.stream(request):
                pass

    with pytest.raises(RealNetworkForbidden, match="api.openai.com"):
        asyncio.run(scenario())
