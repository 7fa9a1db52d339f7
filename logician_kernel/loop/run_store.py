"""The durable side of a run, as the harness sees it.

The kernel implements `RunStore` over its append-only thread ledger; tests use an in-memory
list. The harness calls it synchronously, at turn and tool boundaries only: streaming deltas
never reach it.
"""

from __future__ import annotations

from typing import Literal, Protocol

from logician_kernel.tools import Recovery, ToolResult
from logician_kernel.types.messages import Message, ToolCall


class RunStore(Protocol):
    """Where a run's durable facts go. Every method persists before returning (the harness
    relies on the order of calls, not on any return value); an exception fails the run.

    The order per executed tool call is always `record_intent` -> `record_result` ->
    `append_message(the ToolResultMessage)` -> `record_commit`. A call with an intent but no
    result was interrupted: its declared recovery decides what happens to it. A call that is
    refused without running (unknown tool, arguments that are not a JSON object) gets only
    its error `ToolResultMessage`.
    """

    def append_message(self, message: Message) -> None:
        """Append one message to the conversation: the user's prompt, each assistant reply,
        each tool result."""

    def record_intent(self, call: ToolCall, recovery: Recovery) -> None:
        """Record that `call` is about to run, and how it recovers; before the tool starts."""

    def record_result(self, call_id: str, result: ToolResult) -> None:
        """Record what the tool returned (unbounded; the model sees a bounded copy)."""

    def record_commit(self, call_id: str) -> None:
        """Record that the call's result message is in the conversation: the call is done."""


class ReplacingRunStore(RunStore, Protocol):
    """A `RunStore` that can also take a whole new conversation. Optional: the harness calls
    `replace_messages` only when the store has it (found with `getattr`), after an automatic
    compaction."""

    def replace_messages(
        self, messages: list[Message], reason: Literal["compaction"], note: str
    ) -> None:
        """Make `messages` the whole conversation (without the system prompt) from here on;
        `note` says how it was made: "summary" or "run-checkpoint"."""
