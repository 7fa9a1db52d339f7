"""Pure vocabulary shared by every layer: no I/O, and no imports from the rest of the package
but `_lazy` (the message models load on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .messages import (
        FRONTEND_TOOLS,
        MESSAGE_ADAPTER,
        PROVIDER_EVENT_ADAPTER,
        AssistantMessage,
        AssistantPart,
        ImagePart,
        Message,
        ModelRequest,
        ModelResponse,
        ProviderEvent,
        ReasoningDelta,
        RetryAttempt,
        StopReason,
        StreamEvent,
        SystemMessage,
        TextDelta,
        TextPart,
        ThinkingPart,
        ToolCall,
        ToolCallArgumentsDelta,
        ToolCallFinished,
        ToolCallStarted,
        ToolResultMessage,
        ToolSpec,
        Usage,
        UsageReported,
        UserMessage,
        UserPart,
    )

__all__ = [
    "MESSAGE_ADAPTER",
    "PROVIDER_EVENT_ADAPTER",
    "AssistantMessage",
    "AssistantPart",
    "ImagePart",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "ProviderEvent",
    "ReasoningDelta",
    "RetryAttempt",
    "StopReason",
    "StreamEvent",
    "SystemMessage",
    "TextDelta",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolCallArgumentsDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolResultMessage",
    "FRONTEND_TOOLS",
    "ToolSpec",
    "Usage",
    "UsageReported",
    "UserMessage",
    "UserPart",
]


if not TYPE_CHECKING:
    __getattr__ = exports(__name__)
