"""The conversation vocabulary: messages, tool calls, model requests and provider events.

Pure data, no I/O, and no imports from the rest of `logician_kernel`: everything else builds
on these types. Messages are stored in the append-only ledger, so they must round-trip
through JSON exactly; every union is closed and discriminated by `kind`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .field_docs import FIELD_DOCS


class _Vocabulary(BaseModel):
    # `defer_build`: validators are built on first use; a kernel's start and plain cells use
    # none of these (the agent does).
    model_config = ConfigDict(
        frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, defer_build=True
    )


_DEFERRED = ConfigDict(defer_build=True)
"""The unions' adapters too are built on first use."""


# --- content parts ------------------------------------------------------------------------


class TextPart(_Vocabulary):
    """A piece of text in a message."""

    kind: Literal["text"] = "text"
    """Discriminator."""
    text: str
    """The text itself."""


class ImagePart(_Vocabulary):
    """An inline image, e.g. a plot produced by a notebook cell."""

    kind: Literal["image"] = "image"
    """Discriminator."""
    media_type: str
    """MIME type of the image, e.g. `image/png`."""
    data: str
    """The image bytes, base64-encoded (no `data:` prefix)."""


class ToolCall(_Vocabulary):
    """The model asking for one tool to run."""

    kind: Literal["tool_call"] = "tool_call"
    """Discriminator."""
    id: str
    """Identifier the matching `ToolResultMessage` refers back to."""
    name: str
    """Name of the tool, as declared in a `ToolSpec`."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Arguments decoded from the model's JSON; `{}` when `invalid_arguments` is set."""
    invalid_arguments: str | None = None
    """The raw argument text when it was not a JSON object; the tool must not run, and the
    model should be told why."""


class ThinkingPart(_Vocabulary):
    """The model's reasoning, kept in a reply only where the API wants it back: Anthropic's
    signed thinking blocks, which must accompany a tool-use turn. Other servers' reasoning is
    shown while it streams and never stored."""

    kind: Literal["thinking"] = "thinking"
    """Discriminator."""
    text: str = ""
    """The reasoning text (empty for a redacted block)."""
    signature: str = ""
    """The server's signature of the block (for a redacted block, its encrypted data), sent
    back unchanged."""
    redacted: bool = False
    """Whether the server sent the block encrypted (Anthropic `redacted_thinking`)."""


UserPart = Annotated[TextPart | ImagePart, Field(discriminator="kind")]
AssistantPart = Annotated[TextPart | ToolCall | ThinkingPart, Field(discriminator="kind")]


# --- messages -----------------------------------------------------------------------------


SYSTEM_LOCATION_PREFIX = "Current directory: "
"""Starts the one line of a system prompt that says where the notebook runs (the agent's
`system_prompt(where)`); a recording leaves that line out of its request fingerprints, so a
recorded session replays wherever its notebook is opened."""

NOTEBOOK_CONTEXT_OPEN = "<notebook-context>\n"
NOTEBOOK_CONTEXT_CLOSE = "\n</notebook-context>\n\n"
"""A prompt's user message may start with the notebook context between these two lines
(what `%logician context` shows: the notebook's path, the cells run before it, the last
error, the variables); a recording leaves it out of its request fingerprints, as it changes
with every machine and every run."""


def without_notebook_context(text: str) -> str:
    """`text` without a leading notebook context block (the prompt as the user typed it)."""
    if not text.startswith(NOTEBOOK_CONTEXT_OPEN):
        return text
    _, sep, rest = text.partition(NOTEBOOK_CONTEXT_CLOSE)
    return rest if sep else text


class SystemMessage(_Vocabulary):
    """Instructions for the model, outside the user/assistant exchange."""

    kind: Literal["system"] = "system"
    """Discriminator."""
    content: str
    """The instructions."""


class UserMessage(_Vocabulary):
    """What the user (or the notebook on the user's behalf) says."""

    kind: Literal["user"] = "user"
    """Discriminator."""
    content: list[UserPart]
    """Text and images, in order."""


class AssistantMessage(_Vocabulary):
    """One complete model reply: text and tool calls in the order the model produced them."""

    kind: Literal["assistant"] = "assistant"
    """Discriminator."""
    content: list[AssistantPart] = Field(default_factory=list)
    """Text parts, tool calls and (Anthropic) signed thinking blocks, in order."""

    @property
    def text(self) -> str:
        """All text parts joined."""
        return "".join(part.text for part in self.content if isinstance(part, TextPart))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [part for part in self.content if isinstance(part, ToolCall)]


class ToolResultMessage(_Vocabulary):
    """The outcome of one tool call, sent back to the model."""

    kind: Literal["tool_result"] = "tool_result"
    """Discriminator."""
    tool_call_id: str
    """The `ToolCall.id` this answers."""
    content: list[UserPart]
    """What the tool returned."""
    is_error: bool = False
    """Whether the tool failed (or was refused); the content then explains why."""


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage,
    Field(discriminator="kind"),
]
MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message, config=_DEFERRED)
"""Validates and (de)serialises any `Message`."""


