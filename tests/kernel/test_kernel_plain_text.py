"""What readers of `text/plain` see of an agent cell: consoles, nbconvert's text exports, logs.

Every display the kernel sends must read as text: the answer itself, the approval question with
its choices, a one-line status, the rewind control's frames; never `<... object>` or a widget's
constructor repr.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from queue import Empty
from typing import Any

import pytest
from kernel_harness import Kernel, clean_env
from loopback import LoopbackServer
from test_kernel_agent import text_reply, tool_reply

pytestmark = pytest.mark.kernel

OBJECT_REPR = re.compile(r"<[\w.]+ object(?: at 0x[0-9a-fA-F]+)?>")
"""Python's default repr, e.g. `<IPython.core.display.Markdown object>`."""

WIDGET_REPR = re.compile(r"\b[A-Z]\w*\((?:children|value|description|layout|options)=")
"""A widget's constructor repr, e.g. `StatusWidget(children=(HBox(...`."""

DISPLAYS = ("display_data", "update_display_data", "execute_result")
ANSWER = "The greeting is in hello.txt, eighteen bytes of it."


def unreadable(text: str) -> bool:
    return bool(OBJECT_REPR.search(text) or WIDGET_REPR.search(text))


def plain_texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(msg_type, text/plain) of every display; a display without text/plain fails here."""
    out = []
    for m in messages:
        if m["msg_type"] in DISPLAYS:
            data = m["content"]["data"]
            assert "text/plain" in data, f"{m['msg_type']} without text/plain: {list(data)}"
            out.append((m["msg_type"], data["text/plain"]))
    return out


@pytest.fixture
def env(kernel_env: dict[str, str], server: LoopbackServer) -> dict[str, str]:
    return {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "test-key-not-secret",
    }


def script_the_model(server: LoopbackServer) -> None:
    """A write that asks for approval, then an answer streamed in pieces slow enough that a
    Markdown output is re-rendered several times while it grows."""
    server.script(
        tool_reply("w1", "write", {"path": "hello.txt", "content": "Hello, plain text\n"}),
        text_reply(*[w + " " for w in ANSWER.split(" ")[:-1]], ANSWER.split(" ")[-1], delay=0.08),
    )


def run_clicking_allow_once(k: Kernel, code: str, timeout: float = 300) -> list[dict[str, Any]]:
    """Run `code` as JupyterLab would, clicking *Allow once* on the approval card; every iopub
    message of the cell, in order. The bound is for a cell that never ends: the first agent
    cell loads the agent and streams an answer, over a minute at a load average of 20."""
    msg_id = k.send(code)
    messages: list[dict[str, Any]] = []
    clicked = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            m = k.kc.get_iopub_msg(timeout=0.5)
        except Empty:
            continue
        if m["msg_type"] == "comm_open" and not clicked:
            state = m["content"]["data"].get("state", {})
            if (
                state.get("_model_name") == "ButtonModel"
                and state.get("description") == "Allow once"
            ):
                click = {
                    "comm_id": m["content"]["comm_id"],
                    "data": {"method": "custom", "content": {"event": "click"}},
                }
                k.kc.shell_channel.send(k.kc.session.msg("comm_msg", click))
                clicked = True
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            assert clicked, "no approval card was shown"
            return messages
        messages.append(m)
    raise AssertionError("the cell did not finish")


def test_every_display_of_an_agent_cell_reads_as_plain_text(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    script_the_model(server)
    k = Kernel(workspace, env)
    try:
        # JupyterLab's widget manager opens this comm on connect: status widget and card show.
        control = {"comm_id": "wm", "target_name": "jupyter.widget.control", "data": {}}
        k.kc.shell_channel.send(
            k.kc.session.msg("comm_open", control, metadata={"version": "1.0.0"})
        )
        messages = run_clicking_allow_once(k, "%%logician\nWrite hello.txt and say where it is.")
        assert (workspace / "hello.txt").read_text() == "Hello, plain text\n"
        texts = plain_texts(messages)
        assert [t for _, t in texts if unreadable(t)] == []
        answers = [t for kind, t in texts if t.startswith("The greeting")]
        assert answers[-1] == ANSWER  # the final update is the whole answer
        assert all(ANSWER.startswith(t) for t in answers)
        assert sum(kind == "update_display_data" for kind, _ in texts) >= 2  # it did stream
        status = [t for _, t in texts if t.startswith("Logician")]
        assert status and "\n" not in status[0]
        card = next(t for _, t in texts if t.startswith("Approve write?"))
        assert "hello.txt" in card and "Allow once · Allow for this session" in card
        stdout = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
        assert "▸ write hello.txt" in stdout and "✓" in stdout
        assert re.search(r"── completed.* · [\d,]+ in / [\d,]+ out tokens", stdout)

        # The magics' own displays, the rewind control among them.
        for code in (
            "%logician status",
            "%logician frames",
            "%logician diff --last",
            "%logician",
            "%logician help",
        ):
            shown = plain_texts(k.run(code).messages)
            assert shown, f"{code} displayed nothing"
            assert [t for _, t in shown if unreadable(t) or not t.strip()] == [], code
        rewind = plain_texts(k.run("%logician").messages)[0][1]
        assert rewind.startswith("Rewind: 1 frame(s)") and "%%logician · ok · 1 created" in rewind
    finally:
        k.shutdown()


@pytest.mark.timeout(600)  # a recorded agent run and two exports: minutes at load 20
def test_text_exports_of_an_executed_agent_notebook_read_as_text(tmp_path: Path) -> None:
    """`logician run` a recorded agent notebook, then nbconvert it to Markdown and to a script."""
    shipped = Path(__file__).parents[2] / "notebooks"
    shutil.copy(shipped / "02-agent.ipynb", tmp_path / "02-agent.ipynb")
    shutil.copytree(shipped / "recordings", tmp_path / "recordings")
    env = clean_env(LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg"))  # no real key, no thread
    bin_dir = Path(sys.executable).parent
    run = subprocess.run(
        [str(bin_dir / "logician"), "run", "02-agent.ipynb", "-o", "done.ipynb"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr

    def export(to: str) -> str:
        r = subprocess.run(
            [str(bin_dir / "jupyter"), "nbconvert", "--to", to, "--stdout", "done.ipynb"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout

    markdown = export("markdown")
    # The answer as the kernel rendered it (inert HTML, which Markdown viewers show): the kernel
    # no longer sends model text as text/markdown, whose raw HTML a trusting frontend would run.
    assert "computed a <strong>7-day rolling mean</strong> of <code>units</code>" in markdown
    assert 'class="lk-inert mathjax_ignore tex2jax_ignore lk-answer"' in markdown
    assert "▸ import csv" in markdown and "✓ python: import csv" in markdown  # the tool lines
    assert "── completed" in markdown
    # The status widget's line, sent again at the end of the run (nothing drew the widget).
    assert "Logician · replay · 22 in / 14 out tokens · completed: the model answered" in markdown
    assert not unreadable(markdown), [m for m in OBJECT_REPR.findall(markdown)]
    # nbconvert's script exporter keeps code only (no outputs, by design): it has the prompt
    # and nothing unreadable.
    script = export("script")
    assert "Load sales.csv, add a column" in script and not unreadable(script)
