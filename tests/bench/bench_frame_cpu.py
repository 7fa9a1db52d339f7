"""Benchmark: the process CPU time of the frame bracket driven in-process (`Workspace.frame`,
as scripts use it) on tmpfs (/dev/shm): a frame creating N small files, one rewriting them,
and the rewinds of both, beside the same N files created with no frame. CPU time moves less
with the machine's load than wall time; compare builds by running them in turns with
`PYTHONPATH=<a git archive export>`.

    .venv/bin/python tests/bench/bench_frame_cpu.py 5000 [PHASE]

PHASE (create, rewrite, rewind-rewrite, rewind-create) also prints that phase's cProfile;
`CALLERS=fn1,fn2` adds their callers. Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logician_kernel.workspace import Workspace


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def write_files(directory: Path, n: int, text: str) -> None:
    directory.mkdir(exist_ok=True)
    for i in range(n):
        (directory / f"f{i}.txt").write_text(f"{text} {i}\n")


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    profiled = sys.argv[2] if len(sys.argv) > 2 else None
    root = Path(tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    ws = root / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "bench", "LOGICIAN_CONFIG_DIR": str(root / "cfg")}
    workspace = Workspace.open(ws, env)
    workspace.bind_namespace({})
    results: dict[str, tuple[float, float]] = {}

    def phase(name: str, work: Callable[[], Any]) -> Any:
        profile = cProfile.Profile() if profiled == name else None
        c0, t0 = cpu(), time.perf_counter()
        if profile is not None:
            profile.enable()
        out = work()
        if profile is not None:
            profile.disable()
        results[name] = (cpu() - c0, time.perf_counter() - t0)
        if profile is not None:
            stats = pstats.Stats(profile)
            stats.sort_stats("tottime").print_stats(25)
            for fn in filter(None, os.environ.get("CALLERS", "").split(",")):
                stats.print_callers(fn)
        return out

    def frame(count: int, text: str) -> int:
        with workspace.frame(count, None, "write") as opened:
            write_files(ws / "d", n, text)
        assert opened.closed is not None
        return opened.closed.frame

    try:
        with workspace.frame(1, None, "pass"):
            pass  # the first snapshot: not measured
        phase("plain-create", lambda: write_files(root / "plain", n, "one"))
        created = phase("create", lambda: frame(2, "one"))
        rewritten = phase("rewrite", lambda: frame(3, "two"))
        phase("rewind-rewrite", lambda: workspace.rewind(rewritten))
        phase("rewind-create", lambda: workspace.rewind(created))
    finally:
        workspace.close()
        shutil.rmtree(root)
    for name, (used, wall) in results.items():
        print(f"{name:16s} cpu {used * 1000:8.0f} ms  wall {wall * 1000:8.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
