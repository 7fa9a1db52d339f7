"""Benchmark: a kernel that starts and idles like ipykernel, Logician vs plain ipykernel.

    .venv/bin/python tests/bench/bench_start.py [--only start|rss|frames|rewind|lab] [--rounds N]
                                                [--frames N] [--tmpdir DIR]

1. start: spawn to first reply (`kernel_info`) in a 1,000-file git workspace, median over N
   rounds that alternate which kernel starts first (goal <= 1.3x ipykernel);
   and the first cell after it (spawn to first reply only moves work elsewhere if the first
   cell does not pay for it), median over the same rounds;
2. rss: resident memory after four small cells, median over the same rounds (goal <= 67 MB);
3. frames: resident memory growth of the Logician kernel over 1,000 frames (a cell writing one
   file), after 100 warm-up frames (goal <= +5 MB); ipykernel's growth over the same cells
   beside it;
4. rewind: a session's first `%logician rewind --last` (of a cell that wrote one file), its
   round trip, then a second one's, and resident memory after both, median over N kernels: the
   frame commands run without loading the agent, so the first is not the load of ~290 modules
   (the goal of a small rewind: <= 15 ms);
5. lab: what a JupyterLab user's kernel holds: as the page opens, ipywidgets' control comm
   and the sidebar's `logician` comm open and the sidebar asks what it asks as it connects
   (`SIDEBAR_ASKS`), the time from the `comm_open` to the last of those answers, and resident
   memory after four small cells, median over N kernels (to read beside figure 2's, which
   has no frontend).

The kernels run with byte-code caching on (as an installed package has), whatever
PYTHONDONTWRITEBYTECODE says in the calling shell; the Logician kernel runs from the tree this
file is in (or PYTHONPATH). Workspaces live in a temporary directory removed at the end.
Progress goes to stderr; a markdown table to stdout. Not a pytest module (file name bench_*).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import BenchKernel, _loadavg, log, make_workspace  # noqa: E402
from bench_many_files import rss_mb  # noqa: E402

WRITE_ONE = "open('d0001/f001.txt','w').write(str({i}))"


Samples = tuple[list[float], list[float], list[float], list[float]]


def start_samples(
    make_pair: Callable[[int], tuple[BenchKernel, BenchKernel]],
    rounds: int,
    first_cell: tuple[list[float], list[float]] | None = None,
) -> Samples:
    """Start seconds (Logician, ipykernel) and RSS after 4 cells in MB (the same), from
    `rounds` pairs of kernels, the first to start alternating (also `bench_many_files.py`);
    the first cell's seconds (Logician, ipykernel) into `first_cell` when given."""
    ls: list[float] = []
    ist: list[float] = []
    lr: list[float] = []
    ir: list[float] = []
    for r in range(rounds):
        log(f"start on a 1,000-file workspace, round {r + 1}/{rounds}")
        lk, ik = make_pair(r)
        try:
            for k in (lk, ik) if r % 2 == 0 else (ik, lk):
                k.start()
                (ist if k is ik else ls).append(k.start_seconds)
            for k in (lk, ik):
                for i in range(4):
                    reply = k.run(f"_x{i} = list(range(1000))")
                    if i == 0 and first_cell is not None:
                        first_cell[k is ik].append(reply.seconds)
                (ir if k is ik else lr).append(rss_mb(k))
        finally:
            lk.shutdown()
            ik.shutdown()
    return ls, ist, lr, ir


SIDEBAR_ASKS = (
    ({"type": "frames.list", "offset": 0, "limit": 50}, "frames"),
    ({"type": "models.list"}, "models"),
    ({"type": "status"}, "status"),
)
"""What the lab extension asks as it connects: the timeline's first page, the model picker's
list, the status (`sidebar.ts`, `model_picker.ts`, `statusbar.ts`)."""


