"""Transport shared by the HTTP providers: the client, auth, timeouts, retries, SSE decoding.

A provider here owns how bytes move (and the key that authorises them); a `WireFormat` owns
what the bytes mean. This module must never log, store or raise the API key, and must
never retry once any event of an attempt has been handed to the consumer.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar, cast

import anyio
import anyio.lowlevel
import httpx
from pydantic import SecretStr

from logician_kernel.types.messages import (
    ModelRequest,
    ModelResponse,
    ProviderEvent,
    RetryAttempt,
    Usage,
)

from ._assembly import CHARS_PER_TOKEN
from ._errors import (
    ErrorContext,
    IncompleteStreamError,
    MissingApiKeyError,
    MissingStoredKeyError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeoutError,
    error_from_response,
)
from ._sse import SSEEvent, SSEParser

logger = logging.getLogger("logician_kernel.providers")

Sleep = Callable[[float], Awaitable[Any]]
T = TypeVar("T")


class StreamDecoder(Protocol):
    """Per-call state of a wire format: SSE events in, provider events out."""

    done: bool
    """True once the final `ModelResponse` has been produced."""

    def feed(self, sse: SSEEvent) -> list[ProviderEvent]: ...

    def finish(self) -> list[ProviderEvent]:
        """The body ended: produce what is still owed, or raise `IncompleteStreamError`."""
        ...

    def whole(self, payload: Any) -> list[ProviderEvent]:
        """A reply the server sent as one JSON body (`stream: false`): all its events."""
        ...


class WireFormat(Protocol):
    """What a provider's HTTP bodies look like."""

    @property
    def path(self) -> str:
        """Appended to the base URL."""
        ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Non-secret headers the format needs (e.g. an API version)."""
        ...

    def body(self, request: ModelRequest, model: str) -> dict[str, Any]: ...

    def decoder(self, model: str) -> StreamDecoder: ...


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before trying a failed call again."""

    max_retries: int = 2
    """Retries after the first attempt; 0 disables retrying."""
    initial_delay: float = 0.5
    """Backoff before the first retry, doubled for each further one."""
    max_delay: float = 8.0
    """Cap on the computed backoff."""
    max_retry_after: float = 60.0
    """A server asking for a longer wait than this is not retried; the error surfaces."""
    jitter: float = 0.25
    """Fraction of the backoff removed at random, so clients do not retry in lockstep."""

    def delay(self, retry: int, error: ProviderError) -> float | None:
        """Seconds before retry number `retry` (from 1), or None to give up."""
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        backoff = min(self.max_delay, self.initial_delay * 2 ** (retry - 1))
        return backoff * (1 - self.jitter * random.random())


