"""The agent knows where it is: after a cell raises `KeyError: 'sales'`, a `%%logician` cell's
first model request carries the notebook's path, the prompting cell's place, the failing
cell's source and traceback and the DataFrame's columns (never its values or a secret);
`%logician context` shows it (capped for a small model's context window), `%logician status` says why the notebook tools are not offered,
and `%logician fix` asks the model to explain and fix the error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply
from test_kernel_agent import messages_sent, tool_reply

pytestmark = pytest.mark.kernel

LOAD = (
    "import pandas as pd\n"
    'df = pd.DataFrame({"region": ["north", "south"], "units": [12345, 67890]})\n'
    'api_token = "tok-9f8e7d6c5b4a39281706"\n'
)
FAIL = 'total = df["sales"].sum()'


def _saved_notebook(path: Path) -> None:
    cells = [
        {"id": "c-load", "cell_type": "code", "source": LOAD, "outputs": []},
        {"id": "c-fail", "cell_type": "code", "source": FAIL, "outputs": []},
        {"id": "c-ask", "cell_type": "code", "source": "%%logician\nfix it", "outputs": []},
    ]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))


def test_the_previous_error_and_a_dataframe_reach_the_first_request(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    notebook = workspace / "sales.ipynb"
    _saved_notebook(notebook)
    server.script(
        tool_reply("p1", "python", {"code": "print(list(df.columns))"}),
        text_reply("The column is `units`."),
        text_reply("Use `units`."),
    )
    k = Kernel(workspace, {**agent_env, "JPY_SESSION_NAME": str(notebook)})
    try:
        assert k.run(LOAD, cell_id="c-load").status == "ok"
        failed = k.run(FAIL, cell_id="c-fail")
        assert failed.status == "error" and "KeyError" in failed.text
        shown = k.run("%logician context").text
        assert "raised KeyError: 'sales'" in shown and "tokens (agent.context_tokens)" in shown

        asked = k.run("%%logician\nfix the error in the cell above", cell_id="c-ask")
        assert asked.status == "ok", asked.text
        assert "notebook context ~" in asked.text  # the usage line counts it

        prompt = messages_sent(server, 0)[-1]["content"]
        assert prompt.startswith("<notebook-context>\n")
        assert prompt.endswith("</notebook-context>\n\nfix the error in the cell above")
        assert "Notebook: sales.ipynb" in prompt
        assert "(id c-ask), cell 3 of 3 in the saved notebook." in prompt
        assert FAIL in prompt and "raised KeyError: 'sales'" in prompt
        assert 'in <module>: total = df["sales"].sum()' in prompt  # the traceback's frame
        variable = next(ln for ln in prompt.splitlines() if ln.startswith("- df ("))
        assert variable.startswith("- df (pandas.DataFrame): shape (2, 2), columns: region (")
        assert variable.endswith("units (int64)")
        assert "north" not in variable and "12345" not in variable  # never a value
        assert "tok-9f8e7d6c5b4a39281706" not in prompt  # the cell's secret is masked
        assert 'api_token = "****"' in prompt
        # `%logician context` showed what the prompt carried (the error and the variables)
        for line in shown.splitlines():
            if line.startswith(("- df (", "The previous cell,", "  In[")):
                assert line in prompt

        status = k.run("%logician status").text
        assert "notebook tools" in status and "not offered" in status
        assert "read from sales.ipynb as saved on disk, read-only" in status
        assert "last prompt (agent.context_tokens = 2,000)" in status

        fixed = k.run("%logician fix use the units column")
        assert fixed.status == "ok", fixed.text
        request = messages_sent(server, 2)[-1]["content"]
        assert "Explain and fix the error that In [2] (id c-fail) raised." in request
        assert request.endswith("use the units column")
        # the agent's cell (whose python call ran a nested cell) is a cell above it now, by
        # its place only: its prompt is the conversation's, which `clear` takes back
        context = request.split("</notebook-context>")[0]
        assert "(id c-ask): a %%logician cell (its prompt is in the conversation)" in context
        assert "fix the error in the cell above" not in context
        assert "print(list(df.columns))" not in context
        frames = k.run("%logician frames").text
        assert "%logician fix" in frames  # the fix ran in a frame of its own, rewindable

        k.restart()  # the kernel's own record is gone; the thread's frames still name the cells
        shown = k.run("%logician context").text
        assert "In [1] (id c-load):\n```\nimport pandas as pd  # first line only" in shown
        assert "(id c-ask): a %%logician cell" in shown and "fix the error" not in shown
        assert "raised KeyError" not in shown  # no error is claimed for the previous cell
        assert "- df (" not in shown  # the variables went with the kernel

        # a small model: the block is capped at an eighth of its context window, and said
        k.run("%logician config set model.context_window 4096")
        shown = k.run("%logician context").text
        assert "of 512 tokens (capped from agent.context_tokens = 2,000 to 1/8 of the " in shown
        assert "model's 4,096-token context window)" in shown
    finally:
        k.shutdown()
