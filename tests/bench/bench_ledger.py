"""Ledger benchmark: append cost as the ledger grows, and rebuilding the projection.

    .venv/bin/python tests/bench/bench_ledger.py [--entries N] [--appends A] [--rounds R]

Builds ledgers of 100 and N (default 100,000) entries - cells of frame_open, a user and an
assistant message, frame_close - then times single appends on each (the default buffered
append, and durable=True with its fsync), interleaving the two sizes round by round so a
loaded machine skews both alike. Also times reopening the large ledger (journal load,
checksum and validation of every record) plus projecting its conversation, and the pure
`read_entries` + `project` path. Prints figures with targets; exit 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from logician_kernel.session.thread_ledger import (
    FrameClose,
    FrameOpen,
    MessageEntry,
    ThreadLedger,
    project,
    read_entries,
)

APPEND_RATIO_TARGET = 1.2
REOPEN_TARGET_S = 10.0  # 100k entries; a generous bound, reported rather than enforced


def message(n: int, role: str) -> dict:
    return {"kind": role, "content": [{"kind": "text", "text": f"message {n} " + "x" * 80}]}


def fill(ledger: ThreadLedger, entries: int) -> None:
    frame = 0
    while len(ledger.entries) < entries:
        frame += 1
        steps = [
            (
                FrameOpen,
                {
                    "frame": frame,
                    "execution_count": frame,
                    "cell_id": None,
                    "code": "%%logician",
                    "pre_tree": None,
                },
            ),  # fmt: skip
            (MessageEntry, {"frame": frame, "message": message(frame, "user")}),
            (MessageEntry, {"frame": frame, "message": message(frame, "assistant")}),
            (FrameClose, {"frame": frame, "outcome": "ok", "post_tree": None}),
        ]
        for kind, fields in steps[: entries - len(ledger.entries)]:
            ledger.append(kind, **fields)


def time_appends(ledger: ThreadLedger, count: int, *, durable: bool) -> list[float]:
    times = []
    for n in range(count):
        fields = {"frame": None, "message": message(n, "user")}
        start = time.perf_counter()
        ledger.append(MessageEntry, durable=durable, **fields)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--appends", type=int, default=200, help="appends per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        small = ThreadLedger(root, "small")
        fill(small, 100)
        big = ThreadLedger(root, "big")
        fill(big, args.entries)
        build_s = time.perf_counter() - started

        samples: dict[tuple[str, bool], list[float]] = {}
        for _ in range(args.rounds):
            for durable in (False, True):
                count = args.appends if not durable else max(10, args.appends // 4)
                for name, ledger in (("small", small), ("big", big)):
                    samples.setdefault((name, durable), []).extend(
                        time_appends(ledger, count, durable=durable)
                    )
        med = {key: statistics.median(v) for key, v in samples.items()}
        small.close()
        big.close()
        big_path = root / "big.jsonl"
        size_mb = big_path.stat().st_size / 1e6
        total = len(read_entries(big_path))

        reopen, pure = [], []
        for _ in range(3):
            start = time.perf_counter()
            again = ThreadLedger(root, "big")
            conversation = again.messages()
            reopen.append(time.perf_counter() - start)
            again.close()
            start = time.perf_counter()
            assert project(read_entries(big_path)) == conversation
            pure.append(time.perf_counter() - start)

    ratio = med[("big", False)] / med[("small", False)]
    ratio_durable = med[("big", True)] / med[("small", True)]
    reopen_s, pure_s = min(reopen), min(pure)

    def us(seconds: float) -> str:
        return f"{seconds * 1e6:9.1f} us"

    def mark(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    print(f"ledger bench: 100 vs {args.entries:,} entries (built in {build_s:.1f} s; "
          f"{total:,} entries, {size_mb:.1f} MB on disk after appends)")  # fmt: skip
    print(f"{'figure':44} {'value':>14}  {'target':>14}  status")
    rows = [
        ("append median @100 (buffered)", us(med[("small", False)]), "", ""),
        (f"append median @{args.entries:,} (buffered)", us(med[("big", False)]), "", ""),
        ("  ratio", f"{ratio:9.2f} x", f"<= {APPEND_RATIO_TARGET}",
         mark(ratio <= APPEND_RATIO_TARGET)),
        ("append median @100 (durable, fsync)", us(med[("small", True)]), "", ""),
        (f"append median @{args.entries:,} (durable, fsync)", us(med[("big", True)]), "", ""),
        ("  ratio", f"{ratio_durable:9.2f} x", f"<= {APPEND_RATIO_TARGET}",
         mark(ratio_durable <= APPEND_RATIO_TARGET)),
        (f"reopen + project @{total:,}", f"{reopen_s:9.2f} s ", f"<= {REOPEN_TARGET_S} s",
         mark(reopen_s <= REOPEN_TARGET_S)),
        (f"read_entries + project @{total:,}", f"{pure_s:9.2f} s ", "", ""),
    ]  # fmt: skip
    for name, value, target, status in rows:
        print(f"{name:44} {value:>14}  {target:>14}  {status}")
    print(
        f"ratios: append_100k_vs_100={ratio:.2f} durable_append_100k_vs_100={ratio_durable:.2f} "
        f"reopen_project_s={reopen_s:.2f} read_project_s={pure_s:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
