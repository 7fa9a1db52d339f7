"""What telling the cell's process tree from other writers costs per cell: cells that start
0, 1 and 50 short subprocesses (each writes one file), in a Logician kernel for each
attribution mechanism (`LOGICIAN_ATTRIBUTION=fanotify|sampling|time`, and attribution off)
against plain ipykernel, cells interleaved so machine load hits all alike.

    .venv/bin/python tests/bench/bench_attribution.py [--repeat N] [--mechanisms fanotify,sampling,time,off]

Prints, per cell shape, the median round trip of each kernel and its excess over ipykernel;
exit 0 (figures are measured, never asserted). Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_kernel import BenchKernel, log, make_workspace, median_ms  # noqa: E402

CELLS = {
    "0 subprocesses": "open('cell.txt', 'w').write('{i}')",
    "1 subprocess": "import subprocess; subprocess.run(['sh', '-c', 'echo {i} > sub.txt'])",
    "50 subprocesses": (
        "import subprocess\n"
        "for _k in range(50): subprocess.run(['sh', '-c', f'echo {i} > sub{{_k}}.txt'])"
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--mechanisms", default="fanotify,sampling,time,off")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="logician-bench-attr-"))
    base = {
        **os.environ,
        "LOGICIAN_THREAD": "bench",
        "LOGICIAN_CONFIG_DIR": str(tmp / "user-config"),
    }
    base.pop("JPY_SESSION_NAME", None)
    anomalies: Counter[str] = Counter()
    kernels: list[BenchKernel] = []
    try:
        for label in ["ipykernel", *args.mechanisms.split(",")]:
            ws = make_workspace(tmp / label / "ws", 0)
            env = dict(base)
            if label == "off":
                env["LOGICIAN_CHECKPOINTS__ATTRIBUTION"] = "false"
            elif label != "ipykernel":
                env["LOGICIAN_ATTRIBUTION"] = label
            name = "ipykernel" if label == "ipykernel" else f"logician-{label}"
            k = BenchKernel(name, ws, env, anomalies)
            log(f"starting {name}")
            k.start()
            kernels.append(k)
        for k in kernels[1:]:
            shown = k.run("%logician status").text
            line = next((ln for ln in shown.splitlines() if ln.startswith("attribution")), "")
            log(f"{k.label}: {line or 'attribution: (no row)'}")
        print(f"load before: {os.getloadavg()[0]:.2f}; {args.repeat} cells per figure")
        header = "| cell | " + " | ".join(k.label for k in kernels) + " |"
        print(header)
        print("|" + "---|" * (len(kernels) + 1))
        for shape, code in CELLS.items():
            times: dict[str, list[float]] = {k.label: [] for k in kernels}
            for warm in range(2):
                for k in kernels:
                    k.run(code.format(i=warm))
            for i in range(args.repeat):
                order = kernels if i % 2 == 0 else list(reversed(kernels))
                for k in order:
                    times[k.label].append(k.run(code.format(i=i + 100)).seconds)
            plain = median_ms(times["ipykernel"])
            cells = [f"{plain:.1f} ms"]
            for k in kernels[1:]:
                m = median_ms(times[k.label])
                cells.append(f"{m:.1f} ms (+{m - plain:.1f})")
            print(f"| {shape} | " + " | ".join(cells) + " |", flush=True)
        print(f"load after: {os.getloadavg()[0]:.2f}")
    finally:
        for k in kernels:
            k.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    for text, n in anomalies.items():
        print(f"anomaly x{n}: {text}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
