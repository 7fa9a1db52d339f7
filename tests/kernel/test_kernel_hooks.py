"""`[hooks]` and `[profiles.NAME]` as a notebook user meets them, through a real kernel and the
loopback model server: a `pre_tool` deny (exit 2) reaches the model and shows in the cell,
`%logician hooks` lists commands, layers, trust and last results, an untrusted project's
hooks never run until allowed, and a profile applies for one cell or for the session."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply
from processes import alive

pytestmark = pytest.mark.kernel

GUARD = r"""
import json, sys
event = json.load(sys.stdin)
if "rm " in event["arguments"].get("command", ""):
    print("use trash/ rather than rm", file=sys.stderr)
    sys.exit(2)
"""


@pytest.fixture
def user_dir(agent_env: dict[str, str]) -> Path:
    path = Path(agent_env["LOGICIAN_CONFIG_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_a_pre_tool_deny_shows_in_the_cell_reaches_the_model_and_is_listed(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, user_dir: Path
) -> None:
    (workspace / "guard.py").write_text(GUARD)
    (user_dir / "config.toml").write_text(
        '[hooks]\npre_tool = ["python guard.py"]\nrun_end = ["echo done >> run-end.log"]\n'
    )
    server.script(tool_reply("c1", "bash", {"command": "rm data.csv"}), text_reply("Kept it."))
    k = Kernel(workspace, agent_env)
    try:
        r = k.run("%%logician\nDelete data.csv.")
        assert r.status == "ok", r.text
        assert "⚠ pre_tool hook `python guard.py` denied: use trash/ rather than rm" in r.stdout
        assert (workspace / "data.csv").exists()
        sent = server.requests[1].body["messages"][-1]
        assert sent["role"] == "tool" and "use trash/ rather than rm" in sent["content"]
        assert (workspace / "run-end.log").read_text() == "done\n"
        listing = k.run("%logician hooks").text
        assert (
            "pre_tool   python guard.py  [user]  last: denied (use trash/ rather than rm)"
            in listing
        )
        assert "run_end    echo done >> run-end.log  [user]  last: ok (exit 0)" in listing
        audit = k.run("%logician audit").text
        assert "denied" in audit and "hook:deny `python guard.py` [user]" in audit
    finally:
        k.shutdown()


def test_an_untrusted_projects_hooks_do_not_run_until_the_field_is_allowed(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    (workspace / ".logician").mkdir()
    (workspace / ".logician" / "config.toml").write_text(
        '[hooks]\nrun_start = ["touch started.txt"]\n'
    )
    server.script(text_reply("one"), text_reply("two"), text_reply("three"))
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%%logician\nHi.").status == "ok"
        assert not (workspace / "started.txt").exists()
        listing = k.run("%logician hooks").text
        assert "hooks.run_start touch started.txt  - the workspace is not trusted" in listing
        r = k.run("%logician trust")
        assert "hooks.run_start = ['touch started.txt'] held back" in r.text
        assert "logician trust --allow hooks.run_start" in r.text
        assert k.run("%%logician\nHi again.").status == "ok"
        assert not (workspace / "started.txt").exists()  # trusted, but the field is gated
        assert "not allowed yet" in k.run("%logician hooks").text
        r = k.run("%logician trust --allow hooks.run_start")
        assert "Allowed hooks.run_start" in r.text
        assert k.run("%%logician\nAnd now?").status == "ok"
        assert (workspace / "started.txt").exists()
        assert "run_start  touch started.txt  [project]  last: ok" in k.run("%logician hooks").text
    finally:
        k.shutdown()


def test_a_profile_for_one_cell_for_the_session_and_an_unknown_one(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, user_dir: Path
) -> None:
    (user_dir / "config.toml").write_text(
        '[profiles.cheap]\nmodel = { name = "cheap-model", temperature = 0.1 }\n'
        "[profiles.careful]\nbudget = { max_turns = 3 }\n"
    )
    server.script(*(text_reply(f"answer {n}") for n in range(3)))
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%%logician --profile cheap\nCheaply.").status == "ok"
        first = server.requests[0].body
        # the profile's temperature applies; LOGICIAN_MODEL__NAME (env) outranks its model name
        assert (first["model"], first.get("temperature")) == ("loop-model", 0.1)
        assert k.run("%%logician\nNormally.").status == "ok"
        assert "temperature" not in server.requests[1].body  # that cell only
        assert "none selected" in k.run("%logician config").text
        r = k.run("%%logician --profile cheep\nTypo.")
        assert r.status == "error"
        assert "unknown profile 'cheep'" in r.text and "careful, cheap" in r.text
        assert len(server.requests) == 2  # nothing was sent
        r = k.run("%logician config set profile cheap")
        assert r.status == "ok", r.text
        shown = k.run("%logician config").text
        row = next(line for line in shown.splitlines() if line.strip().startswith("profile "))
        assert f"cheap, defined in {user_dir / 'config.toml'}" in row
        assert "selected by session override" in row
        assert "model.temperature = 0.1" in shown
        assert k.run("%%logician\nFrom now on.").status == "ok"
        assert server.requests[2].body.get("temperature") == 0.1
        assert (
            json.loads(k.run("%logician config show --json").text.strip())["settings"][
                "model.temperature"
            ]["layer"]
            == "profile"
        )
    finally:
        k.shutdown()


def _wait_for(predicate, timeout: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_run_start_gets_its_event_and_a_hanging_hook_times_out_in_the_cell(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, user_dir: Path
) -> None:
    (user_dir / "config.toml").write_text(
        "[hooks]\ntimeout_seconds = 2\n"
        'run_start = ["cat > run-start.json"]\n'
        'pre_tool = ["sleep 61.75 & sleep 61.75"]\n'
    )
    server.script(
        tool_reply("c1", "bash", {"command": "echo went on > on.txt"}), text_reply("Done.")
    )
    k = Kernel(workspace, agent_env)
    try:
        r = k.run("%%logician\nGo on.")
        assert r.status == "ok", r.text
        assert (
            "⚠ pre_tool hook `sleep 61.75 & sleep 61.75` timed out: still running after 2 s"
            in r.stdout
        )
        assert (workspace / "on.txt").read_text() == "went on\n"  # the call still ran
        assert "completed" in r.stdout
        assert alive("61.75", workspace) == []
        event = json.loads((workspace / "run-start.json").read_text())
        assert event["event"] == "run_start" and event["prompt"] == "Go on."
        assert event["thread"] == "test-thread" and event["model"] == "loop-model"
        assert "timed_out" in k.run("%logician hooks").text
    finally:
        k.shutdown()


def test_an_interrupt_or_a_killed_kernel_ends_a_running_hook(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, user_dir: Path
) -> None:
    (user_dir / "config.toml").write_text(
        '[hooks]\npre_tool = ["touch hook.flag; sleep 62.5 & sleep 62.5"]\n'
    )
    server.script(
        tool_reply("c1", "bash", {"command": "echo no > no.txt"}),
        tool_reply("c2", "bash", {"command": "echo no > no.txt"}),
    )
    k = Kernel(workspace, agent_env)
    try:
        msg_id = k.send("%%logician\nTry it.")
        _wait_for(lambda: (workspace / "hook.flag").exists() and len(alive("62.5", workspace)) >= 2)
        k.km.interrupt_kernel()
        r = k.collect(msg_id, timeout=30)
        assert r.reply["ename"] == "KeyboardInterrupt"
        _wait_for(lambda: alive("62.5", workspace) == [], timeout=10)
        assert not (workspace / "no.txt").exists()  # the call never ran
        (workspace / "hook.flag").unlink()
        k.send("%%logician\nAgain.")
        _wait_for(lambda: (workspace / "hook.flag").exists() and len(alive("62.5", workspace)) >= 2)
        k.kill9()  # the guard process ends the hook's group with the kernel
        _wait_for(lambda: alive("62.5", workspace) == [], timeout=10)
        assert not (workspace / "no.txt").exists()
        k.start_again()
    finally:
        k.shutdown()
