"""Benchmark: cells that touch thousands of files, Logician vs plain ipykernel in one run.

    .venv/bin/python tests/bench/bench_many_files.py [--quick] [--sizes 1000,5000,20000]
                                                     [--rounds N] [--tmpdir DIR]

For each size N, in rounds that alternate which kernel goes first (so background load hits
both alike), the median over the rounds of:

1. a cell creating N small files in a new directory, against the same cell on ipykernel
   (goal <= 1.3x);
2. a cell rewriting those N files, against the same cell on ipykernel (goal <= 1.3x);
3. `%logician rewind --dry-run` of the rewrite (the preview a user reads first), in ms
   (goal <= 300 ms: the first page);
4. `%logician rewind --last` of the rewrite, against ipykernel copying the old bytes back
   from a backup made before the rewrite (goal <= 1.5x);
5. `%logician rewind --last` of the creation, against `shutil.rmtree` of the directory on
   ipykernel (goal <= 1.5x).
Before the sizes, each kernel's first rewind of a session (100 files rewritten), which loads
the rewind's code, is timed once and shown apart: the sizes' medians are the steady cost.
Then a mix (N/10 small files and three 10 MB files) created by one cell, and the start of
both kernels on a 1,000-file workspace: spawn to first reply (goal <= 1.3x) and resident
memory after four cells (goal <= 1.2x or +15 MB). Rewinds linear in N: the per-file cost of
the largest size over the smallest's is printed (goal within 10%).

The kernels run with byte-code caching on (as an installed package has), whatever
PYTHONDONTWRITEBYTECODE says in the calling shell. Workspaces live in a temporary directory
removed at the end. Progress goes to stderr; a markdown table and a `ratios:` line to stdout.
PASS/MISS is informational: the exit status is 0 unless the benchmark itself fails.
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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import BenchKernel, log, make_workspace  # noqa: E402

CREATE = (
    "import os\nos.makedirs({d!r})\n"
    "for _k in range({n}):\n"
    "    with open(f'{d}/f{{_k:05d}}.txt', 'w') as _fh:\n"
    "        _fh.write(f'first {{_k}}\\n')"
)
REWRITE = (
    "for _k in range({n}):\n"
    "    with open(f'{d}/f{{_k:05d}}.txt', 'w') as _fh:\n"
    "        _fh.write(f'second version {{_k}}\\n')"
)
BACKUP = "import shutil\nshutil.copytree({d!r}, {b!r})"
RESTORE = (
    "import shutil\n"
    "for _n in os.listdir({b!r}):\n"
    "    shutil.copyfile(os.path.join({b!r}, _n), os.path.join({d!r}, _n))"
)
RMTREE = "import shutil\nshutil.rmtree({d!r})"
MIX = (
    "import os\nos.makedirs({d!r})\n"
    "for _k in range({n}):\n"
    "    with open(f'{d}/f{{_k:05d}}.txt', 'w') as _fh:\n"
    "        _fh.write(f'first {{_k}}\\n')\n"
    "for _k in range(3):\n"
    "    with open(f'{d}/big{{_k}}.bin', 'wb') as _fh:\n"
    "        _fh.write(os.urandom(10 * 1024 * 1024))"
)


WARM_FILES = 100
"""Files of the one rewind timed as a session's first (`ManyFiles.first_rewind`)."""


@dataclass
class Row:
    figure: str
    logician_ms: float
    plain_ms: float | None
    goal: str
    met: bool | None

    def line(self) -> str:
        plain = f"{self.plain_ms:,.0f}" if self.plain_ms is not None else ""
        ratio = (
            f"{self.logician_ms / self.plain_ms:.2f}x"
            if self.plain_ms
            else f"{self.logician_ms:,.0f} ms"
        )
        verdict = "" if self.met is None else ("PASS" if self.met else "MISS")
        return (
            f"| {self.figure} | {self.logician_ms:,.0f} | {plain} | {ratio} | {self.goal} | "
            f"{verdict} |"
        )


