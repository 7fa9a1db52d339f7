"""`%%logician` against the loopback server streaming the way real model servers do.

One kernel serves several cells, each answered in another server's style (tests/loopback.py
`profile_chunks`): the decoder differences must not show to the user, only the reasoning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, profile_reply, vllm_models

pytestmark = pytest.mark.kernel

THOUGHT = "The user wants both files; I will read them in parallel."


@pytest.fixture
def agent_env(kernel_env: dict[str, str], server: LoopbackServer) -> dict[str, str]:
    env = dict(kernel_env)
    env.update(
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        LOGICIAN_MODEL__API_KEY_ENV="",  # local servers take no key
        LOGICIAN_PERMISSIONS__MODE="full-auto",
    )
    return env


def tool_messages(server: LoopbackServer, index: int) -> list[dict]:
    return [m for m in server.requests[index].body["messages"] if m["role"] == "tool"]


def ledger_text(workspace: Path) -> str:
    return (workspace / ".logician/threads/test-thread.jsonl").read_text()


def test_profiles_parallel_reads_collapsed_thinking_and_invalid_arguments(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    (workspace / "a.txt").write_text("alpha contents\n")
    (workspace / "b.txt").write_text("bravo contents\n")
    reads = (("call_a", "read", {"path": "a.txt"}), ("call_b", "read", {"path": "b.txt"}))
    server.script(
        # Ollama: reasoning in `reasoning`, both calls at index 0, finish_reason "stop".
        profile_reply("ollama", reasoning=THOUGHT, calls=reads),
        profile_reply("ollama", text="a.txt says alpha, b.txt says bravo."),
    )
    k = Kernel(workspace, agent_env)
    try:
        r = k.run("%%logician\nWhat do a.txt and b.txt say?")
        assert r.status == "ok", r.text
        assert "a.txt says alpha, b.txt says bravo." in r.text
        sent = tool_messages(server, 1)
        assert [m["tool_call_id"] for m in sent] == ["call_a", "call_b"]
        assert "alpha contents" in sent[0]["content"] and "bravo contents" in sent[1]["content"]
        # Thinking is shown collapsed: a closed <details> for HTML, one summary line as text.
        shown = [
            m["content"]["data"]
            for m in r.messages
            if m["msg_type"] in ("display_data", "update_display_data")
            and "thinking" in m["content"]["data"].get("text/plain", "")
        ]
        assert shown, r.text
        assert shown[-1]["text/plain"].startswith("▸ thinking (")
        assert (
            "<details" in shown[-1]["text/html"] and "<details open" not in shown[-1]["text/html"]
        )
        assert "in parallel" in shown[-1]["text/html"]
        assert "in parallel" not in ledger_text(workspace)  # never stored, never sent back
        assert not any("in parallel" in json.dumps(m) for m in server.requests[1].body["messages"])

        # The same two reads, streamed by index (OpenAI, llama.cpp) or with cumulative usage
        # on every chunk (vLLM): each still runs once, with its own arguments.
        for n, profile in enumerate(("openai", "llamacpp", "vllm"), start=1):
            server.script(
                profile_reply(profile, calls=reads, reasoning="Both files." if n > 1 else ""),
                profile_reply(profile, text=f"Done {profile}."),
            )
            r = k.run(f"%%logician\nRead both again ({profile}).")
            assert r.status == "ok" and f"Done {profile}." in r.text, r.text
            sent = tool_messages(server, 2 * n + 1)[-2:]
            assert [m["tool_call_id"] for m in sent] == ["call_a", "call_b"]
            assert "alpha" in sent[0]["content"] and "bravo" in sent[1]["content"]

        server.script(
            # llama.cpp: arguments that are not JSON, then an answer once told so.
            profile_reply("llamacpp", calls=(("call_x", "read", '{"path": "a.txt"'),)),
            profile_reply("llamacpp", reasoning="Retrying is pointless.", text="Understood."),
            # A reasoning model without a reasoning parser, and no usage at all.
            profile_reply(
                "think-tags", reasoning="Short thought.", text="Plain answer.", usage=None
            ),
        )
        r = k.run("%%logician\nRead a.txt again.")
        assert r.status == "ok", r.text
        (error,) = tool_messages(server, len(server.requests) - 1)[-1:]
        assert error["tool_call_id"] == "call_x"
        assert "not valid JSON" in error["content"] and '{"path": "a.txt"' in error["content"]
        assert "✗ Error: the arguments for read were not valid JSON" in r.stdout
        assert "not valid JSON" in ledger_text(workspace)  # the refusal is on record

        r = k.run("%%logician\nAnswer plainly.")
        assert r.status == "ok", r.text
        assert "Plain answer." in r.text and "<think>" not in r.text
        assert "Short thought." not in ledger_text(workspace)
        status = k.run("%logician status").text
        assert "estimate" in status  # the server reported no usage
    finally:
        k.shutdown()


def test_the_context_window_from_v1_models_sets_when_compaction_happens(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    """vLLM advertises `max_model_len` on `/v1/models`; with no `model.context_window` set,
    compaction triggers at the configured fraction of that window, and the summary call is
    charged to the run."""
    server.route("GET", "/v1/models", vllm_models("loop-model", 4096))
    env = {
        **agent_env,
        "LOGICIAN_COMPACTION__THRESHOLD_FRACTION": "0.5",
        "LOGICIAN_COMPACTION__KEEP_RECENT_TURNS": "1",
    }
    long = "lorem ipsum dolor " * 250  # about 1,100 tokens by the estimate
    server.script(
        profile_reply("vllm", text="First answer. " + long, usage=(1200, 1150)),
        profile_reply("vllm", text="Earlier: a long lorem ipsum exchange.", usage=(500, 40)),
        profile_reply("vllm", text="Second answer.", usage=(300, 5)),
    )
    k = Kernel(workspace, env)
    try:
        r = k.run(f"%logician first {long}")
        assert r.status == "ok", r.text
        assert "context" in k.run("%logician status").text  # the window is known
        assert "of 4,096" in k.run("%logician status").text
        r = k.run("%logician ask second")
        assert r.status == "ok", r.text
        assert "Second answer." in r.text
        final = json.dumps(server.requests[-1].body["messages"])
        assert "[Summary of the earlier conversation]" in final and "First answer" not in final
        assert any(m.path == "/v1/models" for m in server.metadata_requests)
        status = k.run("%logician status").text
        assert "800 in / 45 out" in status  # the summary call counted against the run
    finally:
        k.shutdown()
