"""Run the whole CI job in fresh clones beside busy loops, and say what each run gave.

    .venv/bin/python scripts/stressed_suite.py [--runs 3] [--side-by-side] [--loops 8]
                                               [--dir DIR] [--keep] [--command CMD]

The suite must pass on a loaded machine (load average 20 and more on 2 cores), three times
in a row: this is how that is checked. Each run clones this checkout's HEAD into
DIR/run-N and runs the CI job there (`CI=true bash .ci/run`: the install, then the test command
of README.md), its output in DIR/run-N.log. `--loops` busy loops (`while :; do :; done`) run
for the whole time; the load average is sampled every 30 s. Runs go one after another, or all
at once with `--side-by-side` (three at once take about as long as one at a time takes for
one, and load the machine more).

Ctrl-C sends each running job's process group SIGINT, so pytest prints the failures it has
seen so far, then stops. A job started in the background by a shell ignores SIGINT (`kill
-INT` then does nothing): here each job starts with SIGINT at its default.

Prints a markdown table: the run, its commit, the load average while it ran, pytest's last
summary line, its wall time and exit status. Exits 0 when every run's job exited 0.
`--command` replaces the job (a test of this script uses it). DIR defaults to a new temporary
directory, removed at the end unless `--keep` (the logs are kept in either case: their paths
are printed).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOB = "CI=true bash .ci/run"
SUMMARY = re.compile(r"^=+ (.*\b(?:passed|failed|error|errors)\b.*) =+$")
SAMPLE_SECONDS = 30.0


@dataclass
class Run:
    number: int
    where: Path
    log: Path
    commit: str = ""
    began: float = 0.0
    ended: float = 0.0
    status: int | None = None
    loads: list[float] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None

    def summary(self) -> str:
        found = ""
        try:
            for line in self.log.read_text(errors="replace").splitlines():
                m = SUMMARY.match(line.strip())
                if m:
                    found = m.group(1)
        except OSError:
            pass
        return found or "(no pytest summary)"

    def row(self) -> str:
        loads = f"{min(self.loads):.1f}-{max(self.loads):.1f}" if self.loads else "-"
        wall = f"{(self.ended or time.monotonic()) - self.began:,.0f} s" if self.began else "-"
        status = "running" if self.status is None else str(self.status)
        return f"| {self.number} | {self.commit} | {loads} | {self.summary()} | {wall} | {status} |"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(run: Run, source: Path, command: str) -> None:
    subprocess.run(["git", "clone", "-q", str(source), str(run.where)], check=True)
    run.commit = subprocess.run(
        ["git", "-C", str(run.where), "log", "-1", "--format=%h"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    with run.log.open("ab") as out:
        run.proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=run.where,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: Ctrl-C here is forwarded, not shared
            preexec_fn=_default_sigint,
        )
    run.began = time.monotonic()
    print(f"run {run.number}: {run.commit} in {run.where}, log {run.log}", file=sys.stderr)


def wait(runs: list[Run]) -> None:
    for run in runs:
        if run.proc is not None:
            run.status = run.proc.wait()
            run.ended = time.monotonic()
            print(f"run {run.number}: exit {run.status}, {run.summary()}", file=sys.stderr)


def interrupt(runs: list[Run]) -> None:
    for run in runs:
        if run.proc is not None and run.proc.poll() is None:
            os.killpg(run.proc.pid, signal.SIGINT)
    wait(runs)


def sample_loads(runs: list[Run], stop: threading.Event) -> None:
    while not stop.is_set():
        load = os.getloadavg()[0]
        for run in runs:
            if run.proc is not None and run.proc.poll() is None:
                run.loads.append(load)
        stop.wait(SAMPLE_SECONDS)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="how many runs (default 3)")
    p.add_argument("--side-by-side", action="store_true", help="start every run at once")
    p.add_argument("--loops", type=int, default=8, help="busy loops beside them (default 8)")
    p.add_argument("--dir", help="where the clones and logs go (default: a new temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the clones")
    p.add_argument("--source", default=str(ROOT), help="the repository cloned (default: this)")
    p.add_argument("--command", default=JOB, help=f"each run's job (default: {JOB})")
    a = p.parse_args(argv)
    base = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="logician-stressed-"))
    base.mkdir(parents=True, exist_ok=True)
    runs = [Run(n, base / f"run-{n}", base / f"run-{n}.log") for n in range(1, a.runs + 1)]
    loops = [
        subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
        for _ in range(a.loops)
    ]
    stop = threading.Event()
    sampler = threading.Thread(target=sample_loads, args=(runs, stop), daemon=True)
    sampler.start()
    try:
        if a.side_by_side:
            for run in runs:
                start(run, Path(a.source), a.command)
            wait(runs)
        else:
            for run in runs:
                start(run, Path(a.source), a.command)
                wait([run])
    except KeyboardInterrupt:
        print("interrupted: asking each running job to stop", file=sys.stderr)
        interrupt(runs)
    finally:
        stop.set()
        for loop in loops:
            os.killpg(loop.pid, signal.SIGKILL)
            loop.wait()
        if not a.keep:
            for run in runs:
                shutil.rmtree(run.where, ignore_errors=True)
    print(
        f"{len(runs)} run(s) {'side by side' if a.side_by_side else 'in a row'}, beside {a.loops} busy loops:"
    )
    print("| run | commit | load average | pytest | wall | exit |")
    print("|---|---|---|---|---|---|")
    for run in runs:
        print(run.row())
    print(f"logs: {base}")
    return 0 if all(run.status == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
