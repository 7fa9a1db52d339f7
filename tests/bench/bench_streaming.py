"""Streaming benchmark: kernel-side cost per token at a short vs a long conversation, and how
often the cell's output is re-rendered while tokens stream.

    .venv/bin/python tests/bench/bench_streaming.py [--tokens N] [--repeat R]
    .venv/bin/python tests/bench/bench_streaming.py --quick     # the gate scripts/test.sh runs

It runs the same path the kernel runs for `%%logician` (the harness on a worker thread's
event loop, events through a queue, the main thread folding the runtime state and feeding
the cell view that coalesces Markdown renders), with a scripted in-process model so the
figures are the kernel's own cost, not a network's. The full run prints figures with targets
and exits 0.

`--quick` is a flatness gate, a ratio measured in one run rather than an absolute time (so a
loaded machine slows both sides alike): the per-token cost of the stream itself (first to last
text delta, as the consumer sees them) with 10 and with 10,000 messages of history, the two
sizes interleaved round by round, the cheapest round of each kept. The cost is the process's
CPU time over that span (both threads), which a busy machine does not inflate as it does the
wall time. It exits 1 when the cost at
10,000 is more than `--max-ratio` (2) times the cost at 10.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from logician_kernel.events.runtime_state import RuntimeState, fold
from logician_kernel.jupyter.agent_run import RunView
from logician_kernel.loop import AgentHarness, HarnessDeps
from logician_kernel.tools import ToolContext, default_tools
from logician_kernel.types import (
    AssistantMessage,
    ModelResponse,
    TextDelta,
    TextPart,
    Usage,
    UserMessage,
)


class ScriptedModel:
    """Answers every request with `tokens` text deltas, optionally paced."""

    model = "scripted"

    def __init__(self, tokens: int, pace: float = 0.0) -> None:
        self.tokens, self.pace = tokens, pace

    async def stream(self, request):  # type: ignore[no-untyped-def]
        for i in range(self.tokens):
            if self.pace:
                await asyncio.sleep(self.pace)
            yield TextDelta(text=f"tok{i} ")
        text = "".join(f"tok{i} " for i in range(self.tokens))
        yield ModelResponse(
            message=AssistantMessage(content=[TextPart(text=text)]),
            usage=Usage(input_tokens=len(request.messages), output_tokens=self.tokens),
            stop_reason="end_turn",
        )

    async def aclose(self) -> None:
        return None


class NullStore:
    def append_message(self, message) -> None: ...  # type: ignore[no-untyped-def]
    def record_intent(self, call, recovery) -> None: ...  # type: ignore[no-untyped-def]
    def record_result(self, call_id, result) -> None: ...  # type: ignore[no-untyped-def]
    def record_commit(self, call_id) -> None: ...  # type: ignore[no-untyped-def]


def history(n: int) -> list:
    out = []
    for i in range(n // 2):
        out.append(UserMessage(content=[TextPart(text=f"question {i} " * 8)]))
        out.append(AssistantMessage(content=[TextPart(text=f"answer {i} " * 20)]))
    return out


def run_once(
    workspace: Path, messages: list, model: ScriptedModel
) -> tuple[float, int, float, float]:
    """Seconds for the whole run, renders, seconds spent streaming (first to last delta), and
    the process's CPU seconds in that span (what other processes' load does not inflate)."""
    ctx = ToolContext(workspace=workspace, capture=lambda path: None)
    harness = AgentHarness(HarnessDeps(model, default_tools(), ctx, NullStore()))
    events: queue.Queue = queue.Queue()
    loop = asyncio.new_event_loop()

    async def drive() -> None:
        async for event in harness.run("go", messages):
            events.put(event)

    thread = threading.Thread(target=lambda: loop.run_until_complete(drive()))
    view = RunView(hz=30, show=lambda text, handle: handle or object())
    state = RuntimeState()
    started = time.perf_counter()
    thread.start()
    first = last = None
    cpu_first = cpu_last = 0.0
    while True:
        try:
            event = events.get(timeout=view.wait())
        except queue.Empty:
            view.flush()
            continue
        state = fold(state, event)
        if event.kind == "model_streamed" and event.event.kind == "text_delta":
            now, cpu = time.perf_counter(), time.process_time()
            if first is None:
                first, cpu_first = now, cpu
            last, cpu_last = now, cpu
            view.handle(event)  # the kernel's own per-delta path
        elif event.kind == "run_ended":
            view.flush(force=True)
            break
    thread.join()
    loop.close()
    streaming = (last or 0) - (first or 0)
    return time.perf_counter() - started, view.renders, streaming, cpu_last - cpu_first


def per_token_us(workspace: Path, n_messages: int, tokens: int, repeat: int) -> float:
    messages = history(n_messages)
    with_tokens = statistics.median(
        run_once(workspace, messages, ScriptedModel(tokens))[0] for _ in range(repeat)
    )
    without = statistics.median(
        run_once(workspace, messages, ScriptedModel(0))[0] for _ in range(repeat)
    )
    return (with_tokens - without) / tokens * 1e6


def quick(workspace: Path, tokens: int, rounds: int, max_ratio: float) -> int:
    """The flatness gate: per-token streaming cost at 10,000 vs 10 messages of history."""
    sizes = (10, 10_000)
    histories = {n: history(n) for n in sizes}
    best = {n: float("inf") for n in sizes}
    run_once(workspace, histories[10], ScriptedModel(tokens))  # warm-up: imports, caches
    for round_ in range(rounds):
        # Alternate which size goes first, so a burst of load does not always hit the same one.
        for n in sizes if round_ % 2 == 0 else sizes[::-1]:
            cpu = run_once(workspace, histories[n], ScriptedModel(tokens))[3]
            best[n] = min(best[n], cpu / tokens)
    ratio = best[10_000] / best[10]
    verdict = "PASS" if ratio <= max_ratio else "FAIL"
    print(
        f"streaming flatness: {best[10] * 1e6:.1f} us/token at 10 messages, "
        f"{best[10_000] * 1e6:.1f} us/token at 10,000; ratio {ratio:.2f} "
        f"(limit {max_ratio:g}; {tokens} tokens, CPU time, cheapest of {rounds} rounds) {verdict}"
    )
    return 0 if ratio <= max_ratio else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the flatness gate only")
    parser.add_argument("--max-ratio", type=float, default=2.0, help="the gate's limit")
    args = parser.parse_args(argv)
    if args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            return quick(Path(tmp), tokens=5_000, rounds=7, max_ratio=args.max_ratio)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        short = per_token_us(ws, 10, args.tokens, args.repeat)
        long = per_token_us(ws, 10_000, args.tokens, args.repeat)
        duration, renders, streaming, _ = run_once(
            ws, history(10), ScriptedModel(3000, pace=0.0005)
        )
    rate = renders / streaming if streaming else float("inf")
    ratio = long / short
    rows = [
        ("per-token cost, 10-message conversation", f"{short:.1f} us", "-", "-"),
        ("per-token cost, 10,000-message conversation", f"{long:.1f} us", "-", "-"),
        ("ratio long/short", f"{ratio:.2f}", "<= 1.10", "PASS" if ratio <= 1.1 else "MISS"),
        (
            f"renders per second while streaming ({streaming:.1f} s)",
            f"{rate:.1f}",
            "<= ~30",
            "PASS" if rate <= 31 else "MISS",
        ),
    ]
    print(f"Logician streaming benchmark  (tokens={args.tokens}, repeat={args.repeat})")
    print(f"{'figure':<52}{'value':>12}{'target':>10}{'result':>8}")
    for name, value, target, result in rows:
        print(f"{name:<52}{value:>12}{target:>10}{result:>8}")
    print(f"ratios: per_token_long_vs_short={ratio:.2f} renders_per_s={rate:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
