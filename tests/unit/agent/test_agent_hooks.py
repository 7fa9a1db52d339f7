"""`[hooks]` through `AgentSession` in a fresh interpreter, against the loopback model server:
a `pre_tool` hook exiting 2 denies the call and the model is told its stderr; every hook
point gets its event as JSON (secrets masked); a hanging hook is killed at its timeout with
everything it started and the run goes on; a flood of hook output is bounded; failures are
reported and audited, denials as action-required records; a profile applies to one run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kernel_harness import clean_env, git
from loopback import LoopbackServer, text_reply, tool_reply
from processes import alive

KEY = "sk-test-hook-secret-123456"

GUARD = r"""
import json, sys
event = json.load(sys.stdin)
with open("hook-events.jsonl", "a") as log:
    log.write(json.dumps(event) + "\n")
if event["event"] == "pre_tool" and "rm " in event["arguments"].get("command", ""):
    print("deleting files is not allowed here; move them to trash/ instead", file=sys.stderr)
    sys.exit(2)
"""

SCRIPT = r"""
import json, sys
from logician_kernel import AgentSession
from logician_kernel.agent import AgentError

events = []
session = AgentSession.open(workspace=sys.argv[1], thread="hooked")
result = session.run(sys.argv[2], on_event=lambda e: events.append(e.model_dump(mode="json")),
                     profile=sys.argv[3] or None)
out = {"status": result.outcome.status, "text": result.text,
       "reported": [e for e in events if e["kind"] == "hook_reported"],
       "log": {f"{p}|{c}": r.status for (p, c), r in session.hook_log.last.items()}}
try:
    session.run("again", profile="nope")
except AgentError as exc:
    out["unknown"] = str(exc)
