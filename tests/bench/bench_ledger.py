"""Ledger benchmark: append cost as the ledger grows, and rebuilding the projection.

    .venv/bin/python tests/bench/bench_ledger.py [--entries N] [--appends A] [--rounds R]

Builds ledgers of 100 and N (default 100,000) entries - cells of frame_open, a user and an
assistant message, frame_close - then times single appends on each (the default buffered
append, and durable=True with its fsync), interleaving the two sizes round by round so a
loaded machine skews both alike. Also times reopening the large ledger (journal load,
checksum and validation of every record) plus projecting its conversation, and the pure
`read_entries` + `project` path.

Then the open time at 1k / 10k / 100k entries, with and without a projection checkpoint, of a
thread shaped like a real one (`realistic`: plain cells with file changes and variables, agent
cells with a tool call, compaction every 25 agent cells, which bounds the conversation as a
context window does): what opening a thread costs the kernel before its first cell - the
ledger open, settling open tool calls, the conversation and the frame stack
(`OpenThread.open` without file capture). With `--kernel`, also kernel start -> first
cell reply on a real Logician kernel for each size, against an empty thread, interleaved.
Prints figures with targets; exit 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logician_kernel.ledger.checkpoint import checkpoint_path
from logician_kernel.ledger.thread_ledger import (
    FrameClose,
    FrameOpen,
    MessageEntry,
    ThreadLedger,
    project,
    read_entries,
)

APPEND_RATIO_TARGET = 1.2
REOPEN_TARGET_S = 10.0  # 100k entries; a generous bound, reported rather than enforced
OPEN_TARGET_S = 0.300  # 100k entries with the checkpoint (issue 17)
OPEN_RATIO_TARGET = 2.0  # 100k vs 1k entries, with the checkpoint
SIZES = (1_000, 10_000, 100_000)


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
            ),
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


def realistic(ledger: ThreadLedger, entries: int) -> None:
    """Append `entries` entries shaped like a real thread's (see the module docstring)."""
    from logician_kernel.ledger.thread_ledger import (
        ProjectionItem,
        RunEnd,
        ToolCommit,
        ToolIntent,
        ToolOutcome,
        VariableRecord,
        VariablesCaptured,
    )
    from logician_kernel.types.path_states import PathChange, PathState

    frame = agent = 0

    def blob(n: int) -> PathState:
        return PathState(kind="blob", sha=f"{n:040x}", mode="100644")

    while len(ledger.entries) < entries:
        frame += 1
        opened = {"frame": frame, "execution_count": frame, "cell_id": None, "pre_tree": "0" * 40}
        if frame % 4:
            steps: list[tuple[Any, dict[str, Any]]] = [
                (FrameOpen, {**opened, "code": f"df = load({frame})"}),
                (
                    FrameClose,
                    {
                        "frame": frame,
                        "outcome": "ok",
                        "post_tree": "1" * 40,
                        "changes": [
                            PathChange(
                                path=f"out/{frame % 50}.csv",
                                before=blob(frame - 1),
                                after=blob(frame),
                            )
                        ],
                    },
                ),
                (
                    VariablesCaptured,
                    {
                        "frame": frame,
                        "records": [
                            VariableRecord(name="df", action="changed", digest=f"{frame:032x}")
                        ],
                    },
                ),
            ]
        else:
            agent += 1
            call = f"call_{agent}"
            result = {
                "kind": "tool_result",
                "tool_call_id": call,
                "content": [{"kind": "text", "text": "x" * 200}],
                "is_error": False,
            }
            steps = [
                (FrameOpen, {**opened, "code": "%%logician"}),
                (MessageEntry, {"frame": frame, "message": message(frame, "user")}),
                (
                    ToolIntent,
                    {
                        "frame": frame,
                        "call_id": call,
                        "name": "bash",
                        "arguments": {"command": "ls"},
                        "recovery": "external",
                    },
                ),
                (
                    ToolOutcome,
                    {"frame": frame, "call_id": call, "is_error": False, "content": "x" * 200},
                ),
                (MessageEntry, {"frame": frame, "message": result}),
                (ToolCommit, {"call_id": call}),
                (MessageEntry, {"frame": frame, "message": message(frame, "assistant")}),
                (
                    RunEnd,
                    {
                        "frame": frame,
                        "status": "completed",
                        "input_tokens": 900,
                        "output_tokens": 60,
                    },
                ),
                (FrameClose, {"frame": frame, "outcome": "ok", "post_tree": None}),
            ]
            if agent % 25 == 0:
                kept = ledger.messages()[-4:]
                summary = message(frame, "user")
                steps.append(
                    (ProjectionItem, {"reason": "compaction", "messages": [summary, *kept]})
                )
        for kind, fields in steps[: entries - len(ledger.entries)]:
            ledger.append(kind, **fields)


