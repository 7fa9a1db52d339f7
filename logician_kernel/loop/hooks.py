"""Hooks: the points where code outside the harness observes a run.

`Hooks` is a base class of no-op async `on_*` methods; subclass it and override the ones you
need. Hooks observe, they do not steer: the objects they receive are immutable, and what they
return is ignored - with one exception, `check_tool`, which may refuse a call the permission
gate allowed (a user's `pre_tool` hook exiting 2), with a reason the model is told. Permission
decisions are not hooks (they return a decision with a reason and live in `policy/`).
`CommandHooks` (`command_hooks.py`) runs the configured `[hooks]` commands.
"""

from __future__ import annotations

from logician_kernel.tools import ToolResult
from logician_kernel.types.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from logician_kernel.types.run import RunOutcome


class Hooks:
    """No-op hooks. Contract for every method: it must not raise, and it should return
    promptly, because the run waits for it. The harness still guards each call: an exception
    is logged (`logging`, logger `logician_kernel.loop`) and ignored, never breaking the run.
    Cancellation (`asyncio.CancelledError`) is not an error: it propagates and stops the run.
    """

    async def on_run_start(self, prompt: str, model: str) -> None:
        """Called once the run has started, before its first model request."""

    async def on_run_end(self, outcome: RunOutcome, turns: int, tool_calls: int) -> None:
        """Called when the run is over, whatever the outcome, just before `RunEnded`."""

    async def check_tool(self, call: ToolCall) -> str | None:
        """Called for each call the permission gate allowed, before its intent is recorded.
        Return a reason to refuse it (the call does not run, the model is told the reason),
        or None to let it run. An exception lets the call run."""
        return None

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
