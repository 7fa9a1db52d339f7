"""Record a model server's raw SSE for the suite's prompts, as fixtures of the suite.

    python scripts/record_server_stream.py --base-url http://127.0.0.1:8080/v1 [--model NAME]

Writes `tests/fixtures/streams/<server>-<version>/`: for each case, `<case>.request.json` (the
body sent), `<case>.sse` (the response body, byte for byte) and `<case>.expected.json` (the
text, reasoning, tool calls, finish reason and usage read from the stream by the simple rules
below, which share no code with the kernel's decoder); `meta.json` says what was recorded,
when and from which server. tests/unit/providers/test_provider_recorded_streams.py replays
every recording through the decoder and through a loopback server.

The server is identified from `/props` (llama.cpp), `/api/version` (Ollama) or `/version`
(vLLM). Requests use temperature 0 and a fixed seed so a recording can be made again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
READ = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a text file of the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
}
PYTHON = {
    "type": "function",
    "function": {
        "name": "python",
        "description": "Run Python code and return what it printed.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}},
            "required": ["code"],
        },
    },
}
SYSTEM = "You are a coding agent. Use the tools to act; answer briefly."

CASES: dict[str, dict[str, Any]] = {
    "text": {
        "messages": [{"role": "user", "content": "Say hello in five words."}],
        "max_tokens": 40,
    },
    "one_call": {
        "messages": [{"role": "user", "content": "Read the file notes.txt."}],
        "tools": [READ],
        "tool_choice": "required",
        "max_tokens": 100,
    },
    "parallel_calls": {
        "messages": [{"role": "user", "content": "Read a.txt and b.txt, both at once."}],
        "tools": [READ],
        "tool_choice": "required",
        "parallel_tool_calls": True,
        "max_tokens": 160,
    },
    "cut_call": {
        "messages": [
            {
                "role": "user",
                "content": "Use the python tool to print every prime below 1000, one per line.",
            }
        ],
        "tools": [PYTHON],
        "tool_choice": "required",
        "max_tokens": 75,
    },
    "reasoning": {
        "messages": [{"role": "user", "content": "Think step by step: what is 17 * 23?"}],
        "max_tokens": 120,
    },
}
"""The prompts recorded: plain text, one call, parallel calls, a call cut at max_tokens,
and reasoning (a model without a reasoning format answers it as plain text)."""


def identify(client: httpx.Client, base_url: str) -> tuple[str, str, dict[str, Any]]:
    """(server, version, what it said about itself)."""
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    probes = (("llamacpp", "/props"), ("ollama", "/api/version"), ("vllm", "/version"))
    for server, path in probes:
        try:
            reply = client.get(root + path)
        except httpx.HTTPError:
            continue
        if reply.status_code != 200:
            continue
        try:
            info = reply.json()
        except ValueError:
            continue
        if server == "llamacpp" and "default_generation_settings" in info:
            build = str(info.get("build_info") or "unknown")
            version = build.split("-")[0] if build.startswith("b") else build
            return (
                server,
                version,
                {k: info.get(k) for k in ("build_info", "model_path", "chat_template_caps")},
            )
        if server != "llamacpp" and "version" in info:
            return server, str(info["version"]), info
    return "openai-compatible", "unknown", {}


def expected(raw: bytes) -> dict[str, Any]:
    """What the stream says, read plainly: `data:` lines, deltas concatenated, calls grouped
    by index, the last finish_reason and the last usage."""
    text, reasoning, finish, usage = "", "", None, None
    calls: dict[int, dict[str, str]] = {}
    for line in raw.decode("utf-8").splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or delta.get("reasoning") or ""
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    call.get("index", 0), {"id": "", "name": "", "arguments": ""}
                )
                slot["id"] = slot["id"] or call.get("id") or ""
                function = call.get("function") or {}
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return {
        "text": text,
        "reasoning": reasoning,
        "finish_reason": finish,
        "tool_calls": [calls[i] for i in sorted(calls)],
        "usage": None
        if usage is None
        else {
            "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="local", help="model name sent (default: local)")
    parser.add_argument("--api-key-env", default="", help="variable holding a key, if any")
    parser.add_argument("--out", type=Path, help="directory (default: by server and version)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument(
        "--extra-body",
        type=json.loads,
        default={},
        help="JSON merged into every request (recorded with it), e.g. a model's logit_bias",
    )
    parser.add_argument("--command", default="", help="how the server was started, for meta.json")
    args = parser.parse_args(argv)
    # A fresh connection per request: llama-server drops a connection that a streamed reply
    # came on when the next request arrives on it ("Server disconnected without sending a
    # response"), though it advertised keep-alive.
    headers = {"connection": "close"}
    if args.api_key_env:
        headers["authorization"] = f"Bearer {os.environ[args.api_key_env]}"
    with httpx.Client(timeout=args.timeout, headers=headers, trust_env=False) as client:
        server, version, about = identify(client, args.base_url)
        out = args.out or ROOT / "tests" / "fixtures" / "streams" / f"{server}-{version}"
        out.mkdir(parents=True, exist_ok=True)
        recorded = []
        for name in args.case or list(CASES):
            case = CASES[name]
            body = {
                "model": args.model,
                "stream": True,
                "stream_options": {"include_usage": True},
                "temperature": 0,
                "seed": 7,
                **args.extra_body,
                **case,
                "messages": [{"role": "system", "content": SYSTEM}, *case["messages"]],
            }
            with client.stream(
                "POST", args.base_url.rstrip("/") + "/chat/completions", json=body
            ) as reply:
                raw = b"".join(reply.iter_raw())
            if reply.status_code != 200:
                print(f"{name}: HTTP {reply.status_code}: {raw[:300]!r}", file=sys.stderr)
                return 1
            (out / f"{name}.request.json").write_text(json.dumps(body, indent=1) + "\n")
            (out / f"{name}.sse").write_bytes(raw)
            (out / f"{name}.expected.json").write_text(
                json.dumps(expected(raw), indent=1, ensure_ascii=False) + "\n"
            )
            recorded.append(name)
            print(f"{name}: {len(raw)} bytes", file=sys.stderr)
    meta = {
        "server": server,
        "version": version,
        "about": about,
        "model": args.model,
        "recorded": True,
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cases": recorded,
        "by": "scripts/record_server_stream.py",
        **({"server_command": args.command} if args.command else {}),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"recorded {len(recorded)} case(s) into {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
