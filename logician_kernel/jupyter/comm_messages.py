"""The `logician` comm's messages, declared once: two closed unions of pydantic models.

`FrontendMessage` is what a frontend (the lab extension's sidebar, or any client) may send;
`KernelMessage` is what the kernel answers or announces. Every message is a JSON object
`{"v": 1, "type": ...}`; a request may carry an `id`, which its answer echoes as `re`. The
comm (`comm.py`) validates every incoming message against `FrontendMessage` (a malformed one is
answered with an `error` naming the field, and changes nothing) and builds every outgoing one
through `KernelMessage`. `comm_schema.json` is generated from these unions (`comm_schema.py`:
`python -m logician_kernel.jupyter.comm_schema --write`) and a test fails when the committed
file differs; the lab extension's `protocol.ts` is tested against that file. An approval
request is the gate's own `ApprovalPrompt` (the part of its `ApprovalRequest` that leaves the
kernel), never a copy re-keyed by hand.

The models live by direction and subject - `comm_requests.py` (what a frontend sends),
`comm_frames.py` (the kernel's answers and announcements about frames and rewinds),
`comm_answers.py` (the rest of what the kernel sends), on `comm_base.py` - and this module
unites them: import the messages from here.

Must never: do I/O or talk to a comm (the models are plain data; `comm.py` owns the wire).
"""

from __future__ import annotations

from typing import Annotated, Any, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .comm_answers import (
    ApprovalDecided,
    ApprovalRequested,
    ApprovalResolved,
    Approvals,
    ConfigLayerRow,
    ConfigRow,
    ConfigSetDone,
    ConfigShown,
    DocumentSaved,
    Error,
    Hello,
    McpServer,
    ModelConnected,
    ModelDefaulted,
    Models,
    ModelUsed,
    NotebookAttached,
    NotebookReceived,
    NotebookRequest,
    NoticeRow,
    Notices,
    NoticeSaid,
    NoticesReadDone,
    ProfileModel,
    Status,
    StatusMessage,
    StatusPhase,
)
from .comm_base import (
    SCHEMA_VERSION,
    TARGET,
    Count,
    NonEmpty,
    RequestId,
    Version,
)
from .comm_frames import (
    CallLine,
    CellMatch,
    CellStep,
    DiffCell,
    DiffSide,
    FileRow,
    FrameRow,
    Frames,
    FramesCallRewound,
    FramesCallsListed,
    FramesChanged,
    FramesDiffed,
    FramesFilesListed,
    FramesPreviewed,
    FramesPreviewPaged,
    FramesResumed,
    FramesRewound,
    FramesRewoundNotice,
    FramesUndoDone,
    FramesUndone,
    PathDetail,
    PreviewCell,
    PreviewFile,
    PreviewGroup,
    RestoreProgressMessage,
    VariableStep,
)
from .comm_requests import (
    FRONTEND,
    ApprovalDecide,
    ApprovalsList,
    ConfigSet,
    ConfigShow,
    DocumentSavedRequest,
    FramesCalls,
    FramesDiff,
    FramesFiles,
    FramesList,
    FramesPreview,
    FramesPreviewPage,
    FramesResume,
    FramesRewind,
    FramesRewindCall,
    FramesUndo,
    FrontendMessage,
    ModelConnect,
    ModelDefault,
    ModelsList,
    ModelUse,
    NotebookAttach,
    NotebookCell,
    NotebookReply,
    NoticesList,
    NoticesRead,
    StatusRequest,
)