def _open_sidebar(k: BenchKernel, timeout: float = 300.0) -> float:
    """Open the comms a JupyterLab page opens (ipywidgets' control comm, as the widget manager
    does, asking for the widgets' states, and the `logician` comm, as the sidebar does), ask
    what the sidebar asks as it connects; seconds from the `comm_open` to the last of those
    answers."""
    control = k.kc.session.msg(
        "comm_open",
        {"comm_id": "bench-widgets", "target_name": "jupyter.widget.control", "data": {}},
        metadata={"version": "1.0.0"},  # the widget manager's control protocol
    )
    states = k.kc.session.msg(
        "comm_msg", {"comm_id": "bench-widgets", "data": {"method": "request_states"}}
    )
    msg = k.kc.session.msg(
        "comm_open", {"comm_id": "bench-sidebar", "target_name": "logician", "data": {}}
    )
    t0 = time.perf_counter()
    k.kc.shell_channel.send(control)
    k.kc.shell_channel.send(states)
    k.kc.shell_channel.send(msg)
    for i, (ask, _) in enumerate(SIDEBAR_ASKS):
        data = {"v": 1, "id": i, **ask}
        k.kc.shell_channel.send(
            k.kc.session.msg("comm_msg", {"comm_id": "bench-sidebar", "data": data})
        )
    waiting = {"hello", "update_states"} | {kind for _, kind in SIDEBAR_ASKS}
    deadline = t0 + timeout
    while waiting and time.perf_counter() < deadline:
        m = k.kc.get_iopub_msg(timeout=timeout)
        if m["msg_type"] == "comm_msg" and m["content"].get("comm_id") == "bench-widgets":
            waiting.discard(m["content"]["data"].get("method"))
        elif m["msg_type"] == "comm_msg" and m["content"].get("comm_id") == "bench-sidebar":
            data = m["content"]["data"]
            if data.get("type") == "error":
                raise RuntimeError(f"the sidebar's comm answered an error: {data}")
            waiting.discard(data.get("type"))
    if waiting:
        raise TimeoutError(f"the sidebar's comm never answered {sorted(waiting)}")
    return time.perf_counter() - t0


