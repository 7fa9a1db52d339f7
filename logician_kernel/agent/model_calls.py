"""What a run asks of the model beyond the conversation: the provider (refused while the source
of its endpoint is broken), the tool choice, checked against the run's tools before any
request, and the provider released on the loop that used it.

Why here: every run, compaction and merge runs on a loop of its own (`_loop`); a provider's
HTTP client must be closed on that loop, however the work ends.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from ..config import ModelSettings
from ..providers import Provider
from ..workspace import Workspace
from .errors import AgentError

T = TypeVar("T")


async def released(provider: Provider, work: Callable[[Provider], Awaitable[T]]) -> T:
    """`work(provider)` on the current worker loop, the provider's client closed on that loop
    however the work ends (a client must not outlive the loop it was made on)."""
    try:
        return await work(provider)
    finally:
        await provider.aclose()


def checked_tool_choice(choice: str | None, *toolsets: Mapping[str, object]) -> str | None:
    """`model.tool_choice`, checked against the tools this run offers: a server given the
    name of a tool it was not sent refuses the request, so say so before asking it."""
    if choice is None or choice in ("auto", "required", "none"):
        return choice
    names = sorted({name for tools in toolsets for name in tools})
    if choice not in names:
        raise AgentError(
            f"model.tool_choice is {choice!r}, which is neither auto, required, none nor a "
            f"tool of this run (tools: {', '.join(names)})"
        )
    return choice


def allowed_model(runtime: Workspace) -> ModelSettings:
    """The `[model]` settings, or `AgentError` naming the broken layer when the configuration
    cannot say where the model is (never a default endpoint with the user's key)."""
    refusal = runtime.config.model_refusal
    if refusal is not None:
        raise AgentError(refusal)
    return runtime.config.settings.model


def new_provider(runtime: Workspace) -> Provider:
    """A provider for the current `[model]` settings; a setup failure is an `AgentError`."""
    from ..providers import create_provider

    try:
        return create_provider(
            runtime.config.settings.model,
            env=runtime.env,
            root=runtime.config.workspace,
            key=runtime.config.api_key(),
        )
    except (ValueError, OSError) as exc:
        raise AgentError(f"cannot set up the model provider: {exc}") from None
