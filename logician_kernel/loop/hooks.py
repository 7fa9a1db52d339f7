"""Hooks: the points where code outside the harness observes a run.

`Hooks` is a base class of no-op async `on_*` methods; subclass it and override the ones you
need. Hooks observe, they do not steer: the objects they receive are immutable, and what they
return is ignored. Permission decisions are not hooks (they return a decision with a reason
and live in `policy/`).
"""

from __future__ import annotations

from logician_kernel.tools import ToolResult
from logician_kernel.types.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall


class Hooks:
    """No-op hooks. Contract for every method: it must not raise, and it should return
    promptly, because the run waits for it. The harness still guards each call: an exception
    is logged (`logging`, logger `logician_kernel.loop`) and ignored, never breaking the run.
    Cancellation (`asyncio.CancelledError`) is not an error: it propagates and stops the run.
    """

    async def on_before_model_call(self, request: ModelRequest, turn: int) -> None:
        """Called just before the request of turn `turn` (from 1) is sent."""

    async def on_after_model_call(self, response: ModelResponse, turn: int) -> None:
        """Called once the reply of turn `turn` is complete and appended to the conversation."""

    async def on_before_tool(self, call: ToolCall) -> None:
        """Called after the call's intent is recorded, just before the tool runs. Independent
        read-only calls run concurrently: their `on_before_tool` calls all come first. Calls
        refused without running (unknown tool, malformed arguments) get no tool hooks."""

    async def on_after_tool(self, call: ToolCall, result: ToolResult) -> None:
        """Called once the call's result is recorded, appended and committed. `result` is the
        tool's own result; the model sees it bounded to the tool context's output limit."""

    async def on_turn_end(self, turn: int, message: AssistantMessage) -> None:
        """Called when turn `turn` is over: `message` and all its tool results are in the
        conversation. Not called for a turn cut short by an error or a cancellation."""