def rss_mb(k: BenchKernel) -> float:
    pid = k.km.provisioner.process.pid
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class ManyFiles:
    def __init__(self, sizes: list[int], rounds: int, tmpdir: str | None) -> None:
        self.sizes, self.rounds = sizes, rounds
        self.tmp = Path(tempfile.mkdtemp(prefix="logician-many-", dir=tmpdir))
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["LOGICIAN_THREAD"] = "bench"
        self.env["LOGICIAN_CONFIG_DIR"] = str(self.tmp / "user-config")
        self.env.pop("JPY_SESSION_NAME", None)
        self.anomalies: Counter[str] = Counter()
        self.rows: list[Row] = []
        self.per_file: dict[str, dict[int, float]] = {}

    def pair(self, name: str, n_files: int) -> tuple[BenchKernel, BenchKernel]:
        lws = make_workspace(self.tmp / name / "logician", n_files)
        iws = self.tmp / name / "ipykernel"
        shutil.copytree(lws, iws, symlinks=True)
        lk = BenchKernel("logician", lws, self.env, self.anomalies)
        ik = BenchKernel("ipykernel", iws, self.env, self.anomalies)
        lk.start()
        ik.start()
        for k in (lk, ik):  # the first cell waits for the first snapshot: not measured
            k.run("pass")
        return lk, ik

    def add(self, figure: str, lt: list[float], it: list[float] | None, goal: float) -> None:
        lm = statistics.median(lt) * 1000
        im = statistics.median(it) * 1000 if it else None
        met = (lm / im <= goal) if im else lm <= goal
        shown = f"<= {goal}x" if im else f"<= {goal:.0f} ms"
        self.rows.append(Row(figure, lm, im, shown, met))

    def first_rewind(self, lk: BenchKernel, ik: BenchKernel) -> None:
        """A session's first rewind loads the rewind's code (its modules load on first use, so
        a start stays light): timed once, on `WARM_FILES` files, apart from the sizes' rounds,
        whose medians are then each kernel's steady cost, not half a cold start."""
        d, b = "first", "first_backup"
        ik.run(CREATE.format(d=d, n=WARM_FILES))
        ik.run(BACKUP.format(d=d, b=b))
        ik.run(REWRITE.format(d=d, n=WARM_FILES))
        plain = ik.run(RESTORE.format(d=d, b=b)).seconds
        ik.run(RMTREE.format(d=d))
        ik.run(RMTREE.format(d=b))
        lk.run(CREATE.format(d=d, n=WARM_FILES))
        lk.run(REWRITE.format(d=d, n=WARM_FILES))
        cold = lk.run("%logician rewind --last").seconds
        lk.run("%logician rewind --last")
        figure = f"first rewind of a session: {WARM_FILES} rewritten (loads its code)"
        self.rows.append(Row(figure, cold * 1000, plain * 1000, "", None))

    def sizes_run(self) -> None:
        lk, ik = self.pair("files", 0)
        try:
            self.first_rewind(lk, ik)
            for n in self.sizes:
                got: dict[str, tuple[list[float], list[float]]] = {}
                for r in range(self.rounds):
                    d, b = f"n{n}_r{r}", f"n{n}_r{r}_backup"
                    log(f"{n} files, round {r + 1}/{self.rounds}")
                    order = (lk, ik) if r % 2 == 0 else (ik, lk)
                    for k in order:
                        plain = k is ik
                        t = {
                            "create": k.run(CREATE.format(d=d, n=n)).seconds,
                        }
                        if plain:  # the plain way's rewind of a rewrite: a backup first
                            k.run(BACKUP.format(d=d, b=b))
                        t["rewrite"] = k.run(REWRITE.format(d=d, n=n)).seconds
                        if plain:
                            t["dry-run"] = 0.0
                            t["rewind rewrite"] = k.run(RESTORE.format(d=d, b=b)).seconds
                            t["rewind create"] = k.run(RMTREE.format(d=d)).seconds
                            k.run(RMTREE.format(d=b))
                        else:
                            t["dry-run"] = k.run("%logician rewind --dry-run --last").seconds
                            t["rewind rewrite"] = k.run("%logician rewind --last").seconds
                            gone = k.run("%logician rewind --last")
                            t["rewind create"] = gone.seconds
                            left = k.run(f"import os; print(os.path.exists({d!r}))").text
                            if "False" not in left:
                                said = " | ".join(gone.text.strip().splitlines()[:6])
                                self.anomalies[f"rewind left {d} in place: {said}"] += 1
                        for key, s in t.items():
                            pair = got.setdefault(key, ([], []))
                            (pair[1] if plain else pair[0]).append(s)
                self.add(f"create {n:,} files", *got["create"], 1.3)
                self.add(f"rewrite {n:,} files", *got["rewrite"], 1.3)
                self.add(f"rewind --dry-run of {n:,} rewritten", got["dry-run"][0], None, 300)
                self.add(f"rewind {n:,} rewritten (vs copy back)", *got["rewind rewrite"], 1.5)
                self.add(f"rewind {n:,} created (vs rmtree)", *got["rewind create"], 1.5)
                for key in ("rewind rewrite", "rewind create"):
                    per = statistics.median(got[key][0]) / n
                    self.per_file.setdefault(key, {})[n] = per
            n = max(self.sizes) // 10
            lt: list[float] = []
            it: list[float] = []
            for r in range(self.rounds):
                log(f"mix of {n} small and three 10 MB files, round {r + 1}/{self.rounds}")
                d = f"mix_r{r}"
                for k in (lk, ik) if r % 2 == 0 else (ik, lk):
                    (it if k is ik else lt).append(k.run(MIX.format(d=d, n=n)).seconds)
            self.add(f"create {n:,} small + 3x10 MB files", lt, it, 1.3)
        finally:
            lk.shutdown()
            ik.shutdown()

    def start_run(self) -> None:
        from bench_start import start_samples  # it imports rss_mb from here

        ls, ist, lr, ir = start_samples(self._start_pair, self.rounds)
        self.add("kernel start to first reply (1k files)", ls, ist, 1.3)
        lm, im = statistics.median(lr), statistics.median(ir)
        goal_mb = max(im * 1.2, im + 15)
        self.rows.append(
            Row("idle RSS after 4 cells, MB", lm, im, f"<= {goal_mb:.0f} MB", lm <= goal_mb)
        )

    def _start_pair(self, r: int) -> tuple[BenchKernel, BenchKernel]:
        lws = make_workspace(self.tmp / f"start{r}" / "logician", 1000)
        iws = self.tmp / f"start{r}" / "ipykernel"
        shutil.copytree(lws, iws, symlinks=True)
        return (
            BenchKernel("logician", lws, self.env, self.anomalies),
            BenchKernel("ipykernel", iws, self.env, self.anomalies),
        )

    def report(self) -> None:
        print("| figure | Logician ms | ipykernel ms | ratio | goal | |")
        print("|---|---|---|---|---|---|")
        for row in self.rows:
            print(row.line())
        lo, hi = min(self.sizes), max(self.sizes)
        for key, per in self.per_file.items():
            if lo != hi:
                print(
                    f"linearity of {key}: per-file cost at {hi:,} / at {lo:,} = "
                    f"{per[hi] / per[lo]:.2f} (goal within 1.10)"
                )
        ratios = [
            f"{r.figure}={r.logician_ms / r.plain_ms:.2f}"
            for r in self.rows
            if r.plain_ms and "MB" not in r.figure
        ]
        print("ratios: " + ", ".join(ratios))
        for what, count in self.anomalies.items():
            print(f"anomaly ({count}x): {what}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="sizes 1000,5000 and 2 rounds")
    p.add_argument("--sizes", help="comma-separated file counts (default 1000,5000,20000)")
    p.add_argument("--rounds", type=int, help="rounds per figure (default 3; 2 with --quick)")
    p.add_argument("--tmpdir", help="where to create the workspaces (default: system tmp)")
    p.add_argument("--skip-start", action="store_true", help="leave out the start figures")
    a = p.parse_args(argv)
    sizes = (
        [int(s) for s in a.sizes.split(",")]
        if a.sizes
        else ([1000, 5000] if a.quick else [1000, 5000, 20000])
    )
    bench = ManyFiles(sizes, a.rounds or (2 if a.quick else 3), a.tmpdir)
    try:
        bench.sizes_run()
        if not a.skip_start:
            bench.start_run()
    finally:
        shutil.rmtree(bench.tmp, ignore_errors=True)
    bench.report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
