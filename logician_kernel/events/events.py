"""The harness event stream: what one agent run reports, in order, as it happens, and what
the agent reports of the conversation work it does outside a run (a compaction asked for on
demand, a branch merge): the runtime phases all come from these events.

A closed union discriminated by `kind`. Events are ephemeral: the UI folds them into
`RuntimeState` and forgets them. They are never persisted (the durable side of a run goes
through the `RunStore` at turn and tool boundaries), so text deltas may be as fine-grained as
the provider streams them. The provider's own stream events are wrapped (`ModelStreamed`),
never re-declared here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from logician_kernel.types.messages import (
    AssistantMessage,
    StopReason,
    StreamEvent,
    ToolCall,
    Usage,
)
from logician_kernel.types.run import RunOutcome

from ..types.field_docs import FIELD_DOCS


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class RunStarted(_Event):
    """A run began: the cell's prompt was taken in."""

    kind: Literal["run_started"] = "run_started"
    """Discriminator."""
    prompt: str
    """The user's prompt, as given."""
    model: str = ""
    """The model the run talks to."""
    context_window: int = 0
    """The model's context window in tokens, as resolved for compaction (0: unknown)."""


class TurnStarted(_Event):
    """A turn began: one model request and the tool calls it asks for."""

    kind: Literal["turn_started"] = "turn_started"
    """Discriminator."""
    turn: int
    """Which turn of the run, from 1."""


class ModelCallStarted(_Event):
    """The model request of a turn was sent."""

    kind: Literal["model_call_started"] = "model_call_started"
    """Discriminator."""
    turn: int
    """The turn it belongs to."""


class ModelStreamed(_Event):
    """A provider event of the reply in flight, forwarded unchanged: text and reasoning
    fragments, a tool call beginning, its argument fragments, usage so far, a retry.

    The harness wraps what the provider declares rather than re-declaring it; the complete
    reply comes as `ModelResponded`."""

    kind: Literal["model_streamed"] = "model_streamed"
    """Discriminator."""
    event: StreamEvent
    """The provider's event, as it streamed (`event.kind` says which)."""


class ModelResponded(_Event):
    """The model's reply is complete (and already appended to the conversation)."""

    kind: Literal["model_responded"] = "model_responded"
    """Discriminator."""
    message: AssistantMessage
    """The whole reply: text and tool calls."""
    usage: Usage
    """Tokens this request used."""
    stop_reason: StopReason = "end_turn"
    """Why the model stopped."""
    usage_estimated: bool = False
    """Whether `usage` is an estimate because the server reported none."""


class ToolStarted(_Event):
    """A tool call began executing (its intent is already recorded)."""

    kind: Literal["tool_started"] = "tool_started"
    """Discriminator."""
    call: ToolCall
    """The call."""
    description: str
    """One line for a human, e.g. `read notes.md`."""


class ToolFinished(_Event):
    """A tool call is answered: executed and committed, or refused without running."""

    kind: Literal["tool_finished"] = "tool_finished"
    """Discriminator."""
    call_id: str
    """The call's id."""
    name: str
    """The tool's name."""
    result_display: str
    """What to show a human: the tool's display text, else its (bounded) output."""
    is_error: bool
    """Whether the call failed or was refused."""


class TurnEnded(_Event):
    """A turn is over: the reply and all its tool results are in the conversation."""

    kind: Literal["turn_ended"] = "turn_ended"
    """Discriminator."""
    turn: int
    """Which turn ended."""


CompactionTrigger = Literal["threshold", "on_demand"]
"""What started a compaction: the conversation reached the policy's threshold before a model
request of a run, or the user asked for one (`%logician compact`, `AgentSession.compact`)."""


class CompactionStarted(_Event):
    """Compacting the conversation began: before a model request, or on demand."""

    kind: Literal["compaction_started"] = "compaction_started"
    """Discriminator."""
    reason: str
    """Why, for a human (e.g. the estimate against the threshold)."""
    trigger: CompactionTrigger = "threshold"
    """What started it; an on-demand compaction happens outside any run."""


class CompactionFinished(_Event):
    """The compaction is over: the conversation was replaced, or kept as it was."""

    kind: Literal["compaction_finished"] = "compaction_finished"
    """Discriminator."""
    result: Literal["summary", "run_checkpoint", "failed"]
    """What happened: a summary replaced older turns, the conversation was reset to a run
    checkpoint, or the compaction failed and the conversation was kept unchanged."""
    before: int
    """Estimated tokens of the conversation before."""
    after: int
    """Estimated tokens after (equal to `before` when it failed)."""
    detail: str = ""
    """Why it failed, when it did."""
    trigger: CompactionTrigger = "threshold"
    """What started it (as in its `CompactionStarted`)."""


class BranchSummaryStarted(_Event):
    """Merging a rewound branch began: the model is summarising what the branch did."""

    kind: Literal["branch_summary_started"] = "branch_summary_started"
    """Discriminator."""
    branch_id: str
    """The branch being summarised."""


class BranchSummaryFinished(_Event):
    """The branch merge is over: its summary is in the conversation, or nothing changed."""

    kind: Literal["branch_summary_finished"] = "branch_summary_finished"
    """Discriminator."""
    branch_id: str
    """The branch that was summarised."""
    result: Literal["merged", "failed"]
    """`merged`: the summary was appended to the conversation; `failed`: the conversation is
    unchanged."""
    detail: str = ""
    """Why it failed, when it did."""


class HookReported(_Event):
    """A `[hooks]` command denied a call or failed; the run goes on either way."""

    kind: Literal["hook_reported"] = "hook_reported"
    """Discriminator."""
    hook: Literal["pre_tool", "post_tool", "run_start", "run_end"]
    """Which hook point ran it."""
    command: str
    """The command, as configured."""
    status: Literal["denied", "failed", "timed_out", "not_started"]
    """`denied`: a `pre_tool` hook exited 2 and the call did not run; `failed`: another
    non-zero exit (127: the program was not found); `timed_out`: killed at
    `hooks.timeout_seconds`; `not_started`: it could not be started."""
    detail: str
    """The reason, or what went wrong (the start of its stderr)."""
    call_id: str = ""
    """The tool call it ran for (`pre_tool` / `post_tool`)."""


class RunEnded(_Event):
    """The run is over. Always the last event of a run, exactly once."""

    kind: Literal["run_ended"] = "run_ended"
    """Discriminator."""
    outcome: RunOutcome
    """How it ended."""
    usage: Usage
    """Tokens used by all of the run's model requests."""
    turns: int
    """Model requests made."""
    tool_calls: int
    """Tool calls the model asked for (refused ones included)."""
    usage_estimated: bool = False
    """Whether part of `usage` is an estimate: a reply cut off (an interrupt, a broken
    stream) before the server reported what it used."""


HarnessEvent = Annotated[
    RunStarted
    | TurnStarted
    | ModelCallStarted
    | ModelStreamed
    | ModelResponded
    | ToolStarted
    | ToolFinished
    | TurnEnded
    | CompactionStarted
    | CompactionFinished
    | BranchSummaryStarted
    | BranchSummaryFinished
    | HookReported
    | RunEnded,
    Field(discriminator="kind"),
]
HARNESS_EVENT_ADAPTER: TypeAdapter[HarnessEvent] = TypeAdapter(HarnessEvent)
"""Validates and (de)serialises any `HarnessEvent`, e.g. across a comm."""
