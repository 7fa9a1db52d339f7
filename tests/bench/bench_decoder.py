"""Decoder benchmark: the cost per streamed chunk of `ChatStreamDecoder` for plain text,
reasoning in `reasoning_content`, reasoning inline as `<think>` spans, and Ollama-style
parallel tool calls, at a short and a long reply.

    .venv/bin/python tests/bench/bench_decoder.py [--chunks N] [--repeat R]

Pure CPU, no sockets: the figure is the decoder's own cost. The target is a flat cost per
chunk: the long reply's ratio to the short one at most ~1.1 for every kind. Prints figures;
exit 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

from logician_kernel.providers import SSEEvent
from logician_kernel.providers._openai import ChatStreamDecoder


def _chunk(delta: dict) -> SSEEvent:
    return SSEEvent(
        data=json.dumps({"id": "c", "model": "m", "choices": [{"index": 0, "delta": delta}]})
    )


def plain(n: int) -> list[SSEEvent]:
    return [_chunk({"content": "word "}) for _ in range(n)]


def reasoning(n: int) -> list[SSEEvent]:
    half = n // 2
    return [_chunk({"reasoning_content": "hmm "}) for _ in range(half)] + plain(n - half)


def think_tags(n: int) -> list[SSEEvent]:
    half = n // 2
    body = [_chunk({"content": "<thi"}), _chunk({"content": "nk>"})]
    body += [_chunk({"content": "hmm "}) for _ in range(half)]
    body += [_chunk({"content": "</th"}), _chunk({"content": "ink>\n\n"})]
    return body + plain(n - half)


def ollama_calls(n: int) -> list[SSEEvent]:
    return [
        _chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": f"call_{i}",
                        "function": {
                            "name": "read",
                            "arguments": json.dumps({"path": f"f{i}.txt"}),
                        },
                    }
                ]
            }
        )
        for i in range(n // 20)  # a reply with many whole calls, each at index 0
    ]


KINDS: dict[str, Callable[[int], list[SSEEvent]]] = {
    "plain text": plain,
    "reasoning_content": reasoning,
    "<think> spans": think_tags,
    "Ollama parallel calls": ollama_calls,
}
END = [
    SSEEvent(data=json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
    SSEEvent(data="[DONE]"),
]


def per_chunk_us(chunks: list[SSEEvent], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        decoder = ChatStreamDecoder("m")
        started = time.process_time()  # CPU time: the shared machine's load does not count
        for sse in chunks:
            decoder.feed(sse)
        for sse in END:
            decoder.feed(sse)
        times.append((time.process_time() - started) / len(chunks))
        assert decoder.done
    return min(times) * 1e6  # the least disturbed run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    short = max(args.chunks // 100, 200)
    print(
        f"per-chunk decoder cost, {short:,} vs {args.chunks:,} chunks, best of {args.repeat} (CPU time)"
    )
    for name, build in KINDS.items():
        small = per_chunk_us(build(short), args.repeat)
        large = per_chunk_us(build(args.chunks), args.repeat)
        print(
            f"  {name:<22} {small:6.1f} µs  {large:6.1f} µs  ratio {large / small:4.2f}"
            "  (target ≤ ~1.1)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
