"""`notebook_read` and `notebook_edit` against a notebook held as the extension holds it
(`tests/notebook_frontend.py`): what the model reads, bounds, and bad input."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from notebook_frontend import FakeNotebook

from logician_kernel.config import PermissionSettings
from logician_kernel.jupyter.cell_runs import CellRunQueue
from logician_kernel.policy import PermissionPolicy
from logician_kernel.tools import ToolContext, ToolResult, default_tools

TOOLS = default_tools()


class Access:
    """The kernel's `NotebookAccess`, without a comm in between."""

    def __init__(self, notebook: FakeNotebook) -> None:
        self.notebook = notebook
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.runs = CellRunQueue()
        self.runs.begin("agent")

    def queue_run(self, cell_id: str, source: str, cell_type: str, call_id: str | None) -> int:
        return self.runs.queue(cell_id, source, cell_type, call_id)

    async def ask(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((op, args))
        args = {"head_chars": 400, "output_chars": 20_000, **args}
        reply = self.notebook.answer({"request": "q", "op": op, "args": args})
        return {k: v for k, v in reply.items() if k not in ("type", "request")}


def notebook() -> FakeNotebook:
    return FakeNotebook(
        [
            {"id": "a", "cell_type": "markdown", "source": "# Title"},
            {
                "id": "b",
                "cell_type": "code",
                "source": "x = 1\ny = 2\nz = 3\nprint(x)",
                "execution_count": 4,
                "outputs": [
                    {"output_type": "stream", "text": "A" * 3_000_000 + "END"},
                    {"output_type": "display_data", "sizes": {"image/png": 52_000}},
                    {
                        "output_type": "error",
                        "ename": "KeyError",
                        "evalue": "'sales'",
                        "traceback": ["\x1b[0;31mKeyError\x1b[0m: 'sales'"],
                    },
                ],
            },
        ]
    )


def run(name: str, ctx: ToolContext, **arguments: Any) -> ToolResult:
    return asyncio.run(TOOLS[name].run(arguments, ctx))


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def ctx(tmp_path: Path, records: list[dict[str, Any]]) -> ToolContext:
    return ToolContext(
        workspace=tmp_path,
        capture=lambda path: None,
        notebook=Access(notebook()),
        record_cell_edit=records.append,
        call_id="c1",
    )


def test_the_outline_names_every_cell_by_index_id_type_and_first_lines(ctx: ToolContext) -> None:
    result = run("notebook_read", ctx)
    assert not result.is_error, result.content
    lines = result.content.splitlines()
    assert lines[0] == "nb.ipynb: 2 cells"
    assert "[1] id=b code In[4] outputs: stream, display_data, error" in lines
    assert "    x = 1" in lines and "    y = 2" in lines and "    … 2 more lines" in lines
    assert "z = 3" not in result.content


def test_one_cell_in_full_bounds_its_outputs(ctx: ToolContext) -> None:
    result = run("notebook_read", ctx, cell_id="b")
    assert not result.is_error, result.content
    text = result.content
    assert "print(x)" in text and "In[4]" in text
    assert len(text.encode()) < 20_000  # a 3 MB print is cut to its head and tail
    assert "END" in text and "AAAA" in text
    assert "[image/png output, 50.8 KiB]" in text
    assert "KeyError: 'sales'" in text and "\x1b" not in text


def test_an_edit_is_made_by_id_and_recorded_with_the_cell_before_and_after(
    ctx: ToolContext, records: list[dict[str, Any]]
) -> None:
    result = run("notebook_edit", ctx, mode="replace", cell_id="b", source="x = 10")
    assert not result.is_error, result.content
    assert result.display == "replaced code cell b at [1]"
    (record,) = records
    assert record["call_id"] == "c1" and record["mode"] == "replace"
    assert record["before"]["source"].startswith("x = 1\n")
    assert record["after"]["source"] == "x = 10" and record["notebook"] == "nb.ipynb"
    result = run("notebook_edit", ctx, mode="insert", after_id="a", source="## Part")
    assert "at index 1" in result.content and records[-1]["before"] is None


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"mode": "move", "cell_id": "a"}, "mode must be one of insert, replace, delete"),
        ({"mode": "replace", "source": "x"}, "replace needs the cell_id"),
        ({"mode": "replace", "cell_id": "a"}, "replace needs the cell's new source"),
        ({"mode": "insert", "source": "x", "index": 0, "after_id": "a"}, "not both"),
        ({"mode": "insert", "source": "x", "cell_id": "a"}, "not cell_id"),
        ({"mode": "insert"}, "insert needs the new cell's source"),
        ({"mode": "delete", "cell_id": "a", "source": "x"}, "delete takes only cell_id"),
        ({"mode": "delete", "cell_id": "zz"}, "no cell has the id 'zz'"),
        ({"mode": "insert", "source": "x", "cell_type": "sql"}, "cell_type must be one of"),
    ],
)
def test_bad_edits_are_tool_errors_and_change_nothing(
    ctx: ToolContext, records: list[dict[str, Any]], arguments: dict[str, Any], said: str
) -> None:
    assert ctx.notebook is not None
    before = ctx.notebook.notebook.shape()  # type: ignore[attr-defined]
    result = run("notebook_edit", ctx, **arguments)
    assert result.is_error and said in result.content, result.content
    assert ctx.notebook.notebook.shape() == before  # type: ignore[attr-defined]
    assert records == []


