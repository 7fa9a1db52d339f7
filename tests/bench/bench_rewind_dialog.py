"""Benchmark: what the rewind dialog waits for before it opens, for a cell that wrote N files.

    .venv/bin/python tests/bench/bench_rewind_dialog.py [--files 20000] [--rounds 5]
                                                        [--tmpdir DIR]

1. `frames.preview` over the `logician` comm of a real kernel (the request the lab extension
   sends when the sidebar's Rewind button is clicked), for a cell that wrote N small files in
   `data/parts/`: the time from sending it to its answer, median over the rounds (goal
   <= 500 ms for 20,000 files, the dialog's whole opening; the browser test
   tests/browser/test_lab_long_rewind.py measures that in JupyterLab as `dialog_open_ms`).
2. The same preview in-process (`LedgerRewindSource.preview_target` on a `Workspace`), its
   process CPU time (the machine's load leaves it alone), after a capture by the inotify
   watcher and after one by full scan (the queue overflowed: injected, as 20,000 creates
   may do): the first preview, and the median of the rest. Also how many files the first
   one read (only those written within the racy window of the capture should be).

The old code can be measured from an exported tree: `PYTHONPATH=DIR` (the kernel inherits it).
Progress goes to stderr; a markdown table to stdout. Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import struct
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from queue import Empty
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_kernel import BenchKernel, _git, _loadavg, log  # noqa: E402

WRITE = (
    "import os\nos.makedirs('data/parts', exist_ok=True)\n"
    "for _i in range({n}):\n"
    "    with open(f'data/parts/p{{_i:05d}}.csv', 'w') as _f:\n"
    "        _f.write(f'{{_i}}\\n')\n"
)
CELL_ID = "writes-many"


def comm_previews(tmp: Path, n: int, rounds: int, anomalies: Counter[str]) -> list[float]:
    """Seconds from `frames.preview` sent to its answer, each round."""
    ws = tmp / "kernel-ws"
    ws.mkdir()
    (ws / "README.md").write_text("# bench\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "bench workspace")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(LOGICIAN_THREAD="bench", LOGICIAN_CONFIG_DIR=str(tmp / "user-config"))
    env.pop("JPY_SESSION_NAME", None)
    k = BenchKernel("logician", ws, env, anomalies)
    k.start()
    try:
        k.run("pass")
        log(f"kernel: a cell writes {n:,} files")
        msg = k.kc.session.msg(
            "execute_request",
            {"code": WRITE.format(n=n), "silent": False, "store_history": True},
            metadata={"cellId": CELL_ID},
        )
        k.kc.shell_channel.send(msg)
        while (
            k.kc.get_shell_msg(timeout=900)["parent_header"].get("msg_id")
            != msg["header"]["msg_id"]
        ):
            pass
        comm = "bench-dialog"
        k.kc.shell_channel.send(
            k.kc.session.msg("comm_open", {"comm_id": comm, "target_name": "logician", "data": {}})
        )
        wait_for(k, comm, "hello")
        took = []
        for r in range(rounds):
            time.sleep(1.0)  # as a user would: the sidebar's status pushes settle first
            data = {"v": 1, "type": "frames.preview", "cell_id": CELL_ID, "id": f"r{r}"}
            sent = time.perf_counter()
            k.kc.shell_channel.send(k.kc.session.msg("comm_msg", {"comm_id": comm, "data": data}))
            answer = wait_for(k, comm, "frames.preview")
            took.append(time.perf_counter() - sent)
            if answer.get("files_total") != n:
                anomalies[f"preview: {answer.get('error') or answer.get('files_total')}"] += 1
            log(f"kernel: preview {r + 1}/{rounds}: {took[-1] * 1000:,.0f} ms")
        return took
    finally:
        k.shutdown()


def wait_for(k: BenchKernel, comm: str, kind: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            m = k.kc.get_iopub_msg(timeout=0.5)
        except Empty:
            continue
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm:
            if m["content"]["data"].get("type") == kind:
                return dict(m["content"]["data"])
    raise RuntimeError(f"no {kind!r} message on the comm in {timeout:.0f} s")


def in_process(tmp: Path, n: int, rounds: int, *, full_scan: bool) -> tuple[float, float, int]:
    """(CPU s of the first preview, median CPU s of the others, files the first one read)."""
    import logician_kernel.snapshots.snapshot_objects as snapshot_objects
    from logician_kernel.agent.approvals import ApprovalBroker
    from logician_kernel.jupyter.comm import LogicianComms
    from logician_kernel.jupyter.rewind_source import LedgerRewindSource
    from logician_kernel.snapshots import watcher
    from logician_kernel.workspace import Workspace

    ws = tmp / ("scan-ws" if full_scan else "inotify-ws")
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "bench", "LOGICIAN_CONFIG_DIR": str(tmp / "cfg")}
    workspace = Workspace.open(ws, env)
    source = LedgerRewindSource(workspace, LogicianComms(ApprovalBroker(), dict))
    real_events, real_read = watcher.WorkspaceWatcher._read_events, snapshot_objects.path_state
    reads = [0]

    def overflowed(self: Any) -> Iterator[bytes]:
        yield struct.pack("iIII", -1, watcher.IN_Q_OVERFLOW, 0, 0)

    def counted(*args: Any) -> Any:
        reads[0] += 1
        return real_read(*args)

    try:
        if full_scan:
            watcher.WorkspaceWatcher._read_events = overflowed  # type: ignore[method-assign]
        with workspace.frame(1, CELL_ID, "write"):
            parts = ws / "data" / "parts"
            parts.mkdir(parents=True)
            for i in range(n):
                (parts / f"p{i:05d}.csv").write_text(f"{i}\n")
        watcher.WorkspaceWatcher._read_events = real_events  # type: ignore[method-assign]
        time.sleep(0.5)  # a user's click comes later than the racy window (100 ms)
        snapshot_objects.path_state = counted  # type: ignore[assignment]
        cpu = []
        for _ in range(rounds):
            source._grouped = None  # each round plans again, as a new dialog does
            start = time.process_time()
            answer = source.preview_target(None, CELL_ID)
            cpu.append(time.process_time() - start)
            if answer["files_total"] != n:
                raise RuntimeError(f"preview: {answer.get('error') or answer['files_total']}")
            if len(cpu) == 1:
                first_reads = reads[0]
        return cpu[0], statistics.median(cpu[1:] or cpu), first_reads
    finally:
        watcher.WorkspaceWatcher._read_events = real_events  # type: ignore[method-assign]
        snapshot_objects.path_state = real_read  # type: ignore[assignment]
        workspace.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=20_000, help="files the cell writes")
    p.add_argument("--rounds", type=int, default=5, help="previews per figure")
    p.add_argument("--tmpdir", help="where to create the workspaces (default: system tmp)")
    a = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="logician-dialog-", dir=a.tmpdir))
    anomalies: Counter[str] = Counter()
    load_before = _loadavg()
    try:
        comm = comm_previews(tmp, a.files, a.rounds, anomalies)
        log("in-process: capture by inotify")
        inotify = in_process(tmp, a.files, a.rounds, full_scan=False)
        log("in-process: capture by full scan")
        scan = in_process(tmp, a.files, a.rounds, full_scan=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = f"{a.files:,}"
    print(f"load average {load_before} before, {_loadavg()} after; {a.rounds} rounds")
    print("| figure | ms | goal |")
    print("|---|---|---|")
    print(
        f"| `frames.preview` over the comm, {n} files: median (min-max) | "
        f"{statistics.median(comm) * 1000:,.0f} ({min(comm) * 1000:,.0f}-"
        f"{max(comm) * 1000:,.0f}) | <= 500 |"
    )
    for label, (first, rest, read) in (("inotify", inotify), ("full scan", scan)):
        print(
            f"| in-process preview after a capture by {label}, CPU: first (files read) / "
            f"median of the rest | {first * 1000:,.0f} ({read:,}) / {rest * 1000:,.0f} | |"
        )
    for what, count in anomalies.items():
        print(f"anomaly ({count}x): {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
