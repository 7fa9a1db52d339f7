"""A run consumed by a script: `AgentSession.run`'s side of the run queue.

The kernel consumes a run's queue on its main thread and shows it; a script has no notebook,
so this module drains the queue itself, answers approvals through the script's `approve`
callback (or denies them, leaving `permissions.headless` to decide before anyone is asked),
and refuses `python` tool calls, which need a notebook namespace.

Must never: import IPython, ipykernel, ipywidgets or comm; print.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ..events.events import HarnessEvent
from ..policy import ApprovalRequest
from ..tools import ToolResult
from ..types.approvals import APPROVAL_CHOICES, ApprovalChoice
from ..types.run import RunOutcome
from .approvals import ApprovalBroker
from .errors import AgentError
from .policy import ApprovalItem
from .run import AgentRun, PythonRequest

if TYPE_CHECKING:
    from .session import AgentSession

Listener = Callable[[HarnessEvent], None]
"""Sees agent events as they happen (`run`'s, `compact`'s and `merge_branch`'s `on_event`)."""

Approve = Callable[[ApprovalRequest], "bool | ApprovalChoice"]
"""A script's approval callback: True allows once, False denies, or a choice by name."""


@dataclass(frozen=True)
class RunResult:
    """What `AgentSession.run` returns."""

    frame: int | None
    """The frame the run was recorded in (`rewind(frame)` undoes it); None when frames are
    off for this workspace."""
    outcome: RunOutcome
    """How the run ended: completed, budget_exhausted, cancelled, failed..."""
    text: str
    """The model's last answer."""


def consume(
    session: AgentSession,
    run: AgentRun,
    approve: Approve | None,
    on_event: Callable[[HarnessEvent], None] | None,
) -> None:
    """Drain `run`'s queue until it is done; a KeyboardInterrupt cancels the run."""
    while not run.done:
        try:
            item = run.requests.get()
            if isinstance(item, ApprovalItem):
                answer(session.broker, item, approve)
            elif isinstance(item, PythonRequest):
                if item.future.set_running_or_notify_cancel():
                    item.future.set_result(
                        ToolResult(
                            content="python: no notebook namespace in this session", is_error=True
                        )
                    )
            elif isinstance(item, BaseException):
                run.done = True
                if not isinstance(item, Exception) or run.interrupted:
                    continue
                raise AgentError(f"the run stopped unexpectedly: {item!r}")
            else:
                session.take(run, item)
                if on_event is not None:
                    on_event(item)
        except KeyboardInterrupt:
            run.cancel()


def answer(broker: ApprovalBroker, item: ApprovalItem, approve: Approve | None) -> None:
    """Resolve one approval from the callback; a callback that raises denies, saying why."""
    choice: str = "deny"
    note = ""
    if approve is not None:
        try:
            reply = approve(item.request)
        except Exception as exc:  # noqa: BLE001 - a broken callback denies, and says why
            reply, note = False, f"the approve callback raised {type(exc).__name__}: {exc}"
        if reply is True:
            choice = "allow_once"
        elif isinstance(reply, str) and reply in APPROVAL_CHOICES:
            choice = reply
    broker.resolve(item.pending.id, choice, note, via="callback")


class Compacted(NamedTuple):
    """What `AgentSession.compact` did."""

    before: int
    """Messages the model saw before."""
    after: int
    """Messages it sees now."""
    spent: str
    """What the summary cost, e.g. `the summary used 500 in / 40 out tokens`."""


class Merged(NamedTuple):
    """What `AgentSession.merge_branch` did."""

    summary: str
    """The summary of the branch now in the conversation."""
    spent: str
    """What the summary cost."""
