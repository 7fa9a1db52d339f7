"""Provider tests run offline: every HTTP request must go to a loopback address."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from loopback import LoopbackServer

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class RealNetworkForbidden(AssertionError):
    pass


@pytest.fixture(autouse=True)
def _forbid_real_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any non-loopback request before it leaves the transport, and hide real keys."""
    original = httpx.AsyncHTTPTransport.handle_async_request

    async def guarded(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
        if request.url.host not in LOOPBACK_HOSTS:
            raise RealNetworkForbidden(f"provider tests must not reach {request.url.host}")
        return await original(self, request)

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", guarded)
    original_sync = httpx.HTTPTransport.handle_request

    def guarded_sync(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        if request.url.host not in LOOPBACK_HOSTS:  # context-window discovery is synchronous
            raise RealNetworkForbidden(f"provider tests must not reach {request.url.host}")
        return original_sync(self, request)

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", guarded_sync)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running
