"""The notebook context block: it never exceeds its budget, keeps the most recent cells and
the error when it must cut, and lets nothing the masker hides through."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from logician_kernel.agent.context_budget import context_budget
from logician_kernel.agent.notebook_access import NotebookFile, notebook_tools_available
from logician_kernel.agent.notebook_context import (
    CellError,
    CellRecord,
    NotebookView,
    VariableSummary,
    estimate,
    fix_prompt,
    left_out_line,
    render_block,
    summarize,
)
from logician_kernel.providers._replay import request_fingerprint
from logician_kernel.types.messages import (
    NOTEBOOK_CONTEXT_CLOSE,
    NOTEBOOK_CONTEXT_OPEN,
    ModelRequest,
    TextPart,
    UserMessage,
    without_notebook_context,
)

ERROR = CellError(
    "KeyError",
    "'sales'",
    ("In[50], line 2, in <module>: total = df['sales'].sum()",),
    execution_count=50,
    cell_id="c-50",
    source="import pandas as pd\ntotal = df['sales'].sum()",
)


def _view(cells: int = 50, variables: int = 80, cell_chars: int = 900) -> NotebookView:
    return NotebookView(
        notebook="analysis/sales.ipynb",
        cell_id="c-51",
        position=(50, 52),
        execution_count=51,
        cells=[
            CellRecord(f"# cell {n}\n" + "x = 1\n" * (cell_chars // 6), n, f"c-{n}")
            for n in range(1, cells + 1)
        ],
        error=ERROR,
        variables=[VariableSummary(f"v{n}", "list", f"len {n}") for n in range(variables)],
    )


@pytest.mark.parametrize("budget", [100, 150, 300, 500, 1_000, 2_000, 8_000])
def test_the_block_never_exceeds_its_budget(budget: int) -> None:
    block = render_block(_view(), budget)
    assert block.text.startswith(NOTEBOOK_CONTEXT_OPEN)
    assert block.text.endswith(NOTEBOOK_CONTEXT_CLOSE)
    assert block.tokens == estimate(block.text) <= budget
    huge = render_block(_view(cells=3, cell_chars=200_000, variables=5_000), budget)
    assert huge.tokens <= budget


def test_under_the_minimum_no_block_is_sent() -> None:
    assert render_block(_view(), 0).text == ""
    assert render_block(_view(), 99).text == ""


def test_cutting_keeps_the_most_recent_cells_and_the_error() -> None:
    block = render_block(_view(), 2_000)
    text = block.text
    assert "In [50] (id c-50)" in text and "In [49]" in text  # the cells just above
    assert "In [1] (id c-1)" not in text  # the oldest went first
    assert "raised KeyError: 'sales'" in text
    assert "total = df['sales'].sum()" in text  # the failing line of the traceback
    assert "Notebook: analysis/sales.ipynb" in text
    assert "cell 51 of 52" in text and "(id c-51)" in text
    assert 0 < block.cells_shown < 50 and block.cells_left_out == 50 - block.cells_shown
    assert f"[{block.cells_left_out} older cell(s)" in text
    # in the order they ran
    assert text.index("In [49]") < text.index("In [50] (id c-50)")
    small = render_block(_view(), 300)  # room for the header and the error, little else
    assert "raised KeyError: 'sales'" in small.text
    assert "In [1] (id c-1)" not in small.text


def test_variables_get_a_share_while_cells_wait() -> None:
    block = render_block(_view(), 2_000)
    assert block.variables_shown > 5 and "- v79 (list): len 79" in block.text


SECRET = "hunter2-but-much-longer-9f8e7d"


def test_nothing_the_masker_hides_gets_through() -> None:
    view = NotebookView(
        cells=[
            CellRecord('API_KEY = "abcd1234efgh5678"\nclient = make(API_KEY)', 1),
            CellRecord("openai.api_key = 'sk-proj-abcdefghijklmnop1234'", 2),
            CellRecord(f"login('{SECRET}')", 3),
        ],
        error=CellError(
            "ValueError", f"bad token {SECRET}", (f"In[3], line 1: login('{SECRET}')",)
        ),
        variables=[
            summarize("db_password", "correct horse battery staple"),
            summarize("settings", {SECRET: 1, "region": "eu"}),
        ],
    )
    text = render_block(view, 2_000, secrets=(SECRET,)).text
    for hidden in ("abcd1234efgh5678", "sk-proj-abcdefghijklmnop1234", SECRET):
        assert hidden not in text
    assert "client = make(API_KEY)" in text  # the code around the secret stays readable
    assert "- db_password (str): a credential's name: nothing more shown" in text
    assert "'region'" in text
    prompt = fix_prompt(view.error, secrets=(SECRET,))  # type: ignore[arg-type]
    assert SECRET not in prompt


def test_a_dataframe_is_summarised_by_columns_and_dtypes_never_values() -> None:
    df = pd.DataFrame({"region": ["north", "south"], "units": [12345, 67890]})
    summary = summarize("df", df)
    assert summary.kind == "pandas.DataFrame"
    text = df.dtypes["region"]  # `object` before pandas 3, `str` since
    assert summary.detail == f"shape (2, 2), columns: region ({text}), units (int64)"
    for value in ("north", "12345"):
        assert value not in summary.detail
    assert summarize("xs", [1, 2, 3]).detail == "len 3"
    assert summarize("n", 42).detail == ""  # a scalar: its type only, never its value


def test_fix_asks_to_explain_and_fix_with_the_cell_and_traceback() -> None:
    prompt = fix_prompt(ERROR, note="keep the column names")
    assert prompt.startswith("Explain and fix the error that In [50] (id c-50) raised.")
    assert "total = df['sales'].sum()" in prompt
    assert "The cell, In [50] (id c-50), raised KeyError: 'sales'" in prompt
    assert prompt.endswith("keep the column names")


def test_notebook_tools_are_offered_only_with_a_notebook_client(tmp_path: Path) -> None:
    notebook = tmp_path / "sales.ipynb"
    assert notebook_tools_available(frontends=1, notebook=notebook) == (
        True,
        "offered: JupyterLab's Logician extension holds this notebook",
    )
    offered, why = notebook_tools_available(frontends=0, notebook=None)
    assert not offered and "no notebook path reached the kernel" in why
    offered, why = notebook_tools_available(frontends=0, notebook=notebook)
    assert not offered and "sales.ipynb is not saved on disk" in why
    notebook.write_text(
        json.dumps(
            {
                "cells": [
                    {"id": "a", "cell_type": "markdown", "source": ["# Sales"]},
                    {
                        "id": "b",
                        "cell_type": "code",
                        "source": "df['sales']",
                        "execution_count": 3,
                        "outputs": [
                            {"output_type": "stream", "name": "stdout", "text": ["x" * 50_000]},
                            {
                                "output_type": "display_data",
                                "data": {"image/png": "iVBOR" * 10_000, "text/plain": "<Figure>"},
                            },
                            {
                                "output_type": "error",
                                "ename": "KeyError",
                                "evalue": "'sales'",
                                "traceback": ["\x1b[31mKeyError\x1b[0m: 'sales'"],
                            },
                        ],
                    },
                ]
            }
        )
    )
    offered, why = notebook_tools_available(frontends=0, notebook=notebook)
    assert not offered and "read from sales.ipynb as saved on disk, read-only" in why
    assert notebook_tools_available(frontends=0, notebook=notebook, served=True)[0]
    saved = NotebookFile(notebook).read()
    assert [c.cell_id for c in saved.cells] == ["a", "b"]
    assert saved.cells[1].outputs == ("stream", "display_data", "error")
    assert saved.cells[0].source == "# Sales"
    assert saved.position("b") == (1, 2) and saved.position("zz") is None
    assert saved.outline().splitlines() == [
        "[0] id=a markdown: # Sales",
        "[1] id=b code In [3]: df['sales'] -> stream, display_data, error",
    ]
    full = saved.cell_text("b") or ""
    assert full.startswith("[1] id=b code, In [3] (as saved on disk)\ndf['sales']")
    assert len(full) < 5_000 and "characters left out" in full  # a 50 kB stream, bounded
    assert "<Figure>\n[image/png, 50,000 characters]" in full  # an image: one line
    assert "KeyError: 'sales'" in full and "\x1b" not in full
    assert saved.cell_text("zz") is None
    notebook.write_text("{not json")
    assert "is not a readable notebook" in (NotebookFile(notebook).read().problem or "")


def test_a_recording_replays_whatever_context_the_prompt_carried() -> None:
    def request(text: str) -> ModelRequest:
        return ModelRequest(messages=[UserMessage(content=[TextPart(text=text)])])

    block = render_block(_view(cells=2), 2_000).text
    assert without_notebook_context(block + "fix it") == "fix it"
    assert request_fingerprint(request(block + "fix it")) == request_fingerprint(request("fix it"))
    assert request_fingerprint(request("fix it")) != request_fingerprint(request("fix that"))


def test_a_run_checkpoint_keeps_the_objective_not_the_notebook_it_was_asked_in() -> None:
    from logician_kernel.compaction.run_checkpoint import build_run_checkpoint

    block = render_block(_view(cells=2), 2_000).text
    first = UserMessage(content=[TextPart(text=block + "add a rolling mean to df")])
    (handoff,) = build_run_checkpoint([first], task_state=None)
    text = handoff.content[0].text  # type: ignore[union-attr]
    assert "## Original objective\nadd a rolling mean to df" in text
    assert "notebook-context" not in text


def test_an_agent_cell_is_shown_by_its_place_never_its_prompt() -> None:
    view = NotebookView(
        cells=[
            CellRecord("df = load()", 1, "a"),
            CellRecord("", 2, "b", agent=True),
            CellRecord("df.plot()", 3, "c"),
        ]
    )
    text = render_block(view, 2_000).text
    assert "In [2] (id b): a %%logician cell (its prompt is in the conversation)" in text
    assert text.index("df = load()") < text.index("(id b)") < text.index("df.plot()")


@pytest.mark.parametrize(
    ("window", "budget", "capped"),
    [
        (None, 2_000, False),  # unknown window: agent.context_tokens
        (128_000, 2_000, False),  # 1/8 is 16,000: the setting is smaller
        (8_192, 1_024, True),
        (4_096, 512, True),
        (512, 64, True),  # under the minimum: no block at all
    ],
)
def test_a_small_context_window_caps_the_block_at_an_eighth_of_it(
    window: int | None, budget: int, capped: bool
) -> None:
    got, cap = context_budget(2_000, window)
    assert got == budget and (cap is not None) == capped
    block = render_block(_view(), got, cap=cap)
    assert block.tokens <= budget and block.cap == cap
    if capped:
        assert f"model's {window:,}-token context window" in str(cap)
        assert "agent.context_tokens = 2,000" in str(cap)
    if budget < 100:
        assert block.text == ""


def test_a_capped_block_drops_old_cells_first_then_variables_and_keeps_the_error() -> None:
    full = render_block(_view(cells=8, variables=20, cell_chars=200), 2_000)
    budget, cap = context_budget(2_000, 4_096)
    small = render_block(_view(cells=8, variables=20, cell_chars=200), budget, cap=cap)
    assert full.cells_left_out == 0 and full.variables_left_out == 0
    assert small.cells_left_out > 0 and "raised KeyError: 'sales'" in small.text
    assert "c-8" in small.text and "(id c-1)" not in small.text  # the newest cell stays
    assert small.variables_shown <= full.variables_shown
    assert "left out by the budget (the cap above)" in left_out_line(small)
