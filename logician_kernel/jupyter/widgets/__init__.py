"""ipywidgets views of kernel projections: the approval card and the run status widget.

Thin views (STYLE.md rule 11): stock controls composed, callbacks out through `on_click`,
values in through one cheap `update`/`resolve` call; no state of their own beyond what they
show.
"""

from __future__ import annotations

from .approval import CHOICES, ApprovalCard, Choice, PreviewKind
from .rewind import (
    REWIND_MODES,
    FrameRow,
    RewindControl,
    RewindMode,
    RewindPreview,
    RewindSource,
)
from .status import StatusWidget

__all__ = [
    "CHOICES",
    "ApprovalCard",
    "Choice",
    "PreviewKind",
    "StatusWidget",
    "REWIND_MODES",
    "FrameRow",
    "RewindControl",
    "RewindMode",
    "RewindPreview",
    "RewindSource",
]