# --- requests -----------------------------------------------------------------------------


class ToolSpec(_Vocabulary):
    """A tool the model may call."""

    name: str
    """Name the model uses to call the tool."""
    description: str
    """What the tool does, for the model."""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON schema of the arguments object."""


FRONTEND_TOOLS: tuple[str, ...] = ("notebook_read", "notebook_edit")
"""Tools offered only where a notebook frontend answers them (JupyterLab, `logician run`), not
under nbval, papermill or a console: a recording's fingerprint leaves their specs out, so a
session recorded on one side replays on the other."""


class ModelRequest(_Vocabulary):
    """Everything a provider needs for one model call (the model name is the provider's)."""

    messages: list[Message]
    """The conversation so far, system messages included."""
    tools: list[ToolSpec] = Field(default_factory=list)
    """Tools the model may call."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Cap on output tokens; `None` leaves it to the provider's default."""
    temperature: float | None = None
    """Sampling temperature; `None` leaves it to the server."""
    stop: list[str] = Field(default_factory=list)
    """Stop sequences."""
    tool_choice: str | None = None
    """`auto`, `required`, `none`, or the name of the tool the model must call; `None`
    sends nothing (the server's default, `auto`). Ignored when `tools` is empty."""


# --- what a provider yields ---------------------------------------------------------------


class Usage(_Vocabulary):
    """Token counts for one model call."""

    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    output_tokens: int = 0
    """Generated tokens."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filter", "refusal", "other"
]


class TextDelta(_Vocabulary):
    """A fragment of assistant text, as it streams. Ephemeral: never persisted."""

    kind: Literal["text_delta"] = "text_delta"
    """Discriminator."""
    text: str
    """The new text."""


class ReasoningDelta(_Vocabulary):
    """A fragment of the model's reasoning (`reasoning_content`, `reasoning`, a thinking block
    or a `<think>` span), as it streams. Ephemeral: shown, never persisted, never answer text."""

    kind: Literal["reasoning_delta"] = "reasoning_delta"
    """Discriminator."""
    text: str
    """The new reasoning text."""


class ToolCallStarted(_Vocabulary):
    """The model began a tool call."""

    kind: Literal["tool_call_started"] = "tool_call_started"
    """Discriminator."""
    id: str
    """The call's id."""
    name: str
    """The tool's name."""


class ToolCallArgumentsDelta(_Vocabulary):
    """A fragment of a tool call's JSON arguments, as it streams."""

    kind: Literal["tool_call_arguments_delta"] = "tool_call_arguments_delta"
    """Discriminator."""
    id: str
    """The call's id."""
    delta: str
    """The new fragment of JSON text."""


class ToolCallFinished(_Vocabulary):
    """A tool call is complete and its arguments are decoded."""

    kind: Literal["tool_call_finished"] = "tool_call_finished"
    """Discriminator."""
    call: ToolCall
    """The whole call."""


class UsageReported(_Vocabulary):
    """Token usage of the current call so far; the last report equals the final usage."""

    kind: Literal["usage"] = "usage"
    """Discriminator."""
    usage: Usage
    """Counts so far."""


class RetryAttempt(_Vocabulary):
    """The provider is about to wait and try the call again."""

    kind: Literal["retry"] = "retry"
    """Discriminator."""
    attempt: int
    """Which retry this is, from 1."""
    max_retries: int
    """How many retries are allowed in all."""
    delay: float
    """Seconds the provider waits before retrying."""
    reason: str
    """Why the previous attempt failed, e.g. `HTTP 429 rate limited`."""


class ModelResponse(_Vocabulary):
    """The final event of every successful stream: the whole reply."""

    kind: Literal["response"] = "response"
    """Discriminator."""
    message: AssistantMessage
    """The complete assistant message."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens used by this call; an estimate from the text when the server did not say."""
    usage_estimated: bool = False
    """Whether `usage` is our estimate because the server reported none."""
    stop_reason: StopReason
    """Why the model stopped, normalised across providers."""
    provider_stop_reason: str | None = None
    """The stop reason exactly as the server sent it."""
    model: str = ""
    """The model that answered, as the server named it."""
    response_id: str | None = None
    """The server's id for the response, for support requests."""


StreamEvent = Annotated[
    TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallArgumentsDelta
    | ToolCallFinished
    | UsageReported
    | RetryAttempt,
    Field(discriminator="kind"),
]
"""What a provider yields while a reply streams: every `ProviderEvent` but the final
`ModelResponse`. The harness forwards these unchanged, wrapped in its `ModelStreamed`."""

ProviderEvent = Annotated[
    TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallArgumentsDelta
    | ToolCallFinished
    | UsageReported
    | RetryAttempt
    | ModelResponse,
    Field(discriminator="kind"),
]
PROVIDER_EVENT_ADAPTER: TypeAdapter[ProviderEvent] = TypeAdapter(ProviderEvent, config=_DEFERRED)
"""Validates and (de)serialises any `ProviderEvent`."""
