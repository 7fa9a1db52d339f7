"""Benchmark: what holding a large ledger entry once costs (`ledger.entries.share_entry`).

    .venv/bin/python tests/bench/bench_entry_share.py [N]

Every frame close, rewind plan and progress record a kernel appends or reads is walked once
so that its models share one set of field names per class and equal path states and strings
(docs/architecture.md, the ledger row): a record of N (default 5,000) rewritten paths is
5 N models. Prints the process CPU time of that walk over such a record, appended as built
and read back from its JSON, best of 15 rounds. CPU time moves less with the machine's load
than wall time; compare builds by running them in turns with `PYTHONPATH=<a git archive
export>`. Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from logician_kernel.ledger import entries
from logician_kernel.ledger.thread_ledger import FrameClose
from logician_kernel.types.path_states import Fingerprint, PathChange, PathState


def record(n: int) -> FrameClose:
    changes = []
    for i in range(n):
        before, after = (
            PathState(
                kind="blob",
                mode="100644",
                sha=f"{k}{i:039x}",
                fingerprint=Fingerprint(size=k, mtime_ns=k * 10**9 + i, mode=0o100644),
                perms=0o644,
            )
            for k in (1, 2)
        )
        changes.append(
            PathChange(
                path=f"d/f{i}.txt",
                before=before,
                after=after,
                by="cell",
                basis=" ".join(("written by this kernel's", "process")),
            )
        )
    return FrameClose(
        seq=2,
        parent=1,
        time="2026-12-07T00:00:00+00:00",
        frame=1,
        outcome="ok",
        post_tree=None,
        changes=changes,
    )


def best_cpu(
    make: Callable[[], object], walk: Callable[[object], object], rounds: int = 15
) -> float:
    best = float("inf")
    for _ in range(rounds):
        value = make()
        entries._RECENT.clear()  # each round starts as a kernel's first large record would
        t0 = time.process_time()
        walk(value)
        best = min(best, time.process_time() - t0)
    return best * 1000


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    dumped = record(n).model_dump(mode="json")
    built = best_cpu(lambda: record(n), lambda e: entries.share_entry(e, built=True))  # type: ignore[arg-type]
    read = best_cpu(lambda: entries._validate(dict(dumped)), entries.share_entry)  # type: ignore[arg-type]
    print(f"share_entry of a {n:,}-path frame close, appended as built: {built:6.1f} ms CPU")
    print(f"share_entry of a {n:,}-path frame close, read back:         {read:6.1f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
