"""The kernel's record of the cells, in a real IPython shell: top-level cells in the order they
ran, a nested cell (the python tool's) never among them nor able to drop the cell running it,
`%logician` lines left out, a failing cell's error kept as strings with its last frames, a
huge paste bounded, and variables summarised without values."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from logician_kernel.jupyter.notebook_context import MAX_KEPT_CHARS, NotebookContext

interactiveshell = pytest.importorskip("IPython.core.interactiveshell")


@pytest.fixture
def shell() -> Any:
    shell = interactiveshell.InteractiveShell.instance()
    try:
        yield shell
    finally:
        interactiveshell.InteractiveShell.clear_instance()


def _agent(root: Path) -> Any:
    model = SimpleNamespace(context_window=None, provider="replay", name="m", base_url=None)
    settings = SimpleNamespace(agent=SimpleNamespace(context_tokens=2_000), model=model)
    workspace = SimpleNamespace(checkpoints_if_on=None, root=root)
    return SimpleNamespace(workspace=workspace, settings=settings, secrets=lambda: ())


def test_the_record_follows_the_notebook_not_the_nested_cells(shell: Any, tmp_path: Path) -> None:
    context = NotebookContext(shell, _agent(tmp_path))
    try:
        shell.run_cell("xs = [1, 2, 3]", store_history=True)
        shell.run_cell("%logician status", store_history=True)  # a command: left out
        shell.run_cell(
            "get_ipython().run_cell('inner = 1', store_history=False)\nouter = 2",
            store_history=True,
        )
        shell.run_cell("def total(d):\n    return d['sales']\n\ntotal({})", store_history=True)
        shell.run_cell("big = 0\n" + "# pasted\n" * 10_000, store_history=True)
        sources = [c.source for c, _ in context.cells]
        assert sources[:3] == [
            "xs = [1, 2, 3]",
            "get_ipython().run_cell('inner = 1', store_history=False)\nouter = 2",
            "def total(d):\n    return d['sales']\n\ntotal({})",
        ]
        assert len(sources) == 4 and len(sources[3]) <= MAX_KEPT_CHARS + 3
        error = context.cells[2][1]
        assert error is not None and (error.ename, error.evalue) == ("KeyError", "'sales'")
        assert error.frames[-1].endswith("in total: return d['sales']")
        assert error.frames[0].startswith("In[") and "total({})" in error.frames[0]
        assert context.cells[3][0].outcome == "ok" and context.cells[2][0].outcome == "error"
        view = context.view()
        assert view.error is None  # the previous cell (the paste) raised nothing
        names = [v.name for v in view.variables]
        assert names.index("xs") < names.index("total")  # data first, functions after
        assert "inner" in names and "outer" in names
        assert next(v for v in view.variables if v.name == "xs").detail == "len 3"
        shell.run_cell("{}['sales']", store_history=True)
        block = context.block()
        assert "raised KeyError: 'sales'" in block.text and block.tokens <= 2_000
    finally:
        context.close()
    shell.run_cell("after = 1", store_history=True)
    assert all(c.source != "after = 1" for c, _ in context.cells)  # closed: no longer records
