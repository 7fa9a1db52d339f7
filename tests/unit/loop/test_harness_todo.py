"""The agent's own task list: the `todo` tool through the harness, the capability's
read-only `TaskLedger` snapshot, and rebuilding it from the conversation."""

from __future__ import annotations

import asyncio

from logician_kernel.loop.todo import TodoCapability, TodoTool
from logician_kernel.types.task_ledger import TaskLedger, TaskLedgerSource

from .harness_support import (
    ScriptedProvider,
    call,
    make_ctx,
    make_harness,
    reply,
    run_all,
    tool_reply,
)

TASKS = [
    {"title": "Read the data", "status": "completed"},
    {"title": "Fit the model", "status": "in_progress"},
    {"title": "Plot residuals", "status": "pending", "note": "after the fit"},
]


def test_the_todo_tool_updates_the_snapshot_the_status_widget_reads():
    todo = TodoCapability()
    assert isinstance(todo, TaskLedgerSource) and todo.snapshot().summary() == "no tasks"
    provider = ScriptedProvider(
        tool_reply(call("c1", "todo", tasks=TASKS)), reply("Working on it.")
    )
    harness, store = make_harness(provider, todo.tool())

    events = run_all(harness)

    assert events[-1].outcome.status == "completed"
    ledger = todo.snapshot()
    assert isinstance(ledger, TaskLedger) and ledger.source == "todo" and ledger.revision == 1
    assert [i.status for i in ledger.items] == ["completed", "in_progress", "pending"]
    assert ledger.summary() == "1/3 done · now: Fit the model"
    finished = next(e for e in events if e.kind == "tool_finished")
    assert not finished.is_error and "[~] Fit the model" in store.messages[-2].content[0].text

    # A kernel restart resumes the thread, and the list with it.
    restored = TodoCapability()
    assert restored.restore(store.messages).items == ledger.items


def test_bad_task_lists_are_refused_with_a_reason():
    tool = TodoTool(TodoCapability())
    result = asyncio.run(tool.run({"tasks": [{"title": "x", "status": "done"}]}, make_ctx()))
    assert result.is_error and "status" in result.content and "in_progress" in result.content
    result = asyncio.run(tool.run({"tasks": "not a list"}, make_ctx()))
    assert result.is_error and tool.capability.snapshot().revision == 0
    assert TodoTool.read_only and TodoTool.recovery == "pure"
