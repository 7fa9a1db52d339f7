"""`logician run` serves the notebook tools from the notebook it runs: an agent's inserted
cells are in `-o`, not run, and the cells after the agent's run once each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from kernel_harness import clean_env
from loopback import LoopbackServer
from nbformat.v4 import new_code_cell, new_notebook
from test_kernel_agent import messages_sent, text_reply, tool_reply

pytestmark = pytest.mark.kernel
LOGICIAN = str(Path(sys.executable).parent / "logician")


def test_run_serves_the_notebook_tools_and_the_inserted_cells_are_in_the_output(
    tmp_path: Path, server: LoopbackServer
) -> None:
    server.script(
        tool_reply("r1", "notebook_read", {}),
        tool_reply("r2", "notebook_read", {"cell_id": "data"}),
        tool_reply(
            "e1",
            "notebook_edit",
            {"mode": "insert", "after_id": "agent", "cell_type": "markdown", "source": "## Plot"},
        ),
        tool_reply("e2", "notebook_edit", {"mode": "delete", "cell_id": "scratch"}),
        tool_reply("b1", "bash", {"command": "touch asked.txt"}),
        text_reply("Added a heading."),
    )
    nb = new_notebook(
        cells=[
            new_code_cell("print('rows:', 3)", id="data"),
            new_code_cell("scratch = 1", id="scratch"),
            new_code_cell("%%logician\nAdd a heading for the plot.", id="agent"),
            new_code_cell("print('after')", id="after"),
        ],
        metadata={
            "kernelspec": {"name": "logician", "display_name": "Logician", "language": "python"}
        },
    )
    path = tmp_path / "work.ipynb"
    nbformat.write(nb, path)
    env = clean_env(
        LOGICIAN_CONFIG_DIR=str(tmp_path / "user-config"),
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        LOGICIAN_MODEL__API_KEY_ENV="",
        LOGICIAN_PERMISSIONS__MODE="auto-edit",  # cell edits allowed; bash asks
    )
    out = tmp_path / "out.ipynb"
    r = subprocess.run(
        [LOGICIAN, "run", str(path), "-o", str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    tools = [json.dumps(m) for m in messages_sent(server) if m["role"] == "tool"]
    assert "work.ipynb: 4 cells" in tools[0] and "id=data code In[1]" in tools[0]
    assert "rows: 3" in tools[1]  # the outputs of the cells run so far
    executed = nbformat.read(out, as_version=4)
    shape = [(c.get("id"), c.cell_type, c.source) for c in executed.cells]
    assert [s[0] for s in shape if s[0] != shape[2][0]] == ["data", "agent", "after"]
    assert shape[2][1:] == ("markdown", "## Plot")  # inserted after the agent's cell
    after = executed.cells[3]
    # run once, after the agent (scratch ran before the agent deleted it: In [2])
    assert after.outputs[0]["text"] == "after\n" and after.execution_count == 4
    assert "Added a heading." in json.dumps(executed.cells[1].outputs)
    assert nbformat.read(path, as_version=4).cells[1].id == "scratch"  # the file is untouched
    # the run's own comm answers no approval: the bash call was decided headless, not waited on
    assert not (tmp_path / "asked.txt").exists()
    assert "headless" in tools[-1]


def test_a_cell_the_agent_inserts_and_runs_is_in_the_output_with_its_outputs(
    tmp_path: Path, server: LoopbackServer
) -> None:
    server.script(
        tool_reply(
            "e1",
            "notebook_edit",
            {"mode": "insert", "after_id": "agent", "source": "print(6*7)", "run": True},
        ),
        text_reply("Inserted a cell that prints the answer; it runs after this cell."),
    )
    nb = new_notebook(
        cells=[
            new_code_cell("%%logician\nAdd a cell that prints 6*7 and run it.", id="agent"),
            new_code_cell("print('after')", id="after"),
        ],
        metadata={
            "kernelspec": {"name": "logician", "display_name": "Logician", "language": "python"}
        },
    )
    path = tmp_path / "runs.ipynb"
    nbformat.write(nb, path)
    env = clean_env(
        LOGICIAN_CONFIG_DIR=str(tmp_path / "user-config"),
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        LOGICIAN_MODEL__API_KEY_ENV="",
        LOGICIAN_PERMISSIONS__MODE="full-auto",  # running a cell asks in auto-edit
    )
    out = tmp_path / "out.ipynb"
    r = subprocess.run(
        [LOGICIAN, "run", str(path), "-o", str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    tools = [json.dumps(m) for m in messages_sent(server) if m["role"] == "tool"]
    assert "queued to run as its own cell after your reply ends" in tools[0]
    executed = nbformat.read(out, as_version=4)
    agent, inserted, after = executed.cells
    assert (agent.id, after.id) == ("agent", "after")
    assert inserted.source == "print(6*7)" and inserted.outputs[0]["text"] == "42\n"
    # its own cell, run right after the agent's and before the next cell
    assert (agent.execution_count, inserted.execution_count, after.execution_count) == (1, 2, 3)
    # its own frame: the summary lists one frame per executed cell
    assert "3 code cell(s), 3 frame(s)" in r.stdout and "In [2] ok" in r.stdout, r.stdout
