"""Benchmark: the first cell after kernel start, with MCP servers still connecting.

    .venv/bin/python tests/bench/bench_mcp_start.py [--repeat N]

Two Logician kernels per round, started side by side and interleaved: one with no MCP servers,
one with a server that never answers `initialize` (tests/mcp_servers/servers.py hang) and a
working stdio server. For each, the time from "kernel ready" to the reply of its first cell
(`print(1)`), and from spawn to that reply. Target: median ratio (MCP / none) <= 1.2 - discovery
must not delay a cell. Figures are from whatever machine runs it (loaded or not); the exit
status is 0 unless the benchmark itself crashes. Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from kernel_harness import Kernel, make_kernel_env  # noqa: E402
from mcp_servers.helpers import stdio_server  # noqa: E402


def _workspace(root: Path, name: str, servers: dict[str, dict]) -> tuple[Path, dict[str, str]]:
    ws = root / name / "ws"
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    env = make_kernel_env(root / name)
    user = Path(env["LOGICIAN_CONFIG_DIR"])
    user.mkdir(parents=True)
    lines = []
    for server, table in servers.items():
        lines.append(f"[mcp.servers.{server}]")
        lines += [f"{k} = {repr(v).replace(chr(39), chr(34))}" for k, v in table.items()]
    (user / "config.toml").write_text("\n".join(lines) + "\n")
    return ws, env


def _first_cell(ws: Path, env: dict[str, str]) -> tuple[float, float, Kernel]:
    spawned = time.perf_counter()
    k = Kernel(ws, env)
    ready = time.perf_counter()
    r = k.run("print(1)")
    done = time.perf_counter()
    assert r.status == "ok", r.text
    return done - ready, done - spawned, k


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    servers = {
        "hung": stdio_server("hang", connect_timeout_seconds=60),
        "notes": stdio_server(),
    }
    cell: dict[str, list[float]] = {"none": [], "mcp": []}
    total: dict[str, list[float]] = {"none": [], "mcp": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            order = ("none", "mcp") if i % 2 == 0 else ("mcp", "none")
            for kind in order:
                ws, env = _workspace(Path(tmp) / str(i), kind, servers if kind == "mcp" else {})
                first, whole, k = _first_cell(ws, env)
                if kind == "mcp":
                    shown = k.run("%logician mcp").text
                    assert "connecting" in shown, shown  # the hung server was still connecting
                k.shutdown()
                cell[kind].append(first)
                total[kind].append(whole)
                print(
                    f"[bench] round {i} {kind}: first cell {first * 1000:.0f} ms, "
                    f"spawn to reply {whole * 1000:.0f} ms",
                    file=sys.stderr,
                    flush=True,
                )
    med = {k: statistics.median(v) for k, v in cell.items()}
    med_total = {k: statistics.median(v) for k, v in total.items()}
    ratio = med["mcp"] / med["none"]
    print("| figure | no MCP | hung + stdio MCP | ratio | target |")
    print("|---|---|---|---|---|")
    print(
        f"| first cell after ready (median) | {med['none'] * 1000:.0f} ms | "
        f"{med['mcp'] * 1000:.0f} ms | {ratio:.2f} | <= 1.2 {'PASS' if ratio <= 1.2 else 'MISS'} |"
    )
    print(
        f"| spawn to first reply (median) | {med_total['none'] * 1000:.0f} ms | "
        f"{med_total['mcp'] * 1000:.0f} ms | {med_total['mcp'] / med_total['none']:.2f} | - |"
    )
    print(f"ratios: first_cell={ratio:.2f}")


if __name__ == "__main__":
    main()