class StartBench:
    def __init__(self, rounds: int, frames: int, tmpdir: str | None) -> None:
        self.rounds, self.frames = rounds, frames
        self.tmp = Path(tempfile.mkdtemp(prefix="logician-start-", dir=tmpdir))
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["LOGICIAN_THREAD"] = "bench"
        self.env["LOGICIAN_CONFIG_DIR"] = str(self.tmp / "user-config")
        self.env.pop("JPY_SESSION_NAME", None)
        self.anomalies: Counter[str] = Counter()
        self.lines: list[str] = []

    def pair(self, name: str) -> tuple[BenchKernel, BenchKernel]:
        lws = make_workspace(self.tmp / name / "logician", 1000)
        iws = self.tmp / name / "ipykernel"
        shutil.copytree(lws, iws, symlinks=True)
        return (
            BenchKernel("logician", lws, self.env, self.anomalies),
            BenchKernel("ipykernel", iws, self.env, self.anomalies),
        )

    def start_and_rss(self) -> None:
        """Figures 1 and 2, from the same kernels (`--only start` and `--only rss` print both)."""
        first: tuple[list[float], list[float]] = ([], [])
        ls, ist, lr, ir = start_samples(lambda r: self.pair(f"start{r}"), self.rounds, first)
        lm, im = statistics.median(ls) * 1000, statistics.median(ist) * 1000
        self.lines.append(
            f"| kernel start to first reply (1k files), ms | {lm:,.0f} | {im:,.0f} | "
            f"{lm / im:.2f}x | <= 1.3x | {'PASS' if lm <= 1.3 * im else 'MISS'} |"
        )
        lm, im = statistics.median(first[0]) * 1000, statistics.median(first[1]) * 1000
        self.lines.append(
            f"| first cell after start, ms | {lm:,.0f} | {im:,.0f} | +{lm - im:,.0f} ms | | |"
        )
        lm, im = statistics.median(lr), statistics.median(ir)
        self.lines.append(
            f"| idle RSS after 4 cells, MB | {lm:.1f} | {im:.1f} | +{lm - im:.1f} MB | "
            f"<= 67 MB | {'PASS' if lm <= 67 else 'MISS'} |"
        )

    def frame_growth(self) -> None:
        lk, ik = self.pair("frames")
        growth: dict[str, float] = {}
        try:
            for k in (lk, ik):
                k.start()
                log(f"{k.label}: 100 warm-up frames, then {self.frames}")
                for i in range(100):
                    k.run(WRITE_ONE.format(i=i))
                before, t0 = rss_mb(k), time.perf_counter()
                for i in range(self.frames):
                    k.run(WRITE_ONE.format(i=i + 100))
                growth[k.label] = rss_mb(k) - before
                log(f"  {k.label}: +{growth[k.label]:.1f} MB in {time.perf_counter() - t0:.0f}s")
        finally:
            lk.shutdown()
            ik.shutdown()
        lg, ig = growth["logician"], growth["ipykernel"]
        self.lines.append(
            f"| RSS growth over {self.frames:,} frames, MB | +{lg:.1f} | +{ig:.1f} | "
            f"+{lg - ig:.1f} MB | <= +5 MB | {'PASS' if lg <= 5 else 'MISS'} |"
        )

    def first_rewind(self) -> None:
        first: list[float] = []
        second: list[float] = []
        rss: list[float] = []
        for r in range(self.rounds):
            log(f"a session's first rewind, round {r + 1}/{self.rounds}")
            k = BenchKernel(
                "logician",
                make_workspace(self.tmp / f"rewind{r}", 1000),
                self.env,
                self.anomalies,
            )
            try:
                k.start()
                for took in (first, second):
                    k.run(WRITE_ONE.format(i=r))
                    took.append(k.run("%logician rewind --last").seconds)
                rss.append(rss_mb(k))
            finally:
                k.shutdown()
        f, s2 = statistics.median(first) * 1000, statistics.median(second) * 1000
        self.lines.append(
            f"| a session's first `rewind --last`, then the second, ms | {f:,.0f} / {s2:,.0f} | "
            f"| | <= 15 ms | {'PASS' if f <= 15 else 'MISS'} |"
        )
        self.lines.append(
            f"| RSS after the two rewinds, MB | {statistics.median(rss):.1f} | | | | |"
        )

    def lab(self) -> None:
        hello: list[float] = []
        rss: list[float] = []
        for r in range(self.rounds):
            log(f"the sidebar's comm, round {r + 1}/{self.rounds}")
            k = BenchKernel(
                "logician", make_workspace(self.tmp / f"lab{r}", 1000), self.env, self.anomalies
            )
            try:
                k.start()
                hello.append(_open_sidebar(k))
                for i in range(4):
                    k.run(f"_x{i} = list(range(1000))")
                rss.append(rss_mb(k))
            finally:
                k.shutdown()
        self.lines.append(
            "| the page's comms open to the sidebar's first answers, ms | "
            f"{statistics.median(hello) * 1000:,.0f} "
            "| | | | |"
        )
        lm = statistics.median(rss)
        self.lines.append(
            f"| idle RSS after 4 cells, the sidebar's comm open, MB | {lm:.1f} | | | <= 67 MB | "
            f"{'PASS' if lm <= 67 else 'MISS'} |"
        )

    def run(self, only: str | None) -> None:
        try:
            if only in (None, "start", "rss"):
                self.start_and_rss()
            if only in (None, "frames"):
                self.frame_growth()
            if only in (None, "rewind"):
                self.first_rewind()
            if only in (None, "lab"):
                self.lab()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def report(self, load: tuple[str, str]) -> None:
        print(f"(load average {load[0]} -> {load[1]}, cpus {os.cpu_count()})")
        print("| figure | Logician | ipykernel | value | goal | |")
        print("|---|---|---|---|---|---|")
        for line in self.lines:
            print(line)
        for what, count in self.anomalies.items():
            print(f"anomaly ({count}x): {what}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--only", choices=("start", "rss", "frames", "rewind", "lab"), help="one figure only"
    )
    p.add_argument("--rounds", type=int, default=5, help="start rounds (default 5)")
    p.add_argument("--frames", type=int, default=1000, help="frames measured (default 1000)")
    p.add_argument("--tmpdir", help="where to create the workspaces (default: the system tmp)")
    args = p.parse_args(argv)
    before = _loadavg()
    bench = StartBench(args.rounds, args.frames, args.tmpdir)
    bench.run(args.only)
    bench.report((before, _loadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
