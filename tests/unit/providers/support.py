"""Shared test plumbing: providers pointed at the loopback server, and stream draining."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx
from loopback import LoopbackServer

from logician_kernel.providers import (
    AnthropicProvider,
    HttpProvider,
    OpenAIProvider,
    ProviderError,
    RetryPolicy,
)
from logician_kernel.types import (
    ModelRequest,
    ProviderEvent,
    SystemMessage,
    TextPart,
    ToolSpec,
    UserMessage,
)

KEY = "sk-loopback-secret-0123456789"
REQUEST = ModelRequest(
    messages=[SystemMessage(content="Be brief."), UserMessage(content=[TextPart(text="Hi")])],
    tools=[
        ToolSpec(
            name="read",
            description="Read a file.",
            parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        )
    ],
)
FAST_RETRY = RetryPolicy(max_retries=2, initial_delay=0.25, jitter=0.0)


@dataclass
class Outcome:
    events: list[ProviderEvent] = field(default_factory=list)
    error: ProviderError | None = None
    sleeps: list[float] = field(default_factory=list)


def make_provider(
    kind: str, server: LoopbackServer, client: httpx.AsyncClient, outcome: Outcome, **options: Any
) -> HttpProvider:
    async def fake_sleep(seconds: float) -> None:
        outcome.sleeps.append(seconds)

    cls = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}[kind]
    env = {cls.default_api_key_env: KEY}
    base = server.url + ("/v1" if kind == "openai" else "")
    options = {
        "env": env,
        "base_url": base,
        "client": client,
        "retry": FAST_RETRY,
        "sleep": fake_sleep,
        **options,
    }
    return cls("loop-model", **options)


def run_stream(
    kind: str, server: LoopbackServer, request: ModelRequest = REQUEST, **options: Any
) -> Outcome:
    """Drain one stream against the server, keeping the events seen before any error."""
    outcome = Outcome()

    async def scenario() -> None:
        async with httpx.AsyncClient(trust_env=False) as client:
            provider = make_provider(kind, server, client, outcome, **options)
            try:
                async with aclosing(provider.stream(request)) as events:
                    async for event in events:
                        outcome.events.append(event)
            except ProviderError as error:
                outcome.error = error

    asyncio.run(scenario())
    return outcome


def kinds(events: list[ProviderEvent]) -> list[str]:
    return [event.kind for event in events]