__all__ = [
    "ApprovalDecide",
    "ApprovalDecided",
    "ApprovalRequested",
    "ApprovalResolved",
    "Approvals",
    "ApprovalsList",
    "CallLine",
    "CellMatch",
    "CellStep",
    "ConfigLayerRow",
    "ConfigRow",
    "ConfigSet",
    "ConfigSetDone",
    "ConfigShow",
    "ConfigShown",
    "Count",
    "DiffCell",
    "DiffSide",
    "DocumentSaved",
    "DocumentSavedRequest",
    "Error",
    "FRONTEND",
    "FRONTEND_MODELS",
    "FRONTEND_TYPES",
    "FileRow",
    "FrameRow",
    "Frames",
    "FramesCallRewound",
    "FramesCalls",
    "FramesCallsListed",
    "FramesChanged",
    "FramesDiff",
    "FramesDiffed",
    "FramesFiles",
    "FramesFilesListed",
    "FramesList",
    "FramesPreview",
    "FramesPreviewPage",
    "FramesPreviewPaged",
    "FramesPreviewed",
    "FramesResume",
    "FramesResumed",
    "FramesRewind",
    "FramesRewindCall",
    "FramesRewound",
    "FramesRewoundNotice",
    "FramesUndo",
    "FramesUndoDone",
    "FramesUndone",
    "FrontendMessage",
    "Hello",
    "KERNEL",
    "KERNEL_MODELS",
    "KERNEL_TYPES",
    "KernelMessage",
    "McpServer",
    "ModelConnect",
    "ModelConnected",
    "ModelDefault",
    "ModelDefaulted",
    "ModelUse",
    "ModelUsed",
    "Models",
    "ModelsList",
    "NonEmpty",
    "NotebookAttach",
    "NotebookAttached",
    "NotebookCell",
    "NotebookReceived",
    "NotebookReply",
    "NotebookRequest",
    "NoticeRow",
    "NoticeSaid",
    "Notices",
    "NoticesList",
    "NoticesRead",
    "NoticesReadDone",
    "PathDetail",
    "PreviewCell",
    "PreviewFile",
    "PreviewGroup",
    "ProfileModel",
    "RequestId",
    "RestoreProgressMessage",
    "SCHEMA_VERSION",
    "Status",
    "StatusMessage",
    "StatusPhase",
    "StatusRequest",
    "TARGET",
    "VariableStep",
    "Version",
    "types_of",
]


KernelMessage = Annotated[
    Hello
    | Error
    | Approvals
    | ApprovalDecided
    | StatusMessage
    | Frames
    | FramesPreviewed
    | FramesPreviewPaged
    | FramesFilesListed
    | FramesDiffed
    | FramesRewound
    | DocumentSaved
    | FramesUndoDone
    | FramesResumed
    | FramesCallsListed
    | FramesCallRewound
    | Notices
    | NoticesReadDone
    | Models
    | ModelUsed
    | ModelDefaulted
    | ModelConnected
    | ConfigShown
    | ConfigSetDone
    | NoticeSaid
    | FramesUndone
    | FramesChanged
    | FramesRewoundNotice
    | RestoreProgressMessage
    | ApprovalRequested
    | ApprovalResolved
    | NotebookAttached
    | NotebookReceived
    | NotebookRequest,
    Field(discriminator="type"),
]
"""Everything the kernel sends: answers (with `re`) and announcements."""


KERNEL: TypeAdapter[KernelMessage] = TypeAdapter(KernelMessage, config=ConfigDict(defer_build=True))


def types_of(union: Any) -> tuple[str, ...]:
    """The `type` tags of a message union, in declaration order."""
    members = get_args(get_args(union)[0])
    return tuple(get_args(m.model_fields["type"].annotation)[0] for m in members)


def models_of(union: Any) -> dict[str, type[BaseModel]]:
    """Each `type` tag of a message union -> its model."""
    members = get_args(get_args(union)[0])
    return {get_args(m.model_fields["type"].annotation)[0]: m for m in members}


FRONTEND_TYPES = types_of(FrontendMessage)


KERNEL_TYPES = types_of(KernelMessage)


FRONTEND_MODELS = models_of(FrontendMessage)
"""What `FRONTEND` validates, by tag: a message is read by its own model."""


KERNEL_MODELS = models_of(KernelMessage)
"""What `KERNEL` validates, by tag: a message is sent through its own model."""
