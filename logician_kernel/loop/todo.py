"""The agent's own task list: the `todo` tool and the capability that keeps the list.

`TodoCapability` holds the tasks of one kernel session and supplies them as a read-only
`TaskLedger` snapshot (the status widget shows it). `TodoTool` is how the model changes them:
each call replaces the whole list, so a call repeated after a crash leaves the same list
(`pure` recovery). The list lives in memory; `restore` rebuilds it from the conversation
(the last committed `todo` call), so a kernel restart that resumes the thread resumes it too.
Never does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import ValidationError

from ..tools import Recovery, Tool, ToolContext, ToolError, ToolResult
from ..types.messages import AssistantMessage, Message, ToolResultMessage
from ..types.task_ledger import TASK_STATUSES, TaskItem, TaskLedger

MAX_TASKS = 50
"""Most tasks one list may hold."""

_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}


class TodoCapability:
    """The agent's task list, shared by the `todo` tool and whoever shows it."""

    source: ClassVar[str] = "todo"

    def __init__(self) -> None:
        self._items: tuple[TaskItem, ...] = ()
        self._revision = 0

    def snapshot(self) -> TaskLedger:
        """The current list, as an immutable snapshot."""
        return TaskLedger(source=self.source, items=self._items, revision=self._revision)

    def replace(self, items: Sequence[TaskItem]) -> TaskLedger:
        """Make `items` the list; returns the new snapshot."""
        self._items = tuple(items)
        self._revision += 1
        return self.snapshot()

    def tool(self) -> TodoTool:
        """A `todo` tool writing to this list."""
        return TodoTool(self)

    def restore(self, history: Sequence[Message]) -> TaskLedger:
        """Rebuild the list from a conversation: the last `todo` call whose result is a
        success. Calls that cannot be read are skipped."""
        succeeded = {
            m.tool_call_id for m in history if isinstance(m, ToolResultMessage) and not m.is_error
        }
        for message in reversed(history):
            if not isinstance(message, AssistantMessage):
                continue
            for call in reversed(message.tool_calls):
                if call.name != TodoTool.name or call.id not in succeeded:
                    continue
                try:
                    return self.replace(parse_tasks(call.arguments.get("tasks")))
                except ToolError:
                    continue
        return self.snapshot()


class TodoTool(Tool):
    """`todo`: replace the agent's task list and show it."""

    name: ClassVar[str] = "todo"
    description: ClassVar[str] = (
        "Keep a task list for multi-step work, shown to the user. Each call replaces the whole "
        "list: send every task with its status (pending, in_progress, completed, cancelled). "
        "Keep one task in_progress at a time, and update the list as you finish each step."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "tasks": {
                "type": "array",
                "description": "The whole task list, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "description": "What to do, briefly."},
                        "status": {"type": "string", "enum": list(TASK_STATUSES)},
                        "note": {"type": "string", "description": "Optional detail."},
                    },
                    "required": ["title", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["tasks"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "pure"
    read_only: ClassVar[bool] = True
    """It changes only the agent's own list, never the workspace: no permission needed."""

    def __init__(self, capability: TodoCapability) -> None:
        self.capability = capability

    def _describe(self, arguments: dict[str, Any]) -> str:
        tasks = arguments.get("tasks")
        return f"todo: {len(tasks)} tasks" if isinstance(tasks, list) else "todo"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        del ctx
        ledger = self.capability.replace(parse_tasks(args["tasks"]))
        return ToolResult(content=render(ledger), display=f"todo: {ledger.summary()}")


def parse_tasks(raw: Any) -> list[TaskItem]:
    """Validate the `tasks` argument; raise `ToolError` saying what is wrong."""
    if not isinstance(raw, list):
        raise ToolError("todo: `tasks` must be a list of {title, status} objects")
    if len(raw) > MAX_TASKS:
        raise ToolError(f"todo: at most {MAX_TASKS} tasks, got {len(raw)}")
    items = []
    for index, entry in enumerate(raw, 1):
        if not isinstance(entry, dict):
            raise ToolError(f"todo: task {index} must be an object with title and status")
        try:
            item = TaskItem.model_validate(entry)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "task"
            raise ToolError(
                f"todo: task {index}: {where}: {problem['msg']} "
                f"(status is one of {', '.join(TASK_STATUSES)})"
            ) from None
        if not item.title.strip():
            raise ToolError(f"todo: task {index} has an empty title")
        items.append(item)
    return items


def render(ledger: TaskLedger) -> str:
    """The list as the model sees it after a call: one line per task, then the summary."""
    if not ledger.items:
        return "The task list is empty."
    lines = [
        f"{_MARKS[item.status]} {item.title}" + (f" ({item.note})" if item.note else "")
        for item in ledger.items
    ]
    return "\n".join([*lines, ledger.summary()])
