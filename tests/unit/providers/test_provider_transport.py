"""Transport behaviour shared by the HTTP providers: retries, errors, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from contextlib import aclosing
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from loopback import Reply, anthropic_events, openai_chunks, sse

from logician_kernel.providers import (
    AuthenticationError,
    ContextLengthExceededError,
    MissingApiKeyError,
    ModelNotFoundError,
    OpenAIProvider,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    RetryPolicy,
    ServerError,
)
from logician_kernel.providers._errors import parse_retry_after
from logician_kernel.types import RetryAttempt, TextDelta

from .support import KEY, REQUEST, Outcome, kinds, make_provider, run_stream


def ok(kind: str) -> Reply:
    if kind == "openai":
        return Reply(pieces=[sse(*openai_chunks(text=["ok"]), done=True)])
    return Reply(pieces=[sse(*anthropic_events(text=["ok"]), event_names=True)])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_429_honours_retry_after_and_is_visible(server, kind) -> None:
    server.script(Reply.error(429, {"error": {"message": "slow down"}}, retry_after="3"), ok(kind))
    outcome = run_stream(kind, server)
    assert outcome.error is None and outcome.sleeps == [3.0]
    retry = outcome.events[0]
    assert isinstance(retry, RetryAttempt)
    assert (retry.attempt, retry.max_retries, retry.delay) == (1, 2, 3.0)
    assert "429" in retry.reason and "slow down" in retry.reason
    assert kinds(outcome.events)[1:] == ["text_delta", "usage", "response"]


def test_500_then_success_backs_off_exponentially(server) -> None:
    boom = Reply.error(500, {"error": {"message": "boom"}})
    server.script(boom, Reply.error(503, b"upstream gone"), ok("openai"))
    outcome = run_stream("openai", server)
    assert outcome.error is None and outcome.sleeps == [0.25, 0.5]
    assert kinds(outcome.events)[:2] == ["retry", "retry"] and len(server.requests) == 3


def test_connection_reset_before_answer_is_retried(server) -> None:
    server.script(Reply(end="reset"), ok("anthropic"))
    outcome = run_stream("anthropic", server)
    assert outcome.error is None and kinds(outcome.events)[0] == "retry"
    assert "ProviderConnectionError" in outcome.events[0].reason


def test_retries_exhausted_raise_the_last_error_with_attempt_count(server) -> None:
    server.script(*[Reply.error(502, {"error": {"message": "bad gateway"}})] * 3)
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, ServerError) and outcome.error.status == 502
    assert outcome.error.attempts == 3 and "gave up after 3 attempts" in str(outcome.error)
    assert kinds(outcome.events) == ["retry", "retry"]


def test_retry_after_beyond_the_cap_surfaces_at_once(server) -> None:
    server.script(Reply.error(429, {"error": {"message": "quota"}}, retry_after="3600"))
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, RateLimitError) and outcome.error.retry_after == 3600
    assert outcome.sleeps == [] and "wait 3600s" in str(outcome.error)


def test_retry_after_in_milliseconds_and_as_an_http_date() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    when = datetime.now(timezone.utc) + timedelta(seconds=30)
    seconds = parse_retry_after(
        httpx.Headers({"retry-after": email.utils.format_datetime(when, usegmt=True)})
    )
    assert seconds is not None and 25 < seconds <= 30
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None


def test_401_names_the_env_var_and_never_the_key(server, caplog) -> None:
    echoed = {"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}}
    server.script(Reply.error(401, echoed))
    with caplog.at_level(logging.DEBUG):
        outcome = run_stream("openai", server)
    error = outcome.error
    assert isinstance(error, AuthenticationError) and error.status == 401
    assert "$OPENAI_API_KEY" in str(error) and "HTTP 401" in str(error)
    exposed = [str(error), repr(error), error.detail, repr(vars(error)), caplog.text]
    assert not any(KEY in text for text in exposed)


def test_404_names_model_and_base_url(server) -> None:
    server.script(Reply.error(404, {"error": 'model "loop-model" not found, try pulling it first'}))
    outcome = run_stream("openai", server)
    assert isinstance(outcome.error, ModelNotFoundError)
    assert "'loop-model'" in str(outcome.error) and f"{server.url}/v1" in str(outcome.error)


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        (
            "openai",
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens.",
                    "code": "context_length_exceeded",
                }
            },
        ),
        (
            "anthropic",
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
        ),
    ],
)
def test_context_length_exceeded(server, kind, payload) -> None:
    server.script(Reply.error(400, payload))
    outcome = run_stream(kind, server)
    assert isinstance(outcome.error, ContextLengthExceededError) and len(server.requests) == 1
    assert "context length exceeded for model 'loop-model'" in str(outcome.error)


def test_missing_key_names_the_variable_before_any_request(server) -> None:
    outcome = run_stream("anthropic", server, env={}, api_key_env="WORK_ANTHROPIC_KEY")
    assert isinstance(outcome.error, MissingApiKeyError)
    assert outcome.error.env_var == "WORK_ANTHROPIC_KEY" and "WORK_ANTHROPIC_KEY" in str(
        outcome.error
    )
    assert server.requests == []


def test_empty_api_key_env_sends_no_key(server) -> None:
    server.script(ok("openai"))
    assert run_stream("openai", server, env={}, api_key_env="").error is None
    assert "authorization" not in server.requests[0].headers


def test_repr_shows_the_env_var_not_the_key() -> None:
    provider = OpenAIProvider("m", env={"OPENAI_API_KEY": KEY})
    assert "OPENAI_API_KEY" in repr(provider) and KEY not in repr(provider)
    assert KEY not in repr(vars(provider))


def test_request_timeout_bounds_the_whole_streamed_response(server) -> None:
    # Bytes keep coming, so no per-read timeout would fire; the whole-response bound does.
    server.script(slow_stream("openai"))
    # 3 s: long enough for the first events on a loaded machine, far short of the ~8 s stream
    outcome = run_stream("openai", server, request_timeout=3.0, retry=RetryPolicy(max_retries=0))
    assert isinstance(outcome.error, ProviderTimeoutError)
    assert "gave no complete response within 3s" in str(outcome.error)
    assert 0 < len(outcome.events) < 200 and server.client_left.wait(5)


def test_timeout_before_any_output_is_retried(server) -> None:
    server.script(Reply(pieces=[b": thinking\n\n"] * 3, delay=0.2), ok("openai"))
    outcome = run_stream("openai", server, request_timeout=0.3)
    assert outcome.error is None
    assert (
        kinds(outcome.events)[0] == "retry" and "ProviderTimeoutError" in outcome.events[0].reason
    )


def test_unreachable_server_is_a_connection_error(server) -> None:
    closed = httpx.URL(server.url).copy_with(port=1)  # nothing listens on port 1
    outcome = run_stream("openai", server, base_url=str(closed), retry=RetryPolicy(max_retries=0))
    assert isinstance(outcome.error, ProviderConnectionError) and "cannot reach openai" in str(
        outcome.error
    )


def slow_stream(kind: str) -> Reply:
    if kind == "openai":
        events = sse(*openai_chunks(text=[f"tick {i} " for i in range(200)]), done=True)
    else:
        events = sse(*anthropic_events(text=[f"tick {i} " for i in range(200)]), event_names=True)
    return Reply(pieces=events.splitlines(keepends=True), delay=0.02)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_interrupt_cancels_a_slow_stream_promptly(server, kind) -> None:
    server.script(slow_stream(kind))
    seen: list[TextDelta] = []

    async def scenario() -> float:
        async with httpx.AsyncClient(trust_env=False) as client:
            provider = make_provider(kind, server, client, Outcome())
            first = asyncio.Event()

            async def consume() -> None:
                async for event in provider.stream(REQUEST):
                    if isinstance(event, TextDelta):
                        seen.append(event)
                        first.set()

            task = asyncio.create_task(consume())
            await asyncio.wait_for(first.wait(), 10)
            interrupted = time.monotonic()
            task.cancel()  # what a kernel interrupt does to the running cell
            with pytest.raises(asyncio.CancelledError):
                await task
            return time.monotonic() - interrupted

    assert asyncio.run(scenario()) < 0.5
    assert server.client_left.wait(5), "the server kept streaming to a cancelled client"
    assert 0 < len(seen) < 200


def test_leaving_the_stream_early_closes_the_connection(server) -> None:
    server.script(slow_stream("openai"))

    async def scenario() -> None:
        async with httpx.AsyncClient(trust_env=False) as client:
            provider = make_provider("openai", server, client, Outcome())
            async with aclosing(provider.stream(REQUEST)) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        break

    asyncio.run(scenario())
    assert server.client_left.wait(5)
