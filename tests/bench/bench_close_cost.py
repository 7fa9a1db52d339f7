"""Benchmark: the cost of a cell creating, then rewriting, N files, for several builds of
Logician side by side with plain ipykernel, interleaved so background load hits them alike.

    .venv/bin/python tests/bench/bench_close_cost.py [--n 5000] [--rounds 5] LABEL=DIR ...

Each `LABEL=DIR` is a directory holding a `logician_kernel` package (the kernel of that
label runs with `PYTHONPATH=DIR`), e.g. `base=/tmp/base` from `git archive <commit>
logician_kernel | tar -x -C /tmp/base`, and `new=$PWD`. Plain ipykernel runs with the first.
Every round runs the create and rewrite cells of bench_many_files.py in each kernel, in a
rotating order; the medians, with their ratio to ipykernel, go to stdout, with the load average.
Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import BenchKernel, log, make_workspace  # noqa: E402
from bench_many_files import CREATE, REWRITE  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("builds", nargs="+", help="LABEL=DIR")
    args = p.parse_args()
    builds = [tuple(b.split("=", 1)) for b in args.builds] + [
        ("plain", args.builds[0].split("=")[1])
    ]
    tmp = Path(tempfile.mkdtemp(prefix="logician-close-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(LOGICIAN_THREAD="bench", LOGICIAN_CONFIG_DIR=str(tmp / "user-config"))
    env.pop("JPY_SESSION_NAME", None)
    anomalies: Counter[str] = Counter()
    kernels: dict[str, BenchKernel] = {}
    times: dict[str, dict[str, list[float]]] = {}
    try:
        for label, path in builds:
            ws = make_workspace(tmp / label / "ws", 0)
            name = "ipykernel" if label == "plain" else f"logician-{label}"
            k = BenchKernel(name, ws, dict(env, PYTHONPATH=path), anomalies)
            k.start()
            k.run("pass")  # the first snapshot: not measured
            kernels[label], times[label] = k, {"create": [], "rewrite": []}
        labels = list(kernels)
        for r in range(args.rounds):
            for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
                d = f"r{r}"
                times[label]["create"].append(
                    kernels[label].run(CREATE.format(d=d, n=args.n)).seconds
                )
                times[label]["rewrite"].append(
                    kernels[label].run(REWRITE.format(d=d, n=args.n)).seconds
                )
            log(f"round {r + 1}/{args.rounds}, load {os.getloadavg()[0]:.2f}")
    finally:
        for k in kernels.values():
            k.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    plain = {cell: statistics.median(times["plain"][cell]) for cell in ("create", "rewrite")}
    print(f"{args.n:,} files, {args.rounds} rounds, load average {os.getloadavg()}")
    for label in labels:
        row = [label]
        for cell in ("create", "rewrite"):
            m = statistics.median(times[label][cell])
            row.append(f"{cell} {m * 1000:,.0f} ms ({m / plain[cell]:.2f}x)")
        print(" | ".join(row))
    for what, n in anomalies.items():
        print(f"anomaly: {what} (x{n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
