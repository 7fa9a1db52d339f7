"""`%logician frames|diff|vars|storage|gc|rewind|undo` before anything else is loaded: the frame
commands need only the workspace, so a first `%logician rewind --last` is a rewind, not the
load of the agent, the providers, httpx, MCP, ipywidgets and the comm handler (~290 modules,
0.75 s on a quiet machine; `kernel_parts.py` loads those on first use).

The handlers are `frame_magics.FrameCommands`, the same code the loaded magics run. After a
rewind or an undo the frontends are told through the comm's frame source
(`LedgerRewindSource`) when one opened the comm (`frontend_link.py`, built without the agent);
with no comm there is no one to tell: the cell part of the agent's edits is recorded pending
and said, as the notebook bridge does with no frontend attached
(`cell_parts.after_unattached`), and sent when one attaches.

Must never: run a command the loaded magics would run otherwise (`KernelParts.run_light`
hands over a rewind's `--call` and `--skip-cells`), or print a traceback for a user's mistake.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import display

from ..workspace import ProjectionItem, RewindError, Workspace
from . import cell_parts
from .frame_magics import FrameCommands
from .magic_words import FRAME_COMMANDS

if TYPE_CHECKING:
    from .frontend_link import FrontendLink


class UnattachedFrames:
    """`LedgerRewindSource`'s side of a rewind or an undo when no frontend has the comm."""

    notebook = None
    """No notebook bridge: no frontend holds the notebook."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def announce(self, item: ProjectionItem, *, force: bool = False) -> None:
        cell_parts.after_unattached(self.workspace, item)

    def announce_undo(self, item: ProjectionItem, *, force: bool = False) -> None:
        cell_parts.after_unattached(self.workspace, item)


class FrameLight(FrameCommands):
    """The frame handlers over the workspace alone."""

    def __init__(self, workspace: Workspace, link: FrontendLink | None = None) -> None:
        self.workspace = workspace
        self.frames: Any = link.frames if link is not None else UnattachedFrames(workspace)
        """With a frontend's link (a sidebar opened the comm), its frame source tells the
        frontends, as the loaded magics' does."""

    def run(self, sub: str, args: list[str]) -> None:
        handler = getattr(self, f"handle_{sub}")
        try:
            result = handler(args)
        except RewindError as exc:
            raise UsageError(str(exc)) from None
        if result is not None:
            display(result.bundle(), raw=True)


_missing = sorted(c for c in FRAME_COMMANDS if not hasattr(FrameCommands, f"handle_{c}"))
if _missing:  # the kernel decides from the names which lines come here
    raise ImportError(f"magic_words.FRAME_COMMANDS names no frame handler: {_missing}")