class HttpProvider:
    """Base of the HTTP providers. Subclasses name the provider, pick its wire format and say
    how to authenticate."""

    provider: ClassVar[str]
    wire: ClassVar[WireFormat]
    default_base_url: ClassVar[str]
    default_api_key_env: ClassVar[str]
    models_path: ClassVar[str]
    """Where the server lists its models, below `base_url` (`connect.py` asks it)."""

    def __init__(
        self,
        model: str,
        *,
        env: Mapping[str, str],
        base_url: str | None = None,
        api_key_env: str | None = None,
        client: httpx.AsyncClient | None = None,
        connect_timeout: float = 10.0,
        request_timeout: float | None = 600.0,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Sleep = anyio.sleep,
        stream: bool = True,
        thinking_budget_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        key_name: str = "",
        stored_key: SecretStr | None = None,
    ) -> None:
        """`api_key_env=None` means the provider's default variable; `""` means send no key.
        The key is read from `env` now; a missing one is reported when a call is made.
        `key_name` (`model.key_name`): the key is `stored_key` instead, a key the user stored
        with *Connect a model* (the config layer read it; a provider reads no file).
        `request_timeout` bounds each attempt as a whole, streaming included (None: no bound)."""
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.api_key_env = self.default_api_key_env if api_key_env is None else api_key_env
        self.key_name = key_name
        if key_name:
            self._api_key = stored_key if stored_key and stored_key.get_secret_value() else None
        else:
            key = env.get(self.api_key_env) if self.api_key_env else None
            self._api_key = SecretStr(key) if key else None
        self._under_gateway = env.get("KERNEL_GATEWAY") == "1"  # set by Kernel/Enterprise Gateway
        self._client = client
        self._owns_client = client is None
        self._client_loop: object | None = None  # the event loop our own client belongs to
        self.request_timeout = request_timeout
        # The per-attempt deadline bounds reads, writes and pool waits; httpx bounds connecting.
        self._timeout = httpx.Timeout(None, connect=connect_timeout)
        self.retry = retry
        self.streaming = stream
        """False asks the server for whole replies (`model.stream = false`), for servers
        that cannot stream (or cannot stream tool calls)."""
        self.thinking_budget_tokens = thinking_budget_tokens
        """Tokens the model may think before answering, where the API takes a budget."""
        self.extra_body = dict(extra_body or {})
        """Fields merged into every request body (`model.extra_body`)."""
        self._sleep = sleep
        self._ctx = ErrorContext(
            provider=self.provider,
            model=model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            secret=self._api_key,
            key_name=key_name,
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    def auth_headers(self, api_key: str) -> dict[str, str]:
        raise NotImplementedError

    def prepare_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """Provider options that live in the body (e.g. a thinking budget); none by default."""
        return body

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it (an injected one is the caller's).
        The provider stays usable: the next call builds a new client."""
        if self._client is not None and self._owns_client:
            client, self._client = self._client, None
            if self._client_loop == anyio.lowlevel.current_token():
                await client.aclose()
            # else: its loop is gone, and with it every socket the client could close.

    async def __aenter__(self) -> HttpProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ProviderEvent, None]:
        """Events of one model call, ending with a `ModelResponse`. Failures before any event
        are retried per `self.retry`, each announced by a `RetryAttempt`; cancelling the
        consumer closes the response at once. Iterate under `contextlib.aclosing` so that
        leaving early closes the connection too."""
        if self.key_name and self._api_key is None:
            raise MissingStoredKeyError(self.key_name, provider=self.provider, model=self.model)
        if self.api_key_env and self._api_key is None and not self.key_name:
            raise MissingApiKeyError(
                self.api_key_env,
                provider=self.provider,
                model=self.model,
                under_gateway=self._under_gateway,
            )
        body = merge_body(self.prepare_body(self.wire.body(request, self.model)), self.extra_body)
        if not self.streaming:
            body["stream"] = False
            body.pop("stream_options", None)
        finished = False
        try:
            async for event in self._attempts(body):
                yield event
            finished = True
        finally:
            if not finished:
                # A failed, cancelled or abandoned call may leave a half-read connection in
                # the pool: start the next call (often the next run, on another loop) afresh.
                await self._discard_client()

    async def _discard_client(self) -> None:
        with anyio.CancelScope(shield=True):  # even while the call is being cancelled
            try:
                await self.aclose()
            except Exception as exc:  # noqa: BLE001 - closing must not hide the call's error
                logger.debug("%s: closing the HTTP client failed: %r", self.provider, exc)

    async def _attempts(self, body: dict[str, Any]) -> AsyncGenerator[ProviderEvent, None]:
        retries = 0
        while True:
            yielded = False
            try:
                async with aclosing(self._attempt(body)) as attempt:
                    async for event in attempt:
                        yielded = True
                        if isinstance(event, ModelResponse) and event.usage_estimated:
                            event = _estimate_input(event, body)
                        yield event
                return
            except ProviderError as error:
                error.attempts = retries + 1
                give_up = yielded or not error.retryable or retries >= self.retry.max_retries
                delay = None if give_up else self.retry.delay(retries + 1, error)
                if delay is None:
                    raise
                failure = error
            retries += 1
            reason = _short_reason(failure)
            logger.info(
                "%s %r: retry %d/%d in %.2fs after %s",
                *(self.provider, self.model, retries, self.retry.max_retries, delay, reason),
            )
            yield RetryAttempt(
                attempt=retries, max_retries=self.retry.max_retries, delay=delay, reason=reason
            )
            await self._sleep(delay)

    async def _attempt(self, body: dict[str, Any]) -> AsyncGenerator[ProviderEvent, None]:
        url = self.base_url + self.wire.path
        deadline = (
            None if self.request_timeout is None else anyio.current_time() + self.request_timeout
        )
        receiving = False
        try:
            client = self._http()
            request = client.build_request(
                "POST", url, json=body, headers=self._headers(), timeout=self._timeout
            )
            response = await _before(deadline, client.send(request, stream=True))
            try:
                if response.is_error:
                    raw = await _before(deadline, response.aread())
                    raise error_from_response(response, raw, self._ctx)
                receiving = True
                async with aclosing(self._decode(response, deadline)) as events:
                    async for event in events:
                        yield event
            finally:
                await response.aclose()
        except TimeoutError as exc:  # our deadline for the whole response
            raise ProviderTimeoutError(
                f"{self.provider} gave no complete response within {self.request_timeout:g}s "
                f"at {url}",
                provider=self.provider,
                model=self.model,
            ) from exc
        except httpx.UnsupportedProtocol as exc:
            raise ProviderError(
                f"base_url {self.base_url!r} is not an http(s) URL: {exc}",
                provider=self.provider,
                model=self.model,
            ) from exc
        except httpx.TimeoutException as exc:
            raise ProviderTimeoutError(
                f"{self.provider} timed out {_timeout_phase(exc, self._timeout)} at {url}",
                provider=self.provider,
                model=self.model,
            ) from exc
        except httpx.TransportError as exc:
            cause = self._ctx.redact(str(exc) or type(exc).__name__)
            if receiving:
                raise IncompleteStreamError(
                    f"{self.provider} connection lost mid-stream at {url}: {cause}",
                    provider=self.provider,
                    model=self.model,
                ) from exc
            raise ProviderConnectionError(
                f"cannot reach {self.provider} at {url}: {cause}",
                provider=self.provider,
                model=self.model,
            ) from exc

    async def _decode(
        self, response: httpx.Response, deadline: float | None
    ) -> AsyncGenerator[ProviderEvent, None]:
        decoder = self.wire.decoder(self.model)
        if "json" in response.headers.get("content-type", ""):
            # A whole reply: asked for with `stream = false`, or a server that ignores `stream`.
            raw = await _before(deadline, response.aread())
            try:
                payload = json.loads(raw)
            except ValueError:
                payload = raw.decode("utf-8", errors="replace")
            for event in decoder.whole(payload):
                yield event
            return
        parser = SSEParser()
        body = cast(AsyncGenerator[bytes, None], response.aiter_bytes())
        async with aclosing(body) as chunks:
            while not decoder.done:  # once the final event is out, the rest is not read
                try:
                    chunk = await _before(deadline, anext(chunks))
                except StopAsyncIteration:
                    break
                for sse in parser.feed(chunk):
                    for event in decoder.feed(sse):
                        yield event
        if decoder.done:
            return
        for sse in parser.close():
            for event in decoder.feed(sse):
                yield event
        if not decoder.done:
            for event in decoder.finish():
                yield event

    def _headers(self) -> dict[str, str]:
        return {"accept": "text/event-stream", **self.server_headers()}

    def server_headers(self) -> dict[str, str]:
        """The headers every request to the server carries: the wire format's and the key."""
        headers = dict(self.wire.headers)
        if self._api_key is not None:
            headers.update(self.auth_headers(self._api_key.get_secret_value()))
        return headers

    @property
    def error_context(self) -> ErrorContext:
        """What this provider's errors name (and the key they never show)."""
        return self._ctx

    def _http(self) -> httpx.AsyncClient:
        """Our client, bound to the running loop: the agent runs each piece of work on a
        fresh loop (agent/_loop.py), and a pooled connection of a closed loop fails with
        `RuntimeError: Event loop is closed`. A client of another loop is dropped unclosed,
        since only its own (gone) loop could close it."""
        if not self._owns_client:
            assert self._client is not None
            return self._client
        loop = anyio.lowlevel.current_token()
        if self._client is None or self._client_loop != loop:
            self._client = httpx.AsyncClient(timeout=self._timeout)
            self._client_loop = loop
        return self._client


def merge_body(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`extra` merged into `body`: tables key by key, anything else replaced (the schema
    keeps `extra_body` off the fields the conversation is built from)."""
    merged = dict(body)
    for key, value in extra.items():
        mine = merged.get(key)
        if isinstance(value, Mapping) and isinstance(mine, Mapping):
            merged[key] = merge_body(dict(mine), value)
        else:
            merged[key] = value
    return merged


async def _before(deadline: float | None, awaitable: Awaitable[T]) -> T:
    """Await with the time left until `deadline` (raising TimeoutError), never across a yield:
    a cancel scope left open over a yield would cancel the consumer instead of us."""
    if deadline is None:
        return await awaitable
    with anyio.fail_after(deadline - anyio.current_time()):
        return await awaitable


def _estimate_input(response: ModelResponse, body: dict[str, Any]) -> ModelResponse:
    """The server reported no usage: estimate the prompt from what was sent, by the same rule
    as the output (the tools' schemas and the system prompt are part of the prompt too)."""
    sent = json.dumps([body.get(k) for k in ("system", "messages", "tools")], ensure_ascii=False)
    usage = Usage(
        input_tokens=-(-len(sent) // CHARS_PER_TOKEN),
        output_tokens=response.usage.output_tokens,
    )
    return response.model_copy(update={"usage": usage})


def _short_reason(error: ProviderError) -> str:
    if isinstance(error, ProviderHTTPError):
        return f"HTTP {error.status} {type(error).__name__}: {error.detail[:120]}"
    return f"{type(error).__name__}: {error.message[:160]}"


def _timeout_phase(exc: httpx.TimeoutException, timeout: httpx.Timeout) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"connecting (after {timeout.connect}s)"
    if isinstance(exc, httpx.ReadTimeout):
        return f"waiting for data (no bytes for {timeout.read}s)"
    if isinstance(exc, httpx.WriteTimeout):
        return f"sending the request (after {timeout.write}s)"
    return f"waiting for a free connection (after {timeout.pool}s)"
