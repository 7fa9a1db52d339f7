"""The provider contract every model client meets, and a helper to drain a stream."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Protocol, runtime_checkable

from logician_kernel.types.messages import ModelRequest, ModelResponse, ProviderEvent, Usage

from ._errors import IncompleteStreamError


@runtime_checkable
class Provider(Protocol):
    """A model client. `stream` yields the events of one call and ends with exactly one
    `ModelResponse`, or raises a `ProviderError`; cancelling the consumer cancels the call."""

    model: str
    """The model name requests are sent to."""

    def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]: ...

    async def aclose(self) -> None: ...


async def complete(provider: Provider, request: ModelRequest) -> ModelResponse:
    """Run one call to the end and return its response, ignoring the intermediate events."""
    async with aclosing(provider.stream(request)) as events:
        async for event in events:
            if isinstance(event, ModelResponse):
                return event
    raise IncompleteStreamError(
        f"{provider!r} ended its stream without a response", model=provider.model
    )


class MeteredProvider:
    """A provider whose every response's usage is also handed to `record`: how calls made
    on a run's behalf outside its turns (a compaction summary) count against its budget.
    Closing it leaves the wrapped provider open."""

    def __init__(self, provider: Provider, record: Callable[[Usage], object]) -> None:
        self.provider = provider
        self.model = provider.model
        self._record = record

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        async with aclosing(self.provider.stream(request)) as events:
            async for event in events:
                if isinstance(event, ModelResponse):
                    self._record(event.usage)
                yield event

    async def aclose(self) -> None:
        pass


class Metered(MeteredProvider):
    """A `MeteredProvider` that adds up the usage itself: for a model call made outside any
    run (an on-demand compaction, a branch merge), whose cost is reported to the user."""

    def __init__(self, provider: Provider) -> None:
        super().__init__(provider, self._add)
        self.usage = Usage()
        """Tokens used by the calls made through this wrapper."""

    def _add(self, usage: Usage) -> None:
        self.usage = self.usage + usage

    def spent(self) -> str:
        """`the summary used 500 in / 40 out tokens`, for a message to the user."""
        return (
            f"the summary used {self.usage.input_tokens:,} in / "
            f"{self.usage.output_tokens:,} out tokens"
        )
