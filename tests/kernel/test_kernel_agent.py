"""`%%logician` through a real kernel, against a scripted model server on loopback."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, Reply, openai_chunks, split_every, sse, text_reply

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def tool_reply(call_id: str, name: str, arguments: dict) -> Reply:
    args = json.dumps(arguments)
    fragments = [args[i : i + 7] for i in range(0, len(args), 7)]  # many small deltas
    chunks = openai_chunks(tool=(call_id, name, fragments), finish="tool_calls")
    return Reply(pieces=split_every(sse(*chunks, done=True), 13))  # SSE split mid-event


def messages_sent(server: LoopbackServer, index: int = -1) -> list[dict]:
    return server.requests[index].body["messages"]


def test_agent_edits_files_and_rewind_undoes_the_whole_cell(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("c1", "write", {"path": "notes/summary.md", "content": "# Summary\n"}),
        tool_reply("c2", "edit", {"path": "data.csv", "old_string": "1,2", "new_string": "1,20"}),
        tool_reply("c3", "bash", {"command": "rm script.sh && echo removed"}),
        text_reply("All ", "three ", "changes are done."),
    )
    before = {p: (workspace / p).read_bytes() for p in ("data.csv", "script.sh")}
    k = Kernel(workspace, agent_env)
    try:
        r = k.run("%%logician\nTidy the project: summarise, fix the data, drop the script.")
        assert r.status == "ok", r.text
        assert "All three changes are done." in r.text
        assert "completed" in r.stdout
        assert (workspace / "notes/summary.md").read_text() == "# Summary\n"
        assert (workspace / "data.csv").read_text() == "a,b\n1,20\n"
        assert not (workspace / "script.sh").exists()
        status = k.run("%logician status").text
        assert "completed" in status and "3 answered" in status and "idle" in status
        # The model saw each tool's result before its next turn.
        assert [m["role"] for m in messages_sent(server)][-2:] == ["assistant", "tool"]
        listing = k.run("%logician frames").text
        assert "1 created" in listing and "1 deleted" in listing and "1 modified" in listing
        assert "44/28" in listing  # the frame's tokens in/out, from the run's usage
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert {p: (workspace / p).read_bytes() for p in before} == before
        assert not (workspace / "notes/summary.md").exists()
    finally:
        k.shutdown()


def test_the_conversation_survives_a_restart_and_rewind_rewinds_it(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(text_reply("Hello Ada."), text_reply("You are Ada."), text_reply("Fresh."))
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%logician My name is Ada.").status == "ok"
        k.restart()
        r = k.run("%logician What is my name?")
        assert "You are Ada." in r.text
        sent = messages_sent(server)
        assert any("My name is Ada." in json.dumps(m) for m in sent)
        assert any("Hello Ada." in json.dumps(m) for m in sent)
        k.run("%logician clear")
        k.run("%logician Anyone there?")
        assert not any("Ada" in json.dumps(m) for m in messages_sent(server))
    finally:
        k.shutdown()


def test_the_python_tool_shares_the_notebook_namespace(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("p1", "python", {"code": "answer = base * 2\nprint('answer is', answer)"}),
        text_reply("Computed."),
    )
    k = Kernel(workspace, agent_env)
    try:
        k.run("base = 21")
        r = k.run("%%logician\nDouble {base} into a variable called answer.")
        assert r.status == "ok", r.text
        assert "answer is 42" in r.stdout  # the user sees the tool's output in the cell
        assert "42" in k.run("print(answer)").stdout
        assert "21" in json.dumps(messages_sent(server, 0))  # {base} was interpolated
        tool_result = [m for m in messages_sent(server) if m["role"] == "tool"][-1]
        assert "answer is 42" in json.dumps(tool_result)
    finally:
        k.shutdown()


def test_a_kernel_killed_between_intent_and_result_quarantines_the_call(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("b1", "bash", {"command": "touch started.flag && sleep 60"}),
        text_reply("Noted."),
    )
    # Not exact attribution: the call's writes were not recorded exactly, so it is only
    # quarantined (test_kernel_bash_recovery.py has the exact case, offered for rewind).
    k = Kernel(workspace, {**agent_env, "LOGICIAN_ATTRIBUTION": "sampling"})
    try:
        k.send("%%logician\nRun the long job.")
        flag = workspace / "started.flag"
        deadline = time.monotonic() + 120  # a bound against a hang; bash starts late under load
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists()
        k.kill9()
        flag.unlink()
        k.start_again()
        r = k.run("print('back')")
        assert "quarantined the bash call" in r.stderr and "touch started.flag" in r.stderr
        assert "not offered for rewind" in r.stderr, r.stderr
        ledger = (workspace / ".logician/threads/test-thread.jsonl").read_text()
        assert '"kind":"quarantine"' in ledger
        r = k.run("%logician What happened?")
        assert r.status == "ok", r.text
        told = json.dumps([m for m in messages_sent(server) if m["role"] == "tool"])
        assert "OUTCOME UNKNOWN" in told
        time.sleep(0.5)
        assert not flag.exists()  # never repeated
    finally:
        k.shutdown()


def test_interrupt_cancels_a_streaming_answer_promptly(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    # 2,000 words 0.05 s apart: the whole answer takes 100 s to stream
    words = [f"word{i} " for i in range(2000)]
    server.script(text_reply(*words, delay=0.05), text_reply("ok"))
    k = Kernel(workspace, agent_env)
    try:
        msg_id = k.send("%logician Write a very long essay.")
        k.wait_for_output("word3 ", timeout=120)  # streaming, however loaded the machine
        started = time.monotonic()
        k.km.interrupt_kernel()
        r = k.collect(msg_id, timeout=120)
        # stopped at the interrupt, not at the answer's end (a bound only against a hang)
        assert time.monotonic() - started < 60
        assert "word1999" not in r.text
        assert r.reply["status"] == "error" and r.reply["ename"] == "KeyboardInterrupt"
        assert "cancelled" in r.text
        assert "ok" in k.run("%logician ask again").text  # the kernel and the thread go on
    finally:
        k.shutdown()


def test_a_missing_api_key_names_the_variable(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    env = {k: v for k, v in agent_env.items() if k != "OPENAI_API_KEY"}
    k = Kernel(workspace, env)
    try:
        r = k.run("%logician ask hello")
        assert r.status == "error" and "OPENAI_API_KEY" in r.text
        assert server.requests == []
    finally:
        k.shutdown()


def test_interrupting_a_running_tool_answers_the_call_without_quarantine(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("b2", "bash", {"command": "touch busy.flag && sleep 60"}),
        text_reply("Understood."),
    )
    k = Kernel(workspace, agent_env)
    try:
        msg_id = k.send("%%logician\nRun the long job.")
        deadline = time.monotonic() + 120  # a bound against a hang; bash starts late under load
        while not (workspace / "busy.flag").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (workspace / "busy.flag").exists()
        k.km.interrupt_kernel()
        r = k.collect(msg_id, timeout=30)
        # The cell fails (Run All stops) and ends in one line, not a traceback through agent.py.
        assert r.reply["ename"] == "KeyboardInterrupt"
        assert r.reply["traceback"] == ["%%logician: interrupted"]
        assert "Traceback" not in r.text
        r = k.run("%logician ask Status?")
        assert r.status == "ok", r.text
        told = json.dumps([m for m in messages_sent(server) if m["role"] == "tool"])
        assert "INTERRUPTED" in told
        k.restart()
        assert "quarantined" not in k.run("print(1)").stderr
    finally:
        k.shutdown()


def test_rewind_can_take_files_or_conversation_alone_and_restart_records_restore(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("w1", "write", {"path": "a.txt", "content": "A"}),
        text_reply("Wrote a."),
        text_reply("Second."),
        text_reply("Third."),
    )
    k = Kernel(workspace, agent_env)
    try:
        k.run("%logician write a")
        k.run("%logician ask second")
        r = k.run("%logician rewind --last --conversation-only")
        assert "files and frames untouched" in r.text and (workspace / "a.txt").exists()
        k.run("%logician ask third")
        sent = json.dumps(messages_sent(server))
        assert "second" not in sent and "write a" in sent
        r = k.run("%logician rewind --cell 1 --files-only")
        assert "conversation kept" in r.text and not (workspace / "a.txt").exists()
        k.restart()
        ledger = (workspace / ".logician/threads/test-thread.jsonl").read_text()
        assert '"reason":"restore"' in ledger
    finally:
        k.shutdown()


def test_branches_from_rewinds_merge_and_discard_and_compaction_on_demand(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        text_reply("One."),
        text_reply("Two."),
        text_reply("The branch tried plan B and found it slow."),  # the branch summary
        text_reply("Three."),
        text_reply("Earlier: the user counted to three."),  # the compaction summary
        text_reply("Four."),
        Reply.error(500, {"error": {"message": "down"}}),  # a compaction that fails...
        Reply.error(500, {"error": {"message": "down"}}),
        Reply.error(500, {"error": {"message": "down"}}),
    )
    env = {**agent_env, "LOGICIAN_MODEL__MAX_RETRIES": "0"}
    k = Kernel(workspace, env)
    try:
        k.run("%logician count one")
        k.run("%logician count two, plan B")
        k.run("%logician rewind --last --conversation-only")
        listing = k.run("%logician branches").text
        branch_id = listing.splitlines()[1].split()[0]
        assert "open" in listing and branch_id.startswith("b")
        r = k.run(f"%logician branch merge {branch_id}")
        assert r.status == "ok", r.text
        assert "plan B and found it slow" in r.text
        assert "the summary used 11 in / 7 out tokens" in r.text  # its cost is not hidden
        assert "merged" in k.run("%logician branches").text
        assert k.run(f"%logician branch discard {branch_id}").status == "error"
        k.run("%logician count three")
        assert "[Summary of discarded branch" in json.dumps(messages_sent(server))
        k.run("%logician config set compaction.keep_recent_turns 1")
        r = k.run("%logician compact what we counted")
        assert r.status == "ok", r.text
        assert "the summary used 11 in / 7 out tokens" in r.text
        k.run("%logician count four")
        sent = messages_sent(server)
        assert "[Summary of the earlier conversation]" in json.dumps(sent)
        assert "count one" not in json.dumps(sent)
        before = (
            (workspace / ".logician/threads/test-thread.jsonl")
            .read_text()
            .count('"reason":"compaction"')
        )
        r = k.run("%logician compact")
        assert r.status == "error" and "unchanged" in r.text
        after = (
            (workspace / ".logician/threads/test-thread.jsonl")
            .read_text()
            .count('"reason":"compaction"')
        )
        assert after == before
    finally:
        k.shutdown()


def test_past_the_threshold_the_harness_compacts_before_the_request(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    env = {
        **agent_env,
        "LOGICIAN_MODEL__CONTEXT_WINDOW": "400",
        "LOGICIAN_COMPACTION__THRESHOLD_FRACTION": "0.5",
        "LOGICIAN_COMPACTION__KEEP_RECENT_TURNS": "1",
        # a 400-token window: the notebook context would move the threshold this test counts to
        "LOGICIAN_AGENT__CONTEXT_TOKENS": "0",
    }
    long = "lorem ipsum " * 40
    server.script(
        text_reply("First answer. " + long),
        text_reply("Second answer. " + long),
        text_reply("Earlier: two long answers about lorem ipsum."),  # the summary request
        text_reply("Third answer."),
    )
    k = Kernel(workspace, env)
    try:
        k.run(f"%logician first {long}")
        k.run("%logician ask second")
        r = k.run("%logician ask third")
        assert r.status == "ok", r.text
        assert "Third answer." in r.text
        final = json.dumps(messages_sent(server))
        assert "[Summary of the earlier conversation]" in final and "First answer" not in final
        ledger = (workspace / ".logician/threads/test-thread.jsonl").read_text()
        assert '"reason":"compaction"' in ledger
    finally:
        k.shutdown()
