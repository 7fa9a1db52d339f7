"""Keystroke-level benchmark: `complete_request` and `inspect_request` round trips on a
Logician kernel whose thread ledger holds 100,000 entries, against one with an empty thread.
Nothing on the input path may read or scan history, so the ratio must stay near 1.

    .venv/bin/python tests/bench/bench_keystroke.py [--entries N] [--repeat R]
    .venv/bin/python tests/bench/bench_keystroke.py --quick     # the gate scripts/test.sh runs

The full run prints figures with targets and exits 0. `--quick` is a flatness gate, a ratio
measured in one run rather than an absolute time: two kernels at once, one on a thread of 10
ledger entries and one on 10,000, their requests interleaved one by one (so machine load hits
both alike), the fastest round trip of each kept; it exits 1 when either request costs more
than `--max-ratio` (2) times as much at 10,000 entries as at 10.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from logician_kernel.jupyter.runner import LogicianSpecManager
from logician_kernel.ledger.thread_ledger import FrameClose, FrameOpen, MessageEntry, ThreadLedger


def make_thread(workspace: Path, entries: int) -> None:
    ledger = ThreadLedger(workspace / ".logician" / "threads", "bench")
    frame = 0
    while len(ledger.entries) < entries:
        frame += 1
        ledger.append(
            FrameOpen,
            frame=frame,
            execution_count=frame,
            cell_id=None,
            code=f"x = {frame}",
            pre_tree=None,
        )
        ledger.append(
            MessageEntry,
            frame=frame,
            message={"kind": "user", "content": [{"kind": "text", "text": f"m{frame}"}]},
        )
        ledger.append(FrameClose, frame=frame, outcome="ok", post_tree=None)
    ledger.close()


def start(workspace: Path) -> tuple[KernelManager, Any]:
    env = {**os.environ, "LOGICIAN_THREAD": "bench", "LOGICIAN_CONFIG_DIR": str(workspace / "cfg")}
    env.pop("JPY_SESSION_NAME", None)
    km = KernelManager(kernel_name="logician", kernel_spec_manager=LogicianSpecManager())
    km.start_kernel(cwd=str(workspace), env=env)
    kc = km.client()
    kc.start_channels()
    return km, kc


def ready(kc: Any) -> None:
    kc.wait_for_ready(timeout=120)
    kc.execute_interactive("import os\nvalue = 1", timeout=120)


def stop(km: KernelManager, kc: Any) -> None:
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def round_trips(kc: Any) -> tuple[float, float]:
    """Seconds of one `complete_request` and one `inspect_request` round trip."""
    started = time.perf_counter()
    msg_id = kc.complete("os.pa", 5)
    while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
        pass
    complete = time.perf_counter() - started
    started = time.perf_counter()
    msg_id = kc.inspect("value", 5)
    while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
        pass
    return complete, time.perf_counter() - started


def measure(workspace: Path, repeat: int) -> tuple[float, float]:
    km, kc = start(workspace)
    try:
        ready(kc)
        trips = [round_trips(kc) for _ in range(repeat)]
        return (
            statistics.median(t[0] for t in trips) * 1000,
            statistics.median(t[1] for t in trips) * 1000,
        )
    finally:
        stop(km, kc)


def quick(repeat: int, max_ratio: float) -> int:
    """The flatness gate: round trips at 10,000 vs 10 ledger entries, interleaved."""
    with tempfile.TemporaryDirectory() as small, tempfile.TemporaryDirectory() as large:
        sizes = {10: Path(small), 10_000: Path(large)}
        for entries, workspace in sizes.items():
            make_thread(workspace, entries)
        kernels = {n: start(ws) for n, ws in sizes.items()}  # both start at once
        try:
            for _km, kc in kernels.values():
                ready(kc)
            best = {n: [float("inf"), float("inf")] for n in sizes}
            for round_ in range(repeat):
                for n in sizes if round_ % 2 == 0 else list(sizes)[::-1]:
                    trip = round_trips(kernels[n][1])
                    best[n] = [min(b, t) for b, t in zip(best[n], trip, strict=True)]
        finally:
            for km, kc in kernels.values():
                stop(km, kc)
    failed = False
    for i, request in enumerate(("complete_request", "inspect_request")):
        ratio = best[10_000][i] / best[10][i]
        failed = failed or ratio > max_ratio
        print(
            f"keystroke flatness: {request} {best[10][i] * 1000:.2f} ms at 10 entries, "
            f"{best[10_000][i] * 1000:.2f} ms at 10,000; ratio {ratio:.2f} (limit {max_ratio:g}; "
            f"fastest of {repeat} interleaved) {'FAIL' if ratio > max_ratio else 'PASS'}"
        )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="the flatness gate only")
    parser.add_argument("--max-ratio", type=float, default=2.0, help="the gate's limit")
    args = parser.parse_args(argv)
    if args.quick:
        return quick(repeat=30, max_ratio=args.max_ratio)
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as full:
        print(f"writing a {args.entries:,}-entry thread ...", file=sys.stderr)
        make_thread(Path(full), args.entries)
        small = measure(Path(empty), args.repeat)
        large = measure(Path(full), args.repeat)
    rows = [
        ("complete_request, empty thread (ms)", f"{small[0]:.2f}", ""),
        (f"complete_request, {args.entries:,} entries (ms)", f"{large[0]:.2f}", ""),
        ("  ratio", f"{large[0] / small[0]:.2f}", "<= 1.10"),
        ("inspect_request, empty thread (ms)", f"{small[1]:.2f}", ""),
        (f"inspect_request, {args.entries:,} entries (ms)", f"{large[1]:.2f}", ""),
        ("  ratio", f"{large[1] / small[1]:.2f}", "<= 1.10"),
    ]
    print(f"Logician keystroke benchmark (repeat={args.repeat})")
    for name, value, target in rows:
        print(f"{name:<44}{value:>10}{target:>10}")
    print(f"ratios: complete={large[0] / small[0]:.2f} inspect={large[1] / small[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