def test_without_a_frontend_the_tools_say_so(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, capture=lambda path: None)
    result = run("notebook_edit", ctx, mode="delete", cell_id="a")
    assert result.is_error and "no notebook frontend is connected" in result.content


def test_an_edit_the_frame_cannot_record_is_said(ctx: ToolContext) -> None:
    def fail(record: dict[str, Any]) -> None:
        raise OSError("disk full")

    ctx.record_cell_edit = fail
    result = run("notebook_edit", ctx, mode="delete", cell_id="a")
    assert result.is_error and "the edit was made but could not be recorded" in result.content
    assert "disk full" in result.content


@pytest.mark.parametrize(
    ("mode", "read", "edit"),
    [
        ("read-only", "allow", "deny"),
        ("ask", "allow", "ask"),
        ("auto-edit", "allow", "allow"),
        ("full-auto", "allow", "allow"),
    ],
)
def test_reading_is_allowed_in_every_mode_and_edits_follow_the_write_rule(
    tmp_path: Path, mode: str, read: str, edit: str
) -> None:
    policy = PermissionPolicy(PermissionSettings(mode=mode), workspace=tmp_path)
    reader, editor = TOOLS["notebook_read"], TOOLS["notebook_edit"]
    assert policy.decide(reader.name, reader.read_only, {}).action == read
    arguments = {"mode": "delete", "cell_id": "a"}
    assert policy.decide(editor.name, editor.read_only, arguments).action == edit
    assert policy.suggest_rule(editor.name, arguments) == "notebook_edit"


def test_run_queues_the_cell_it_wrote_and_tells_the_model_it_runs_after_the_reply(
    ctx: ToolContext,
) -> None:
    result = run("notebook_edit", ctx, mode="insert", after_id="b", source="print(6*7)", run=True)
    assert not result.is_error, result.content
    assert "queued to run as its own cell after your reply ends" in result.content
    assert result.display.endswith(", queued to run")
    (queued,) = ctx.notebook.runs.pending()  # type: ignore[union-attr]
    assert queued.expect == "print(6*7)" and queued.call_id == "c1"
    assert (
        TOOLS["notebook_edit"]
        .describe({"mode": "insert", "source": "x", "run": True})
        .endswith("and run it")
    )


def test_run_with_a_markdown_cell_or_a_delete_is_a_clear_error(
    ctx: ToolContext, records: list[dict[str, Any]]
) -> None:
    result = run("notebook_edit", ctx, mode="insert", cell_type="markdown", source="# x", run=True)
    assert result.is_error and "the edit was made, but the cell is not run" in result.content
    assert "markdown cell; only code cells run" in result.content and len(records) == 1
    result = run("notebook_edit", ctx, mode="delete", cell_id="b", run=True)
    assert result.is_error and "run goes with insert or replace" in result.content
    assert len(records) == 1 and not ctx.notebook.runs.pending()  # type: ignore[union-attr]
