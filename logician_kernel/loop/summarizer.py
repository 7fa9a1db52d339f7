"""The summary call of a compaction: the one place a compaction talks to the model.

`compaction/` stays pure (it builds the request and the new projection); the loop, which owns
model calls, turns a provider into the `Summariser` that `compaction.compact` is handed.
"""

from __future__ import annotations

from collections.abc import Sequence

from logician_kernel.compaction import CompactionFailed, Summariser
from logician_kernel.compaction.summary import DEFAULT_SUMMARY_MAX_TOKENS, build_summary_request
from logician_kernel.providers import Provider, ProviderError, complete
from logician_kernel.types.messages import Message


async def summarize(
    provider: Provider,
    older: Sequence[Message],
    *,
    focus: str | None = None,
    max_tokens: int = DEFAULT_SUMMARY_MAX_TOKENS,
) -> str:
    """Ask `provider` for a structured summary of `older` and return its text.

    Raises `CompactionFailed` when there is nothing to summarise, when the call raises any
    `ProviderError`, or when the model refuses or returns an empty summary.
    """
    if not older:
        raise CompactionFailed("nothing to compact")
    request = build_summary_request(older, focus=focus, max_tokens=max_tokens)
    try:
        response = await complete(provider, request)
    except ProviderError as error:
        raise CompactionFailed(f"the summary call failed: {error}") from error
    if response.stop_reason in ("refusal", "content_filter"):
        raise CompactionFailed(f"the model declined to summarise ({response.stop_reason})")
    summary = response.message.text.strip()
    if not summary:
        raise CompactionFailed("the model returned an empty summary")
    return summary


def summariser(provider: Provider, *, max_tokens: int = DEFAULT_SUMMARY_MAX_TOKENS) -> Summariser:
    """`provider` as the `Summariser` that `compaction.compact` takes."""

    async def summarise(older: Sequence[Message], focus: str | None) -> str:
        return await summarize(provider, older, focus=focus, max_tokens=max_tokens)

    return summarise