session.close()
print(json.dumps(out))
"""


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "data.csv").write_text("a,b\n1,2\n")
    (ws / "guard.py").write_text(GUARD)
    return ws


def _run(
    tmp_path: Path,
    server: LoopbackServer,
    ws: Path,
    user_config: str,
    prompt: str,
    profile: str = "",
) -> dict:
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "config.toml").write_text(user_config)
    env = clean_env(
        LOGICIAN_CONFIG_DIR=str(cfg),
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        LOGICIAN_PERMISSIONS__MODE="full-auto",
        OPENAI_API_KEY=KEY,
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ws), prompt, profile],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _audit(ws: Path) -> list[dict]:
    from logician_kernel.policy import AuditLog

    return [e.model_dump() for e in AuditLog.for_workspace(ws).recent(50)]


def test_a_pre_tool_deny_reaches_the_model_and_every_hook_point_gets_its_event(
    tmp_path: Path, server: LoopbackServer
) -> None:
    ws = _workspace(tmp_path)
    server.script(
        tool_reply("b1", "bash", {"command": "rm data.csv"}),
        tool_reply("b2", "bash", {"command": "echo kept"}),
        text_reply("I moved nothing; data.csv stays."),
    )
    hooks = (
        '[hooks]\npre_tool = ["python guard.py"]\npost_tool = ["python guard.py"]\n'
        'run_start = ["python guard.py"]\nrun_end = ["python guard.py"]\n'
    )
    out = _run(tmp_path, server, ws, hooks, f"Clean up. My key is {KEY}.")
    assert out["status"] == "completed"
    assert (ws / "data.csv").exists()  # the denied call never ran
    # The model's next request carries the hook's stderr as the call's result.
    tool_messages = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["tool_call_id"] == "b1"
    assert "a pre_tool hook denied the bash call, so it did not run" in tool_messages[-1]["content"]
    assert "move them to trash/ instead" in tool_messages[-1]["content"]
    # The allowed call ran, with its post_tool event.
    assert "kept" in json.dumps(server.requests[2].body["messages"][-1])
    events = [json.loads(line) for line in (ws / "hook-events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == [
        "run_start",
        "pre_tool",
        "pre_tool",
        "post_tool",
        "run_end",
    ]
    start, deny, allow, post, end = events
    assert start["prompt"].startswith("Clean up.") and start["model"] == "loop-model"
    assert start["thread"] == "hooked" and Path(start["workspace"]) == ws.resolve()
    assert (deny["tool"], deny["call_id"], deny["arguments"]) == (
        "bash",
        "b1",
        {"command": "rm data.csv"},
    )
    assert post["call_id"] == "b2" and "kept" in post["result"]["content"]
    assert post["result"]["is_error"] is False
    assert end["outcome"]["status"] == "completed" and end["tool_calls"] == 2
    assert KEY not in (ws / "hook-events.jsonl").read_text()  # secrets stay out
    # The cell (here: the event stream) and the audit log both say what the hook did.
    (reported,) = out["reported"]
    assert (reported["hook"], reported["status"], reported["call_id"]) == (
        "pre_tool",
        "denied",
        "b1",
    )
    assert out["log"]["pre_tool|python guard.py"] == "ok"  # its last run allowed b2
    denials = [e for e in _audit(ws) if e["resolution"] == "hook:deny"]
    (denial,) = denials
    assert denial["allowed"] is False and denial["routine"] is False  # action-required
    assert (denial["action"], denial["basis"], denial["call_id"]) == ("deny", "hook", "b1")
    assert denial["rule"] == "python guard.py" and denial["layer"] == "user"
    assert "trash/" in denial["note"]
    assert "unknown profile 'nope'" in out["unknown"]


def test_a_hanging_hook_times_out_failures_are_reported_and_output_is_bounded(
    tmp_path: Path, server: LoopbackServer
) -> None:
    ws = _workspace(tmp_path)
    server.script(
        tool_reply("b1", "bash", {"command": "echo ran > ran.txt"}),
        tool_reply("b2", "bash", {"command": "echo second"}),
        text_reply("Done."),
    )
    # Only the hanging hook may time out: the others are the shell's and coreutils' (a Python
    # start could take longer than the timeout on a loaded machine).
    flood = "head -c 2000000 /dev/zero | tr '\\0' x >&2; exit 2"
    hooks = (
        "[hooks]\ntimeout_seconds = 2\nmax_output_bytes = 4096\n"
        # the background child holds the pipes open: the whole group must be killed
        'pre_tool = ["sleep 67.25 & sleep 67.25", "exit 3", "no-such-program-xyz"]\n'
        f"post_tool = [{json.dumps(flood)}]\n"
        'run_end = ["ls /no/such/dir-xyz"]\n'
    )
    began = time.monotonic()
    out = _run(tmp_path, server, ws, hooks, "Write ran.txt.")
    assert time.monotonic() - began < 60
    assert out["status"] == "completed" and (ws / "ran.txt").read_text() == "ran\n"
    assert alive("67.25", ws) == []  # nothing the hanging hook started survived
    statuses = [(r["hook"], r["command"][:12], r["status"]) for r in out["reported"]]
    assert statuses[:4] == [
        ("pre_tool", "sleep 67.25 ", "timed_out"),
        ("pre_tool", "exit 3", "failed"),
        ("pre_tool", "no-such-prog", "failed"),
        ("post_tool", "head -c 2000", "failed"),
    ]
    assert statuses[-1] == ("run_end", "ls /no/such/", "failed")
    details = {r["command"]: r["detail"] for r in out["reported"]}
    assert "still running after 2 s" in details["sleep 67.25 & sleep 67.25"]
    assert "exit 127 (program not found)" in details["no-such-program-xyz"]
    assert "No such file or directory" in details["ls /no/such/dir-xyz"]
    # post_tool's exit 2 is not a deny (only pre_tool denies), and its flood stayed bounded.
    assert len(details[flood]) < 1000
    assert [
        m["tool_call_id"] for m in server.requests[2].body["messages"] if m["role"] == "tool"
    ] == ["b1", "b2"]
    failures = [e for e in _audit(ws) if e["resolution"] == "hook:failed"]
    assert len(failures) == len(out["reported"])
    assert all(not e["routine"] for e in failures)
    assert "timed_out" in failures[0]["note"]


def test_a_flooding_deny_reason_reaches_the_model_bounded(
    tmp_path: Path, server: LoopbackServer
) -> None:
    ws = _workspace(tmp_path)
    server.script(tool_reply("b1", "bash", {"command": "echo hi"}), text_reply("ok"))
    flood = "python -c \"import sys; sys.stderr.write('why ' * 500_000); sys.exit(2)\""
    hooks = f"[hooks]\nmax_output_bytes = 4096\npre_tool = [{json.dumps(flood)}]\n"
    out = _run(tmp_path, server, ws, hooks, "Say hi.")
    assert out["status"] == "completed"
    reason = server.requests[1].body["messages"][-1]["content"]
    assert "did not run" in reason and "output truncated" in reason
    assert len(reason.encode()) < 4096 + 300


@pytest.mark.parametrize("selected", ["cheap", ""])
def test_a_profile_applies_to_that_run_only(
    tmp_path: Path, server: LoopbackServer, selected: str
) -> None:
    ws = _workspace(tmp_path)
    server.script(text_reply("ok"))
    user = "[profiles.cheap]\nmodel = { temperature = 0.1 }\n"
    out = _run(tmp_path, server, ws, user, "Hello.", profile=selected)
    assert out["status"] == "completed"
    assert server.requests[0].body.get("temperature") == (0.1 if selected else None)
    assert "the known profiles are: cheap" in out["unknown"]
