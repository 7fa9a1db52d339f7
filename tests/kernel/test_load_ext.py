"""`%load_ext logician_kernel` in a stock ipykernel (kernelspec `python3`, through
jupyter_client) and in the IPython terminal: magics, per-cell frames, an agent run against the
loopback model server, and `%unload_ext` leaving no hook behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply

# A stock kernel has no sidebar: there Logician's notices stay in the cells by default.
pytestmark = pytest.mark.kernel

HOOKS = (
    "ip = get_ipython()\n"
    "print(sorted((e, len(ip.events.callbacks[e])) for e in ('pre_run_cell', 'post_run_cell')),"
    " len(ip.input_transformers_cleanup), 'logician' in ip.magics_manager.magics['line'],"
    " 'logician' in ip.magics_manager.magics['cell'])"
)


@pytest.fixture
def env(kernel_env: dict[str, str], server: LoopbackServer) -> dict[str, str]:
    return {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "test-key-not-secret",
    }


def ledger(workspace: Path) -> list[dict]:
    text = (workspace / ".logician/threads/test-thread.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def kinds(workspace: Path) -> list[str]:
    return [e["kind"] for e in ledger(workspace)]


def test_load_ext_in_a_stock_ipykernel(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("w1", "write", {"path": "agent.txt", "content": "hi\n"}),
        text_reply("I was not allowed to write it."),
    )
    k = Kernel(workspace, env, kernel_name="python3")
    try:
        before = k.run(HOOKS).stdout
        assert "Logician" not in k.run("import sys; print(sys.argv)").stdout  # a stock kernel
        r = k.run("%load_ext logician_kernel")
        assert r.status == "ok", r.text
        assert "Logician loaded" in r.text and "Unlike the Logician kernel" in r.text
        assert "Logician loaded" not in r.stderr  # a display: the Lab shows stderr in pink
        k.run("open('a.txt', 'w').write('one')")
        k.run("open('a.txt', 'w').write('two')")
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (workspace / "a.txt").read_text() == "one"
        r = k.run("%logician rewnd 3")
        assert r.status == "error" and "did you mean rewind?" in r.text
        assert server.requests == []  # a typo is never a prompt
        r = k.run("%%logician\nWrite agent.txt with a greeting.")
        assert r.status == "ok", r.text
        assert "I was not allowed to write it." in r.text
        assert not (workspace / "agent.txt").exists()  # nobody could be asked: headless deny
        resolved = [e for e in ledger(workspace) if e["kind"] == "approval_resolution"]
        assert [(e["choice"], e["via"]) for e in resolved] == [("deny", "headless")]
        opened = kinds(workspace).count("frame_open")
        r = k.run("%unload_ext logician_kernel")
        assert r.status == "ok", r.text
        assert k.run(HOOKS).stdout == before
        k.run("open('b.txt', 'w').write('not a frame')")
        assert kinds(workspace).count("frame_open") == opened + 1  # the unload cell, no more
        assert kinds(workspace).count("frame_close") == opened + 1
        assert k.run("%logician frames").status == "error"  # the magic is gone
    finally:
        k.shutdown()


def test_load_ext_in_the_ipython_terminal(
    workspace: Path, env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("w1", "write", {"path": "agent.txt", "content": "hi\n"}),
        text_reply("Wrote agent.txt."),
    )
    lines = [
        "%load_ext logician_kernel",
        "open('t.txt', 'w').write('x')",
        "%logician rewind --last",
        "import os; print('t.txt exists:', os.path.exists('t.txt'))",
        "%logician ask Write agent.txt with a greeting.",
        "o",  # the approval, answered at the terminal's prompt
        "print('agent.txt:', open('agent.txt').read().strip())",
        "%unload_ext logician_kernel",
        "print('hooks left:', len(get_ipython().events.callbacks['pre_run_cell']))",
        "exit",
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--simple-prompt",
            "--quick",
            "--no-banner",
            "--colors=NoColor",
            "--HistoryManager.enabled=False",
        ],
        input="\n".join(lines) + "\n",
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "Logician loaded" in out and "asked at this terminal's prompt" in out
    assert "t.txt exists: False" in out
    assert "agent.txt: hi" in out
    assert "Wrote agent.txt." in out, out
    # the agent cell's Rewind this call, as a terminal shows it: the command that does it
    assert "↺ write call w1 changed agent.txt: `%logician rewind --call w1` puts it back" in out
    resolved = [e for e in ledger(workspace) if e["kind"] == "approval_resolution"]
    assert [(e["choice"], e["via"]) for e in resolved] == [("allow_once", "stdin")]
    assert "hooks left: 0" in out


def test_load_ext_in_vs_codes_stock_kernel_follows_its_notebook_name(
    workspace: Path, env: dict[str, str]
) -> None:
    from logician_kernel.workspace.threads import notebook_thread_id

    unnamed = {k: v for k, v in env.items() if k != "LOGICIAN_THREAD"}
    notebook = str(workspace / "report.ipynb")
    k = Kernel(workspace, unnamed, kernel_name="python3")
    try:
        k.run(f"__vsc_ipynb_file__ = {notebook!r}", silent=True)  # as VS Code does at start
        assert k.run("%load_ext logician_kernel").status == "ok"
        r = k.run("open('v.txt', 'w').write('v')")
        assert f"VS Code names this notebook {notebook}" in r.stderr
        thread = notebook_thread_id(notebook)
        assert thread in k.run("%logician thread").text
        assert "1 created" in k.run("%logician frames").text
        assert (workspace / ".logician" / "threads" / f"{thread}.jsonl").exists()
    finally:
        k.shutdown()
