"""`AgentSession.rewind` leaves changes made outside the process alone unless
`include_external=True` - in a script, with no Jupyter, against the loopback model server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernel_harness import clean_env, git
from loopback import LoopbackServer, text_reply, tool_reply

SCRIPT = r"""
import json, os, subprocess, sys, time
from logician_kernel import AgentSession

ws = sys.argv[1]

def outside_writer(name, text):
    # started before the frame opens: its write is nobody's in this process
    code = f"import time; time.sleep(0.5); open({os.path.join(ws, name)!r}, 'w').write({text!r})"
    return subprocess.Popen([sys.executable, "-c", code])

def wait_for(name, text):
    def approve(call):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if os.path.exists(os.path.join(ws, name)) and open(os.path.join(ws, name)).read() == text:
                break
            time.sleep(0.05)
        return True
    return approve

session = AgentSession.open(workspace=ws, thread="t")
writer = outside_writer("mine.txt", "v2 mine")
first = session.run("one", approve=wait_for("mine.txt", "v2 mine"), max_turns=3)
writer.wait()
item = session.rewind(first.frame)
kept = open(os.path.join(ws, "mine.txt")).read()
paths = {p.path: [p.action, p.detail] for p in item.paths}
writer = outside_writer("mine.txt", "v3 mine")
second = session.run("two", approve=wait_for("mine.txt", "v3 mine"), max_turns=3)
writer.wait()
session.rewind(second.frame, include_external=True)
print(json.dumps({"kept": kept, "paths": paths,
                  "after_include": open(os.path.join(ws, "mine.txt")).read(),
                  "tool_file": os.path.exists(os.path.join(ws, "tool.txt"))}))
session.close()
"""


def test_a_script_rewind_keeps_outside_writes_unless_asked(
    tmp_path: Path, server: LoopbackServer
) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "mine.txt").write_text("v1")
    server.script(
        tool_reply("w1", "write", {"path": "tool.txt", "content": "t\n"}),
        text_reply("Done."),
        tool_reply("w2", "write", {"path": "tool.txt", "content": "t\n"}),
        text_reply("Done again."),
    )
    env = clean_env(
        LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg"),
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        OPENAI_API_KEY="test-key-not-secret",
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ws)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["kept"] == "v2 mine"
    assert out["paths"]["mine.txt"][0] == "external"
    assert "--include-external" in out["paths"]["mine.txt"][1]
    assert out["paths"]["tool.txt"][0] == "deleted"
    # frame 2's pre-state of mine.txt is v2 (the kept save); include_external takes it back
    assert out["after_include"] == "v2 mine"
    assert out["tool_file"] is False
