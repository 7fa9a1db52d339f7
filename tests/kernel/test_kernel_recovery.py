"""Recovery keeps what is known, through a real kernel killed with SIGKILL at an exact point:
a `write` cut off mid-call is offered for `rewind --call`, and an approval the user never
answered is named on restart instead of vanishing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply
from test_kernel_approvals import Sidebar

from logician_kernel.durable.test_hooks import KILL_IN_CALL

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

ORIGINAL = "line one\nline two é\n\x00binary tail".encode()


def _ledger_kinds(workspace: Path) -> list[str]:
    path = workspace / ".logician/threads/test-thread.jsonl"
    if not path.exists():
        return []
    return [json.loads(line).get("kind", "") for line in path.read_text().splitlines() if line]


def _died_by_itself(k: Kernel, timeout: float = 60) -> None:
    """The kernel stopped itself (the test hook's SIGKILL): tidy the client side only."""
    code = k.km.provisioner.process.wait(timeout)  # type: ignore[union-attr]
    assert code == -9, f"the kernel was expected to die by SIGKILL, exited {code}"
    k.kc.stop_channels()
    k.km.cleanup_resources()


def test_kill_9_inside_a_write_call_offers_rewind_this_call_which_restores_the_pre_image(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    (workspace / "notes.txt").write_bytes(ORIGINAL)
    (workspace / "notes.txt").chmod(0o640)
    server.script(
        tool_reply("w1", "write", {"path": "notes.txt", "content": "the agent's text\n"}),
        text_reply("Rewritten."),
    )
    k = Kernel(workspace, {**agent_env, KILL_IN_CALL: "write"})
    try:
        k.send("%%logician\nRewrite notes.txt.")
        _died_by_itself(k)
        # The write happened; its result never reached the ledger.
        assert (workspace / "notes.txt").read_text() == "the agent's text\n"
        assert "tool_intent" in _ledger_kinds(workspace)
        assert "tool_result" not in _ledger_kinds(workspace)
        del k.env[KILL_IN_CALL]
        k.start_again()
        r = k.run("print('back')")
        assert "the write call of frame 1 was cut off" in r.stderr, r.stderr
        assert "`%logician rewind --call w1`" in r.stderr
        assert "quarantined" not in r.stderr  # restorable, not merely quarantined
        buttons = [
            m
            for m in r.messages
            if m["msg_type"] == "display_data"
            and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        ]
        assert buttons, "where widgets render, the notice comes with a 'Rewind this call' button"

        r = k.run("%logician rewind --call w1")
        assert r.status == "ok", r.text
        assert "restored notes.txt" in r.text
        assert (workspace / "notes.txt").read_bytes() == ORIGINAL
        assert (workspace / "notes.txt").stat().st_mode & 0o777 == 0o640

        again = k.run("%logician rewind --call w1")
        assert again.status == "error" and "already rewound" in again.text
        assert (workspace / "notes.txt").read_bytes() == ORIGINAL
        unknown = k.run("%logician rewind --call nope")
        assert (
            unknown.status == "error"
            and "no pre-image was recorded by a call 'nope'" in unknown.text
        )
    finally:
        k.shutdown()


def test_rewind_call_leaves_a_path_changed_since_the_restart_alone_unless_forced(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    (workspace / "notes.txt").write_bytes(ORIGINAL)
    server.script(tool_reply("w2", "write", {"path": "notes.txt", "content": "agent\n"}))
    k = Kernel(workspace, {**agent_env, KILL_IN_CALL: "write"})
    try:
        k.send("%%logician\nRewrite notes.txt.")
        _died_by_itself(k)
        del k.env[KILL_IN_CALL]
        k.start_again()
        k.run("print('back')")
        (workspace / "notes.txt").write_text("the user's own fix\n")
        r = k.run("%logician rewind --call w2")
        assert "conflict notes.txt" in r.text and "--force" in r.text
        assert (workspace / "notes.txt").read_text() == "the user's own fix\n"
    finally:
        k.shutdown()


def test_kill_9_while_an_approval_card_waits_is_named_on_restart(
    workspace: Path, model_env: dict[str, str], server: LoopbackServer
) -> None:
    env = model_env
    server.script(tool_reply("a1", "write", {"path": "approved.txt", "content": "yes\n"}))
    k = Kernel(workspace, env)
    try:
        k.send("%%logician\nWrite approved.txt.")
        deadline = time.monotonic() + 60
        while "approval_request" not in _ledger_kinds(workspace):
            assert time.monotonic() < deadline, "the approval was never recorded before asking"
            time.sleep(0.05)
        k.kill9()
        assert not (workspace / "approved.txt").exists()
        k.start_again()
        r = k.run("print('back')")
        assert "this call was waiting for your decision when the kernel stopped" in r.stderr
        assert "write in frame 1 (call a1)" in r.stderr and "approved.txt" in r.stderr
        assert not (workspace / "approved.txt").exists()  # it never ran, and is not re-run
        # The conversation stays well-formed: the next run tells the model the call never ran.
        server.script(text_reply("Understood."))
        r = k.run("%%logician\nWhat happened?")
        assert "Understood." in r.text, r.text
        sent = json.dumps(server.requests[-1].body["messages"])
        assert "did not run: the kernel stopped while it was waiting" in sent
        assert "this call was waiting" not in k.run("print('again')").stderr  # said once
    finally:
        k.shutdown()


def test_an_approval_given_up_by_an_interrupt_is_settled_not_reported_after_a_restart(
    workspace: Path, model_env: dict[str, str], server: LoopbackServer
) -> None:
    env = model_env
    server.script(tool_reply("i1", "write", {"path": "never.txt", "content": "no\n"}))
    k = Kernel(workspace, env)
    try:
        Sidebar(k).wait_for("hello")  # a card, answerable from the sidebar, waits
        msg_id = k.kc.execute("%%logician\nWrite never.txt.", allow_stdin=False)
        deadline = time.monotonic() + 60
        while "approval_request" not in _ledger_kinds(workspace):
            assert time.monotonic() < deadline, "the approval was never recorded before asking"
            time.sleep(0.05)
        k.km.interrupt_kernel()
        k.collect(msg_id)
        path = workspace / ".logician/threads/test-thread.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        (resolution,) = [r for r in records if r["kind"] == "approval_resolution"]
        assert resolution["via"] == "interrupted" and resolution["choice"] == "deny"
        k.restart()
        assert "waiting for your decision" not in k.run("print('back')").stderr
        assert not (workspace / "never.txt").exists()
    finally:
        k.shutdown()
