"""Fakes for driving the harness: a scripted provider, scriptable tools, a recording store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from logician_kernel.loop import AgentHarness, HarnessDeps, Hooks
from logician_kernel.tools import ToolContext, ToolResult
from logician_kernel.types import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolSpec,
    Usage,
    UsageReported,
)

HANG = object()
"""In a provider script: wait forever (until cancelled)."""


def reply(text: str, *, usage: Usage | None = None) -> list[Any]:
    """A streamed plain answer."""
    usage = usage or Usage(input_tokens=10, output_tokens=3)
    half = len(text) // 2
    return [
        TextDelta(text=text[:half]),
        TextDelta(text=text[half:]),
        UsageReported(usage=usage),
        ModelResponse(
            message=AssistantMessage(content=[TextPart(text=text)]),
            usage=usage,
            stop_reason="end_turn",
        ),
    ]


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def tool_reply(*calls: ToolCall, text: str = "") -> list[Any]:
    """A streamed reply asking for `calls`."""
    events: list[Any] = [TextDelta(text=text)] if text else []
    for c in calls:
        events += [ToolCallStarted(id=c.id, name=c.name), ToolCallFinished(call=c)]
    content: list[Any] = [TextPart(text=text)] if text else []
    usage = Usage(input_tokens=20, output_tokens=5)
    events.append(
        ModelResponse(
            message=AssistantMessage(content=[*content, *calls]),
            usage=usage,
            stop_reason="tool_use",
        )
    )
    return events


class ScriptedProvider:
    """Plays one script per request: provider events, exceptions to raise, or `HANG`."""

    def __init__(self, *scripts: Sequence[Any], model: str = "scripted-model") -> None:
        self.model = model
        self.scripts = list(scripts)
        self.requests: list[ModelRequest] = []
        self.closed_streams = 0

    async def stream(self, request: ModelRequest):
        self.requests.append(request)
        script = self.scripts.pop(0)
        try:
            for item in script:
                if item is HANG:
                    await asyncio.Event().wait()
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.closed_streams += 1

    async def aclose(self) -> None:
        return None


Behaviour = Callable[[dict[str, Any]], Awaitable[ToolResult | str]]


async def _echo(arguments: dict[str, Any]) -> str:
    return f"ok {arguments}"


class FakeTool:
    """A tool whose behaviour is an async function of its arguments."""

    def __init__(
        self,
        name: str,
        behaviour: Behaviour = _echo,
        *,
        read_only: bool = True,
        recovery: str = "pure",
    ) -> None:
        self.name = name
        self.description = f"The {name} tool."
        self.parameters = {"type": "object", "properties": {}}
        self.read_only = read_only
        self.recovery = recovery
        self.behaviour = behaviour

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def describe(self, arguments: dict[str, Any]) -> str:
        return f"{self.name} {arguments}"

    async def run(self, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        result = await self.behaviour(arguments)
        return ToolResult(content=result) if isinstance(result, str) else result


@dataclass
class MemoryStore:
    """Records every store call, in order."""

    log: list[tuple[Any, ...]] = field(default_factory=list)

    def append_message(self, message: Message) -> None:
        self.log.append(("message", message))

    def record_intent(self, call: ToolCall, recovery: str) -> None:
        self.log.append(("intent", call.id, recovery))

    def record_result(self, call_id: str, result: ToolResult) -> None:
        self.log.append(("result", call_id, result))

    def record_commit(self, call_id: str) -> None:
        self.log.append(("commit", call_id))

    @property
    def messages(self) -> list[Message]:
        return [entry[1] for entry in self.log if entry[0] == "message"]

    def shape(self) -> list[str]:
        """The log as short strings: `message:user`, `intent:c1`, ..."""
        return [
            f"message:{entry[1].kind}" if entry[0] == "message" else f"{entry[0]}:{entry[1]}"
            for entry in self.log
        ]


def make_ctx(tmp_path: Any = ".", max_output_bytes: int = 30_000) -> ToolContext:
    from pathlib import Path

    return ToolContext(
        workspace=Path(tmp_path), capture=lambda path: None, max_output_bytes=max_output_bytes
    )


def make_harness(
    provider: Any,
    *tools: FakeTool,
    store: MemoryStore | None = None,
    hooks: Hooks | None = None,
    **options: Any,
) -> tuple[AgentHarness, MemoryStore]:
    store = store or MemoryStore()
    ctx = options.pop("ctx", None) or make_ctx()
    collaborators = {k: options.pop(k) for k in list(options) if k in _DEPS}
    deps = HarnessDeps(
        provider, {t.name: t for t in tools}, ctx, store, hooks=hooks, **collaborators
    )
    return AgentHarness(deps, **options), store


_DEPS = {"gate", "controller", "audit", "more_tools"}
"""`make_harness` options that are collaborators (`HarnessDeps`), not harness settings."""


async def collect(harness: AgentHarness, prompt: str = "Hi", history: Sequence[Message] = ()):
    return [event async for event in harness.run(prompt, history)]


def run_all(harness: AgentHarness, prompt: str = "Hi", history: Sequence[Message] = ()):
    return asyncio.run(collect(harness, prompt, history))


def kind_of(event: Any) -> str:
    """The event's kind; for a provider event the harness forwarded, the provider's kind."""
    return event.event.kind if event.kind == "model_streamed" else event.kind


def kinds(events: Sequence[Any]) -> list[str]:
    return [kind_of(event) for event in events]
