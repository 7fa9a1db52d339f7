"""`AgentSession`, the Jupyter-free API, end to end in a fresh interpreter: tools, an approval
callback, a compaction and a rewind against the loopback model server, with no IPython,
ipykernel, ipywidgets or comm ever imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kernel_harness import clean_env, git
from loopback import LoopbackServer, text_reply, tool_reply

SCRIPT = r"""
import json, sys
from logician_kernel import AgentSession

asked = []

def approve(call):
    asked.append(call.tool)
    # allow the write and the sleep, deny the rm
    return call.tool == "write" or call.arguments.get("command", "").startswith("sleep")

session = AgentSession.open(workspace=sys.argv[1], thread="nightly-report")
first = session.run("Write the report and clean up.", approve=approve, max_turns=5)
report = open(sys.argv[1] + "/report.md").read()
second = session.run("Anything else?", approve=approve)
before, after, _ = session.compact("the report")
session.rewind(first.frame)
import os
after_rewind = os.path.exists(sys.argv[1] + "/report.md")
rewound_messages = len(session.workspace.ledger.messages())
session.undo_rewind()
from logician_kernel import AgentError
try:
    session.undo_rewind()
    twice = "no error"
except AgentError as exc:
    twice = str(exc)
out = {
    "after_undo": open(sys.argv[1] + "/report.md").read(),
    "messages_after_undo": len(session.workspace.ledger.messages()),
    "undo_twice": twice,
    "asked": asked,
    "frame": first.frame,
    "status": first.outcome.status,
    "text": first.text,
    "second": second.text,
    "report": report,
    "after_rewind": after_rewind,
    "data": open(sys.argv[1] + "/data.csv").read(),
    "compacted": [before, after],
    "messages": rewound_messages,
    "jupyter": sorted(m for m in ("IPython", "ipykernel", "ipywidgets", "comm") if m in sys.modules),
}
session.close()
print(json.dumps(out))
"""


def test_a_script_runs_approves_compacts_and_rewinds_without_jupyter(
    tmp_path: Path, server: LoopbackServer
) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "data.csv").write_text("a,b\n1,2\n")
    server.script(
        tool_reply("w1", "write", {"path": "report.md", "content": "# Report\n"}),
        tool_reply("b1", "bash", {"command": "rm data.csv"}),
        text_reply("Report written; I left data.csv alone."),
        tool_reply("b2", "bash", {"command": "sleep 30"}),  # tools.bash_timeout_seconds = 1
        text_reply("Nothing else."),
        text_reply("Earlier: a report was written."),  # the compaction's summary
    )
    env = clean_env(
        LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg"),
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        LOGICIAN_COMPACTION__KEEP_RECENT_TURNS="1",
        LOGICIAN_TOOLS__BASH_TIMEOUT_SECONDS="1",
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
    assert out["jupyter"] == []
    assert out["asked"] == ["write", "bash", "bash"]
    assert out["status"] == "completed" and out["text"].startswith("Report written")
    assert out["second"] == "Nothing else."
    assert out["report"] == "# Report\n"
    assert out["data"] == "a,b\n1,2\n"  # the denied bash call never ran
    assert out["compacted"][1] < out["compacted"][0]
    assert out["after_rewind"] is False  # the rewind took the file back...
    assert out["messages"] == 0  # ...and the conversation to before the first run
    assert out["after_undo"] == "# Report\n"  # undo_rewind() brought both back
    assert out["messages_after_undo"] > 0
    assert "already undone" in out["undo_twice"]
    told = json.dumps(server.requests[2].body["messages"])
    assert "Denied" in told  # the model heard about the denial
    assert "timed out after 1 s" in json.dumps(server.requests[4].body["messages"])
    ledger = ws / ".logician/threads/nightly-report.jsonl"
    resolved = [
        json.loads(line)
        for line in ledger.read_text().splitlines()
        if '"approval_resolution"' in line
    ]
    assert [(r["choice"], r["via"]) for r in resolved] == [
        ("allow_once", "callback"),
        ("deny", "callback"),
        ("allow_once", "callback"),
    ]
