"""ipywidgets views of kernel projections: the approval card and the run status widget.

Thin views (STYLE.md rule 11): stock controls composed, callbacks out through `on_click`,
values in through one cheap `update`/`resolve` call; no state of their own beyond what they
show. Each name loads from its module on first use (`_lazy`): the rewind dialog's rows need
not the run status widget, nor the agent's state it shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import exports

if TYPE_CHECKING:
    from .approval import CHOICES, ApprovalCard, Choice, PreviewKind
    from .rewind import REWIND_MODES, RewindControl, RewindMode, RewindSource
    from .rewind_rows import FrameRow, RewindPreview
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

__getattr__ = exports(__name__)
