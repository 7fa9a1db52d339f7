"""`%logician rewind --call ID`, and the "Rewind this call" button of the restart notice.

A `write`/`edit` call that a dead kernel cut off, with its pre-image recorded (or a `bash` call
whose writes were recorded exactly as it ran), is offered for rewind in the first cell after
the restart (the notice names the command; where widgets render, a button does the same).
Both go through `AgentSession.rewind_call`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import display

from ..agent.errors import AgentError
from ..workspace import (
    CallRewound,
    ProjectionItem,
    RewindError,
    describe_call_rewind,
    found_at_this_start,
)
from . import display as render
from .safe_html import inert, tag

if TYPE_CHECKING:
    from ..agent import AgentSession
    from .rewind_source import LedgerRewindSource

_PUT_BACK = ("restored", "deleted", "recreated")


def handle(
    session: AgentSession, frames: LedgerRewindSource, opts: argparse.Namespace
) -> render.Rendered:
    """`%logician rewind --call ID [--force]`."""
    if opts.last or opts.cell is not None or opts.target is not None or opts.resume:
        raise UsageError(
            "%logician rewind --call ID: give the call id alone (with --force or --dry-run)"
        )
    if opts.dry_run:
        try:
            plan = frames.workspace.preview_call(opts.call, force=opts.force)
        except RewindError as exc:
            raise UsageError(str(exc)) from None
        return render.call_rewind_plan(opts.call, plan)
    try:
        item = session.rewind_call(opts.call, force=opts.force)
    except AgentError as exc:
        raise UsageError(str(exc)) from None
    announce(frames, item)
    return _rendered(item)


def announce(frames: LedgerRewindSource, item: CallRewound | ProjectionItem) -> None:
    """The sidebar re-reads the frames (the call's paths are back) and the status (an undo
    is possible now)."""
    checkpoints = frames.workspace.checkpoints_if_on
    total = len(checkpoints.frames()) if checkpoints is not None else 0
    frames.comms.notify("frames.changed", {"total": total})
    frames.comms.push_status(force=True)  # the Lab's Undo rewind is on now


def calls_message(frames: LedgerRewindSource, frame: int) -> dict[str, Any]:
    """`frames.calls`: the frame's tool calls, for the Lab's *Rewind this call* buttons."""
    rows = frames.workspace.calls(frame)
    return {"frame": frame, "calls": [r.as_message() for r in rows]}


def rewind_call_message(frames: LedgerRewindSource, call_id: str, force: bool) -> dict[str, Any]:
    """`frames.rewind_call`: the path `%logician rewind --call ID` takes (`Workspace.rewind_call`,
    a recorded, resumable, undoable plan), refused while a cell runs; says what it put back and
    what it left alone, and tells every frontend to read the frames again."""
    workspace = frames.workspace
    frame = workspace.frame_of_call(call_id)
    item = workspace.rewind_call(call_id, force=force, refuse_if_running=True)
    announce(frames, item)
    restored = [p.path for p in item.paths if p.action in _PUT_BACK]
    left = [
        {"path": p.path, "detail": p.detail or p.action}
        for p in item.paths
        if p.action not in _PUT_BACK
    ]
    headline = f"Rewound call {call_id}: {len(restored)} file(s) put back" + (
        f", {len(left)} left alone" if left else ""
    )
    return {
        "ok": True,
        "call_id": call_id,
        "frame": frame,
        "restored": restored,
        "left": left,
        "summary": _rendered(item).text,
        "headline": headline
        + ("" if isinstance(item, CallRewound) else "; `%logician undo` takes it back"),
    }


def _rendered(item: CallRewound | ProjectionItem) -> render.Rendered:
    if isinstance(item, CallRewound):
        return render.preformatted(describe_call_rewind(item))
    return render.call_rewind_result(item)


def offer(session: AgentSession, frames: LedgerRewindSource) -> None:
    """Below the restart notice: one "Rewind this call" button per call this restart found
    restorable (older ones stay listed by `AgentSession.restorable_calls`, not re-offered)."""
    try:
        calls = found_at_this_start(session.ledger)
    except AgentError:
        return
    if not calls:
        return
    import ipywidgets  # only with a call to offer: the frontend link imports this module

    for call in calls:
        paths = ", ".join(call.paths[:3]) + (
            f" and {len(call.paths) - 3} more" if len(call.paths) > 3 else ""
        )  # a bash call's may be thousands
        button = ipywidgets.Button(
            description="Rewind this call",
            tooltip=f"restore {paths} as before call {call.call_id}",
            button_style="warning",
        )
        out = ipywidgets.Output()

        def click(
            _: Any, call_id: str = call.call_id, button: Any = button, out: Any = out
        ) -> None:
            button.disabled = True
            try:
                item = session.rewind_call(call_id)
            except AgentError as exc:
                out.append_stdout(f"{exc}\n")
                button.disabled = False
                return
            announce(frames, item)
            out.append_stdout(_rendered(item).text + "\n")
            button.description = "Rewound"

        button.on_click(click)
        label = ipywidgets.HTML(
            inert(
                call.name,
                " call ",
                tag("code", call.call_id),
                f" of frame {call.frame}: {paths}",
                block="span",
            )
        )
        display(ipywidgets.VBox([ipywidgets.HBox([label, button]), out]))
