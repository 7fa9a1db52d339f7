"""Keystroke-level benchmark: `complete_request` and `inspect_request` round trips on a
Logician kernel whose thread ledger holds 100,000 entries, against one with an empty thread.
Nothing on the input path may read or scan history, so the ratio must stay near 1.

    .venv/bin/python tests/bench/bench_keystroke.py [--entries N] [--repeat R]

Prints figures with targets; exit 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def measure(workspace: Path, repeat: int) -> tuple[float, float]:
    env = {**os.environ, "LOGICIAN_THREAD": "bench", "LOGICIAN_CONFIG_DIR": str(workspace / "cfg")}
    env.pop("JPY_SESSION_NAME", None)
    km = KernelManager(kernel_name="logician", kernel_spec_manager=LogicianSpecManager())
    km.start_kernel(cwd=str(workspace), env=env)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        kc.execute_interactive("import os\nvalue = 1", timeout=120)
        complete, inspect = [], []
        for _ in range(repeat):
            started = time.perf_counter()
            msg_id = kc.complete("os.pa", 5)
            while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
                pass
            complete.append(time.perf_counter() - started)
            started = time.perf_counter()
            msg_id = kc.inspect("value", 5)
            while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
                pass
            inspect.append(time.perf_counter() - started)
        return statistics.median(complete) * 1000, statistics.median(inspect) * 1000
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args(argv)
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
