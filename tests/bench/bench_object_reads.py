"""Benchmark: reading a private store's packed objects one at a time (`GitStore.read_not_loose`,
what a diff, a tree update or a small rewind does for an object that is not loose), in a fresh
process: wall time, CPU time and resident memory added, the first read (which starts the
reader's `git cat-file --batch`) included.

    .venv/bin/python tests/bench/bench_object_reads.py [N]

N objects (default 2,000). Compare builds by running this with `PYTHONPATH=<a git archive
export>` in turns. Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from logician_kernel.snapshots.git_pack import PackWriter
from logician_kernel.snapshots.git_store import GitStore


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    tmp = Path(tempfile.mkdtemp())
    try:
        ws = tmp / "ws"
        ws.mkdir()
        store = GitStore(ws, tmp / "store", "index")
        store.ensure(())
        writer = PackWriter(store.store / "objects")
        ids = [writer.add(f"version {i}\n".encode() * 20) for i in range(n)]
        writer.flush()
        rss, t0, c0 = rss_mb(), time.perf_counter(), os.times()
        for sha in ids:
            store.read_not_loose(sha)
        c1 = os.times()
        wall = (time.perf_counter() - t0) * 1000
        cpu = (c1.user + c1.system - c0.user - c0.system) * 1000
        print(
            f"{n} packed objects read one by one: {wall:.0f} ms wall, {cpu:.0f} ms CPU, "
            f"+{rss_mb() - rss:.1f} MB RSS (the first read included)"
        )
        store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
