"""The whole agent against a real model server, when one is running (optional).

    LOGICIAN_TEST_SERVER_URL=http://127.0.0.1:8080/v1 pytest tests/kernel/test_kernel_live_server.py

docs/providers.md says how to start llama-server with a small model. The server's tool
grammar is used to force one `write` call (`model.tool_choice = "write"`), so even a tiny
model calls the tool; the test asserts what does not depend on the model's words: the call
asks for approval, runs once allowed, lands in a frame with the file it wrote, the reply's
usage comes from the server, and a rewind takes the file away. Skipped without the variable.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from queue import Empty

import pytest
from kernel_harness import Kernel

pytestmark = pytest.mark.kernel

URL = os.environ.get("LOGICIAN_TEST_SERVER_URL", "")
EXTRA = os.environ.get("LOGICIAN_TEST_SERVER_EXTRA_BODY", "")
"""More `model.extra_body` fields, as TOML key = value pairs (a tiny model may need a
`logit_bias` to reach its template's call marker: docs/providers.md)."""


def _approval_or_end(k: Kernel, msg_id: str, timeout: float) -> tuple[dict | None, list[dict]]:
    """The approval request of the cell, or None (and its output) when the cell ended first."""
    deadline = time.monotonic() + timeout
    seen: list[dict] = []
    while time.monotonic() < deadline:
        try:
            return k.kc.get_stdin_msg(timeout=1), seen
        except Empty:
            pass
        while True:
            try:
                m = k.kc.get_iopub_msg(timeout=0.1)
            except Empty:
                break
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            seen.append(m)
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                return None, seen
    raise AssertionError(f"neither an approval nor the end of the cell in {timeout:g}s")


def _text(messages: list[dict]) -> str:
    return "".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")


@pytest.mark.timeout(1800)
@pytest.mark.skipif(
    not URL,
    reason="set LOGICIAN_TEST_SERVER_URL to a running model server "
    "(docs/providers.md: llama.cpp server) to run the live test",
)
def test_a_real_server_drives_a_tool_call_approval_frame_and_rewind(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    env = {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": os.environ.get("LOGICIAN_TEST_SERVER_MODEL", "local"),
        "LOGICIAN_MODEL__BASE_URL": URL,
        "LOGICIAN_MODEL__API_KEY_ENV": "",
        "LOGICIAN_MODEL__TOOL_CHOICE": '"write"',
        "LOGICIAN_MODEL__MAX_RESPONSE_TOKENS": "200",
        "LOGICIAN_MODEL__TEMPERATURE": "0",
        "LOGICIAN_MODEL__EXTRA_BODY": "{seed = 7, parallel_tool_calls = false"
        + (f", {EXTRA}" if EXTRA else "")
        + "}",
        "LOGICIAN_BUDGET__MAX_TURNS": "3",
    }
    before = {p.relative_to(workspace) for p in workspace.rglob("*") if ".git" not in p.parts}
    k = Kernel(workspace, env)
    try:
        started = time.monotonic()
        msg_id = k.send("%logician Write the word hello into the file hello.txt.")
        request, seen = _approval_or_end(k, msg_id, timeout=600)
        if request is None:
            pytest.fail(
                "the server answered without the forced `write` call (does it enforce "
                "tool_choice with this model and template?):\n" + _text(seen)
            )
        assert "write" in request["content"]["prompt"], request["content"]["prompt"]
        k.kc.input("o")
        r = k.collect(msg_id, timeout=600)
        elapsed = time.monotonic() - started
        print(f"\nlive run: {elapsed:.1f} s\n{r.text}")
        assert "Traceback" not in r.text and "Event loop is closed" not in r.text
        after = {
            p.relative_to(workspace)
            for p in workspace.rglob("*")
            if ".git" not in p.parts and ".logician" not in p.parts
        }
        created = after - before
        assert created, f"the write call created nothing:\n{r.text}"
        ledger = workspace / ".logician/threads/test-thread.jsonl"
        entries = [json.loads(line) for line in ledger.read_text().splitlines()]
        (end,) = [e for e in entries if e.get("kind") == "run_end"]
        print(f"run_end: {json.dumps(end)}")
        assert end["input_tokens"] > 0 and end["output_tokens"] > 0
        assert not end.get("usage_estimated")  # llama-server reports usage
        listing = k.run("%logician frames").text
        print(listing)
        assert "created" in listing
        started = time.monotonic()
        r = k.run("%logician rewind --last")
        print(f"rewind: {time.monotonic() - started:.2f} s")
        assert r.status == "ok", r.text
        assert not any((workspace / p).exists() for p in created)
        # The next prompt in the same kernel works (tool use not forced past the first request).
        r = k.run("%logician Say done.", timeout=600)
        assert r.status == "ok" or "budget" in r.text, r.text
        assert "Traceback" not in r.text
    finally:
        k.shutdown()