def _build_threads(root: Path, sizes: Sequence[int]) -> dict[int, Path]:
    """One workspace per size holding a thread `bench` of that many entries."""
    workspaces = {}
    for n in sizes:
        ws = root / f"ws-{n}"
        threads = ws / ".logician" / "threads"
        ledger = ThreadLedger(threads, "bench")
        realistic(ledger, n)
        ledger.close()  # writes its checkpoint (past CHECKPOINT_EVERY entries)
        workspaces[n] = ws
    return workspaces


def _reset(ws: Path, pristine: bytes, checkpoint: bytes | None) -> None:
    """Put the thread back as built (an open appends), with or without its checkpoint."""
    path = ws / ".logician" / "threads" / "bench.jsonl"
    path.write_bytes(pristine)
    cp = checkpoint_path(path)
    cp.unlink(missing_ok=True)
    if checkpoint is not None:
        cp.write_bytes(checkpoint)


def time_opens(root: Path, sizes: Sequence[int], rounds: int) -> dict[tuple[int, bool], float]:
    """Best time of `OpenThread.open` (no file capture) per size, with/without checkpoint."""
    from logician_kernel.workspace.open_thread import OpenThread

    workspaces = _build_threads(root, sizes)
    saved = {}
    for n, ws in workspaces.items():
        path = ws / ".logician" / "threads" / "bench.jsonl"
        saved[n] = (path.read_bytes(), checkpoint_path(path).read_bytes())
    times: dict[tuple[int, bool], list[float]] = {}
    for _ in range(rounds):
        for n, ws in workspaces.items():
            for with_checkpoint in (True, False):
                pristine, checkpoint = saved[n]
                _reset(ws, pristine, checkpoint if with_checkpoint else None)
                start = time.perf_counter()
                session = OpenThread.open(
                    ws, env={"LOGICIAN_THREAD": "bench"}, capture_enabled=False
                )
                assert session.checkpoints is not None and session.ledger is not None
                session.checkpoints.frames()
                took = time.perf_counter() - start
                assert (session.ledger.journal.resumed is not None) == with_checkpoint, n
                session.close()
                times.setdefault((n, with_checkpoint), []).append(took)
    return {key: min(v) for key, v in times.items()}


