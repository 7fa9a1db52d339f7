"""The `python` tool's limits in a real kernel: `tools.python_timeout_seconds`, the run's
wall-time budget and a kernel interrupt each stop `while True: pass` and `time.sleep(1000)`,
the model is told, and the kernel goes on."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, Reply, openai_chunks, sse, text_reply

pytestmark = pytest.mark.kernel

SPIN = "open('started.flag', 'w').close()\nwhile True:\n    pass"
SLEEP = "import time\nopen('started.flag', 'w').close()\ntime.sleep(1000)"


def python_call(call_id: str, code: str) -> Reply:
    args = json.dumps({"code": code})
    chunks = openai_chunks(tool=(call_id, "python", [args]), finish="tool_calls")
    return Reply(pieces=[sse(*chunks, done=True)])


def tool_messages(server: LoopbackServer) -> list[str]:
    return [
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in server.requests[-1].body["messages"]
        if m["role"] == "tool"
    ]


def test_timeout_wall_time_and_interrupt_stop_the_python_tool(
    workspace: Path, kernel_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        python_call("t1", SPIN),
        text_reply("The loop timed out."),
        python_call("t2", SLEEP),
        text_reply("The sleep timed out."),
        python_call("w1", SLEEP),  # the wall-time budget gives this one up
        python_call("i1", SPIN),
        python_call("i2", SLEEP),
        text_reply("Both were interrupted."),
    )
    env = {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "test-key-not-secret",
        "LOGICIAN_PERMISSIONS__MODE": "full-auto",
        "LOGICIAN_TOOLS__PYTHON_TIMEOUT_SECONDS": "1.5",
    }
    flag = workspace / "started.flag"
    k = Kernel(workspace, env)
    try:
        for reply in ("The loop timed out.", "The sleep timed out."):
            started = time.monotonic()
            r = k.run("%logician ask Run the code.")
            assert r.status == "ok", r.text
            assert reply in r.text and "timed out after 1.5 s" in r.text
            assert time.monotonic() - started < 30
            assert "TIMED OUT" in tool_messages(server)[-1]

        k.run("%logician config set tools.python_timeout_seconds 300")
        k.run("%logician config set budget.max_wall_seconds 2")
        r = k.run("%logician ask Run the code.")
        assert r.status == "ok", r.text
        assert "budget_exhausted" in r.text and "stopped" in r.text
        k.run("%logician config set budget.max_wall_seconds 600")

        for _ in ("spin", "sleep"):
            flag.unlink(missing_ok=True)
            msg_id = k.send("%logician ask Run the code.")
            deadline = time.monotonic() + 30
            while not flag.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert flag.exists()
            k.km.interrupt_kernel()
            r = k.collect(msg_id, timeout=30)
            assert r.reply["ename"] == "KeyboardInterrupt"

        assert k.run("print(40 + 2)").stdout.strip() == "42"  # the kernel is fine
        r = k.run("%logician ask What happened?")
        assert "Both were interrupted." in r.text
        told = tool_messages(server)
        assert sum("INTERRUPTED" in t for t in told) >= 2
        assert len(server.requests) == 8  # nothing ran on after a stop or an interrupt
    finally:
        k.shutdown()
