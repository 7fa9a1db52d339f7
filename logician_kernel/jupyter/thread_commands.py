"""`%logician threads` and `%logician thread use ID | new NAME`: the workspace's timelines.

The listing and the switch are `AgentSession.threads` / `use_thread`; this module parses and
renders. After a switch the frontends follow: the magics' thread listener re-announces the
frames and the status (whose `thread` names the new one), so the sidebar re-reads them.
"""

from __future__ import annotations

from IPython.core.error import UsageError

from ..agent import AgentError, AgentSession
from ..workspace import render_threads
from . import display as render
from .safe_html import inert, tag

_USAGE = (
    "%logician thread: use `thread use ID` (an id from `%logician threads`) or `thread new NAME`"
)


def threads(session: AgentSession, args: list[str]) -> render.Rendered:
    """`%logician threads`: id, notebook, frames and last use of every thread."""
    if args:
        raise UsageError("%logician threads takes no arguments (`thread use ID` switches)")
    ws = session.workspace
    text = render_threads(session.threads(), ws.thread_id, ws.thread_note)
    return render.preformatted(text)


def thread(session: AgentSession, args: list[str]) -> render.Rendered:
    """`%logician thread use ID` / `thread new NAME`; `thread` alone names the current one."""
    if not args:
        text = f"This kernel's thread: {session.workspace.thread_id}"
        return render.Rendered(text, inert(tag("p", text)))
    if len(args) != 2 or args[0] not in ("use", "new"):
        raise UsageError(_USAGE)
    try:
        notices = session.use_thread(args[1], create=args[0] == "new")
    except AgentError as exc:
        raise UsageError(f"%logician thread {args[0]}: {exc}") from None
    runtime = session.workspace
    checkpoints = runtime.checkpoints_if_on
    frames = len(checkpoints.active_frames()) if checkpoints is not None else 0
    messages = len(runtime.ledger.messages()) if runtime.ledger is not None else 0
    lines = [
        f"Now on thread {runtime.thread_id!r}: {frames} frame(s) to rewind; the agent sees its "
        f"conversation ({messages} message(s)). Variables in the namespace stay as they are.",
        *notices,
    ]
    text = "\n".join(lines)
    return render.Rendered(text, inert(*(tag("div", line) for line in lines)))