def time_kernel_starts(root: Path, sizes: Sequence[int], rounds: int) -> dict[Any, float]:
    """Median kernel start -> first cell reply, per size with the checkpoint, and for an empty
    thread, interleaved round by round."""
    import os

    from jupyter_client.manager import KernelManager

    from logician_kernel.jupyter.runner import LogicianSpecManager

    workspaces = _build_threads(root / "kernel", sizes)
    empty = root / "kernel" / "ws-empty"
    empty.mkdir()
    saved = {}
    for n, ws in workspaces.items():
        path = ws / ".logician" / "threads" / "bench.jsonl"
        saved[n] = (path.read_bytes(), checkpoint_path(path).read_bytes())
    env = dict(
        os.environ,
        LOGICIAN_THREAD="bench",
        LOGICIAN_CONFIG_DIR=str(root / "kernel" / "user-config"),
    )
    env.pop("JPY_SESSION_NAME", None)
    samples: dict[Any, list[float]] = {}
    for _ in range(rounds):
        for key in ("empty", *sizes):
            ws = empty if key == "empty" else workspaces[key]  # type: ignore[index]
            if key != "empty":
                _reset(ws, *saved[key])  # type: ignore[index]
            for stale in (empty / ".logician" / "threads").glob("bench.jsonl*"):
                stale.unlink()  # an empty thread again; the store stays, as in the others
            km = KernelManager(
                kernel_name="logician",
                kernel_spec_manager=LogicianSpecManager(),
                transport="ipc",
                ip=str(root / "kernel" / "k"),
            )
            start = time.perf_counter()
            km.start_kernel(cwd=str(ws), env=env)
            kc = km.client()
            kc.start_channels()
            try:
                kc.wait_for_ready(timeout=300)
                reply = kc.execute_interactive("x = 1", timeout=300)
                samples.setdefault(key, []).append(time.perf_counter() - start)
                assert reply["content"]["status"] == "ok", reply["content"]
            finally:
                kc.stop_channels()
                km.shutdown_kernel(now=False)
    return {key: statistics.median(v) for key, v in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--appends", type=int, default=200, help="appends per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--open-rounds", type=int, default=5, help="rounds of the open times")
    parser.add_argument(
        "--kernel",
        action="store_true",
        help="also time kernel start -> first cell on a real kernel",
    )
    parser.add_argument("--kernel-rounds", type=int, default=3)
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

    print(
        f"ledger bench: 100 vs {args.entries:,} entries (built in {build_s:.1f} s; "
        f"{total:,} entries, {size_mb:.1f} MB on disk after appends)"
    )
    print(f"{'figure':44} {'value':>14}  {'target':>14}  status")
    rows = [
        ("append median @100 (buffered)", us(med[("small", False)]), "", ""),
        (f"append median @{args.entries:,} (buffered)", us(med[("big", False)]), "", ""),
        (
            "  ratio",
            f"{ratio:9.2f} x",
            f"<= {APPEND_RATIO_TARGET}",
            mark(ratio <= APPEND_RATIO_TARGET),
        ),
        ("append median @100 (durable, fsync)", us(med[("small", True)]), "", ""),
        (f"append median @{args.entries:,} (durable, fsync)", us(med[("big", True)]), "", ""),
        (
            "  ratio",
            f"{ratio_durable:9.2f} x",
            f"<= {APPEND_RATIO_TARGET}",
            mark(ratio_durable <= APPEND_RATIO_TARGET),
        ),
        (
            f"reopen + project @{total:,}",
            f"{reopen_s:9.2f} s ",
            f"<= {REOPEN_TARGET_S} s",
            mark(reopen_s <= REOPEN_TARGET_S),
        ),
        (f"read_entries + project @{total:,}", f"{pure_s:9.2f} s ", "", ""),
    ]
    for name, value, target, status in rows:
        print(f"{name:44} {value:>14}  {target:>14}  {status}")
    print(
        f"ratios: append_100k_vs_100={ratio:.2f} durable_append_100k_vs_100={ratio_durable:.2f} "
        f"reopen_project_s={reopen_s:.2f} read_project_s={pure_s:.2f}"
    )

    with tempfile.TemporaryDirectory() as tmp:
        opens = time_opens(Path(tmp), SIZES, args.open_rounds)
        starts = time_kernel_starts(Path(tmp), SIZES, args.kernel_rounds) if args.kernel else {}
    small, big = SIZES[0], SIZES[-1]
    print()
    print(f"opening a realistic thread before its first cell (best of {args.open_rounds})")
    print(f"{'entries':>10} {'with checkpoint':>16} {'full replay':>12} {'speed-up':>9}")
    for n in SIZES:
        with_cp, without = opens[(n, True)], opens[(n, False)]
        print(
            f"{n:>10,} {with_cp * 1000:13.1f} ms {without * 1000:9.1f} ms {without / with_cp:8.1f}x"
        )
    open_ratio = opens[(big, True)] / opens[(small, True)]
    print(
        f"{'open @100k with checkpoint':44} {opens[(big, True)] * 1000:11.1f} ms  "
        f"{'<= 300 ms':>14}  {mark(opens[(big, True)] <= OPEN_TARGET_S)}"
    )
    print(
        f"{'  vs @1k with checkpoint':44} {open_ratio:11.2f} x   {'<= 2 x':>14}  "
        f"{mark(open_ratio <= OPEN_RATIO_TARGET)}"
    )
    if starts:
        print(f"kernel start -> first cell reply (median of {args.kernel_rounds}, interleaved)")
        for key, value in starts.items():
            extra = (
                "" if key == "empty" else f"  (+{(value - starts['empty']) * 1000:.0f} ms vs empty)"
            )
            label = "empty thread" if key == "empty" else f"{key:,} entries"
            print(f"  {label:>16}: {value * 1000:8.0f} ms{extra}")
        print(f"  100k / 1k: {starts[big] / starts[small]:.2f} x (target <= 2 x)")
    print(
        f"ratios: open_100k_ms={opens[(big, True)] * 1000:.1f} "
        f"open_100k_full_replay_ms={opens[(big, False)] * 1000:.1f} "
        f"open_100k_vs_1k={open_ratio:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
