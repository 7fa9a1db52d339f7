"""The task ledger: an optional, read-only snapshot of task status.

A capability that tracks work in progress (the agent's own `todo` tool is one) may supply a
`TaskLedger`; the status widget shows it. It is a snapshot, never a handle: whoever reads it
cannot change the tasks, and the capability builds a new one after every change. Pure data,
no I/O.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from .field_docs import FIELD_DOCS

TaskStatus = Literal["pending", "in_progress", "completed", "cancelled"]
"""Where one task stands."""

TASK_STATUSES: tuple[TaskStatus, ...] = ("pending", "in_progress", "completed", "cancelled")
"""Every `TaskStatus`, in display order."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class TaskItem(BaseModel):
    """One task."""

    model_config = _FROZEN

    title: str
    """What the task is, in a short imperative sentence."""
    status: TaskStatus = "pending"
    """Where it stands."""
    note: str = ""
    """Optional detail: why it was cancelled, what is left, ..."""


class TaskLedger(BaseModel):
    """The tasks of one capability at one moment, in order."""

    model_config = _FROZEN

    source: str
    """Which capability supplied it, e.g. `todo`."""
    items: tuple[TaskItem, ...] = ()
    """The tasks, in the order the capability keeps them."""
    revision: int = 0
    """Bumped on every change, so a view can tell a new snapshot from the one it shows."""

    def count(self, status: TaskStatus) -> int:
        """How many tasks have `status`."""
        return sum(1 for item in self.items if item.status == status)

    @property
    def current(self) -> TaskItem | None:
        """The first task in progress, if any."""
        return next((item for item in self.items if item.status == "in_progress"), None)

    def summary(self) -> str:
        """`2/5 done · now: Write the tests`, or `no tasks`."""
        if not self.items:
            return "no tasks"
        done = self.count("completed")
        open_items = [item for item in self.items if item.status != "cancelled"]
        text = f"{done}/{len(open_items)} done"
        current = self.current
        return f"{text} · now: {current.title}" if current is not None else text


@runtime_checkable
class TaskLedgerSource(Protocol):
    """Anything that can supply a task ledger snapshot."""

    def snapshot(self) -> TaskLedger:
        """The current tasks; cheap, and never blocks on I/O (a UI calls it while rendering)."""
        ...
