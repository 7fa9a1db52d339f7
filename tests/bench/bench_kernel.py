"""Benchmark: Logician kernel vs plain ipykernel, measured side by side in one run.

    .venv/bin/python tests/bench/bench_kernel.py [--quick] [--sizes 1000,10000,100000] [--repeat N]

Figures (targets in the table; PASS/MISS is informational, the exit status is 0 unless the
benchmark itself crashes):

1. Empty-cell round trip (`pass`: execute_request -> execute_reply + iopub idle), median over
   N after warm-up, Logician vs ipykernel in identical small git workspaces; ratio <= 1.5.
2. Per-cell frame overhead in workspaces of 1k/10k/100k small files (dirs of 100 files, one
   commit): median round trip of a cell writing one file, Logician minus ipykernel. Also the
   first cell after kernel ready (Logician minus ipykernel) and the spawn -> ready time.
   Also a cell that changes no file (`_y = N * 2`), Logician minus ipykernel: no git process,
   no fsync (target <= 3 ms).
3. `%logician rewind --last` of a cell that modified 10 files, in the 1k workspace.
4. The frame overhead of 2. again with `checkpoints.change_detection = "scan"` (the stat scan
   used on network volumes), against the same ipykernel, as a ratio next to inotify's; and
   the same with a pause before each cell, longer than the scan's one-drain window (the
   idle kernel's looks between cells keep it to one walk).

Both kernels run at the same time and their cells are interleaved, so background load hits
both alike. Workspaces live in a temporary directory removed at the end of the run.
Progress goes to stderr; the table and a one-line `ratios:` summary go to stdout.
Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PAUSE_S = 1.2  # > scan_detector.FRESH_S: only the idle looks (idle_look.py) spare a walk
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

try:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    from logician_kernel.jupyter.runner import LogicianSpecManager
except ImportError as exc:  # pragma: no cover - wrong interpreter
    sys.exit(f"bench_kernel: {exc}; run it with the project venv: .venv/bin/python {__file__}")

MODIFY_ONE = "open('d0001/f001.txt','w').write(str({i}))"
NO_CHANGE = "_y = {i} * 2"
MODIFY_TEN = "for _k in range(10): open(f'd0002/f{{_k:03d}}.txt','w').write('x{i}')"
FILES_PER_DIR = 100
START_TIMEOUT = 900.0
CELL_TIMEOUT = 900.0


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- workspaces


def _git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "gc.auto=0", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
    )


def file_content(d: int, f: int) -> str:
    return f"file {d} {f}\n"


def make_workspace(root: Path, n_files: int) -> Path:
    """A git repo of `n_files` small files, d0000/f000.txt ..., 100 per directory, one commit."""
    root.mkdir(parents=True)
    if n_files == 0:  # the "few files" workspace of the round-trip figure
        (root / "README.md").write_text("# bench\n")
        (root / "src").mkdir()
        (root / "src" / "a.py").write_text("A = 1\n")
        (root / "src" / "b.py").write_text("B = 2\n")
        (root / "data.csv").write_text("x,y\n1,2\n")
    else:
        flags, last = os.O_WRONLY | os.O_CREAT | os.O_TRUNC, time.monotonic()
        for i in range(n_files):
            d, f = divmod(i, FILES_PER_DIR)
            if f == 0:
                os.mkdir(root / f"d{d:04d}")
                if time.monotonic() - last > 10:
                    log(f"  {i}/{n_files} files written")
                    last = time.monotonic()
            fd = os.open(root / f"d{d:04d}" / f"f{f:03d}.txt", flags, 0o644)
            try:
                os.write(fd, file_content(d, f).encode())
            finally:
                os.close(fd)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "bench workspace")
    return root


# --------------------------------------------------------------------------- kernels


@dataclass
class Reply:
    seconds: float
    content: dict[str, Any]
    messages: list[dict[str, Any]]

    def stream(self, name: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    @property
    def text(self) -> str:
        parts = []
        for m in self.messages:
            kind, c = m["msg_type"], m["content"]
            if kind == "stream":
                parts.append(c["text"])
            elif kind in ("display_data", "execute_result"):
                parts.append(c["data"].get("text/plain", ""))
            elif kind == "error":
                parts.append(f"{c['ename']}: {c['evalue']}")
        return "\n".join(parts)


@dataclass
class BenchKernel:
    label: str
    cwd: Path
    env: dict[str, str]
    anomalies: Counter[str]
    start_seconds: float = 0.0
    km: Any = None
    kc: Any = None

    @property
    def ws(self) -> str:
        return self.cwd.parent.name

    def start(self) -> None:
        if self.label.startswith("logician"):
            self.km = KernelManager(
                kernel_name="logician", kernel_spec_manager=LogicianSpecManager()
            )
        else:
            self.km = KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager())
        t0 = time.perf_counter()
        self.km.start_kernel(cwd=str(self.cwd), env=self.env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=START_TIMEOUT)
        self.start_seconds = time.perf_counter() - t0

    def run(self, code: str, *, timeout: float = CELL_TIMEOUT, expect_ok: bool = True) -> Reply:
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        msg = self.kc.session.msg("execute_request", content)
        msg_id = msg["header"]["msg_id"]
        t0 = time.perf_counter()
        self.kc.shell_channel.send(msg)
        messages: list[dict[str, Any]] = []
        while True:
            m = self.kc.get_iopub_msg(timeout=timeout)
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
            messages.append(m)
        while True:
            r = self.kc.get_shell_msg(timeout=timeout)
            if r["parent_header"].get("msg_id") == msg_id:
                break
        reply = Reply(time.perf_counter() - t0, r["content"], messages)
        if expect_ok and reply.content.get("status") != "ok":
            shape = re.sub(r"\d+", "N", code)
            self.anomalies[
                f"{self.label} in {self.ws}: cell {shape!r} -> "
                f"{reply.content.get('status')}: {reply.text.strip()[:300]}"
            ] += 1
        err = reply.stream("stderr").strip()
        if err and self.label == "logician":
            for line in err.splitlines():
                if line.strip():
                    self.anomalies[f"logician in {self.ws}: stderr: {line[:300]}"] += 1
        return reply

    def shutdown(self) -> None:
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km is not None and self.km.has_kernel:
                self.km.shutdown_kernel(now=False)
        except Exception as exc:  # noqa: BLE001 - best effort at teardown
            self.anomalies[f"{self.label} in {self.ws}: shutdown failed: {exc!r}"] += 1


def median_ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000.0


# --------------------------------------------------------------------------- measurements


@dataclass
class Row:
    figure: str
    logician: float | None
    ipykernel: float | None
    value: float | None
    unit: str
    target: float | None = None  # value must be <= target

    @property
    def result(self) -> str:
        if self.target is None or self.value is None:
            return "-"
        return "PASS" if self.value <= self.target else "MISS"


class Bench:
    def __init__(
        self, sizes: list[int], repeat: int, warmup: int, rewind_repeat: int, tmpdir: str | None
    ) -> None:
        self.sizes, self.repeat, self.warmup = sizes, repeat, warmup
        self.rewind_repeat = rewind_repeat
        self.tmp = Path(tempfile.mkdtemp(prefix="logician-bench-", dir=tmpdir))
        self.env = dict(os.environ)
        self.env["LOGICIAN_THREAD"] = "bench"
        self.env["LOGICIAN_CONFIG_DIR"] = str(self.tmp / "user-config")
        self.env.pop("JPY_SESSION_NAME", None)
        self.anomalies: Counter[str] = Counter()
        self.rows: list[Row] = []
        self.summary: dict[str, str] = {}
        self.live: list[BenchKernel] = []

    def kernel(self, label: str, cwd: Path, env: dict[str, str] | None = None) -> BenchKernel:
        k = BenchKernel(label, cwd, env or self.env, self.anomalies)
        self.live.append(k)
        return k

    def stop(self, *kernels: BenchKernel) -> None:
        for k in kernels:
            k.shutdown()
            if k in self.live:
                self.live.remove(k)

    def workspace_pair(self, n_files: int) -> tuple[Path, Path]:
        name = f"ws-{n_files}" if n_files else "ws-small"
        t0 = time.perf_counter()
        log(f"generating two workspaces of {n_files or 'a few'} files ...")
        a = make_workspace(self.tmp / name / "logician", n_files)
        b = self.tmp / name / "ipykernel"  # an exact copy, .git included
        subprocess.run(["cp", "-a", str(a), str(b)], check=True)
        log(f"  done in {time.perf_counter() - t0:.1f}s")
        return a, b

    def interleaved(
        self, lk: BenchKernel, ik: BenchKernel, code: str, n: int, *, pause: float = 0.0
    ) -> tuple[list[float], list[float]]:
        lt: list[float] = []
        it: list[float] = []
        for i in range(n):
            first, second = (lk, ik) if i % 2 == 0 else (ik, lk)
            for k in (first, second):
                time.sleep(pause)
                r = k.run(code.format(i=i + 1000))
                (lt if k is lk else it).append(r.seconds)
        return lt, it

    # 1 -------------------------------------------------------------------------------------
    def round_trip(self) -> None:
        lws, iws = self.workspace_pair(0)
        lk, ik = self.kernel("logician", lws), self.kernel("ipykernel", iws)
        log("round trip: starting kernels")
        ik.start()
        lk.start()
        for k in (lk, ik):
            for _ in range(self.warmup):
                k.run("pass")
        log(f"round trip: {self.repeat} interleaved `pass` cells per kernel")
        lt, it = self.interleaved(lk, ik, "pass", self.repeat)
        self.stop(lk, ik)
        lm, im = median_ms(lt), median_ms(it)
        self.rows.append(
            Row("empty-cell round trip, median ms (ratio L/I)", lm, im, lm / im, "x", 1.5)
        )
        self.summary["round_trip"] = f"{lm / im:.2f}"

    # 2 (+3 in the 1k workspace) -------------------------------------------------------------
    def frames(self, n_files: int) -> None:
        tag = _tag(n_files)
        lws, iws = self.workspace_pair(n_files)
        sws = iws.with_name("logician-scan")  # a third identical copy, for the stat scan
        subprocess.run(["cp", "-a", str(iws), str(sws)], check=True)
        lk, ik = self.kernel("logician", lws), self.kernel("ipykernel", iws)
        first: dict[str, float] = {}
        # One after the other: a first cell must not compete with the other kernel's start.
        for k in (ik, lk):
            log(f"{tag}: starting {k.label} and running its first cell")
            k.start()
            first[k.label] = k.run(MODIFY_ONE.format(i=0)).seconds
            log(
                f"  {k.label}: spawn->ready {k.start_seconds:.2f}s, first cell {first[k.label] * 1000:.0f} ms"
            )
        for k in (lk, ik):
            for w in range(self.warmup):
                k.run(MODIFY_ONE.format(i=w + 1))
        log(f"{tag}: {self.repeat} interleaved one-file cells per kernel")
        lt, it = self.interleaved(lk, ik, MODIFY_ONE, self.repeat)
        lm, im = median_ms(lt), median_ms(it)
        target = {1000: 25.0, 10000: 60.0, 100000: 400.0}.get(n_files)
        self.rows.append(
            Row(f"frame overhead {tag}, median ms (L-I)", lm, im, lm - im, "ms", target)
        )
        self.summary[f"frame_{tag}"] = f"{lm - im:.1f}ms"
        self.summary[f"inotify_{tag}"] = f"{lm / im:.2f}x"
        log(f"{tag}: {self.repeat} interleaved cells that change no file, per kernel")
        nl, ni = self.interleaved(lk, ik, NO_CHANGE, self.repeat)
        nlm, nim = median_ms(nl), median_ms(ni)
        self.rows.append(
            Row(f"cell changing no file {tag}, median ms (L-I)", nlm, nim, nlm - nim, "ms", 3.0)
        )
        self.summary[f"no_change_{tag}"] = f"{nlm - nim:.1f}ms"
        self.scan(n_files, sws, ik, lm)
        fl, fi = first["logician"] * 1000, first["ipykernel"] * 1000
        self.rows.append(
            Row(f"first cell after ready {tag}, ms (L-I)", fl, fi, fl - fi, "ms", 1000.0)
        )
        self.summary[f"first_{tag}"] = f"{fl - fi:.0f}ms"
        sl, si = lk.start_seconds * 1000, ik.start_seconds * 1000
        self.rows.append(Row(f"kernel spawn->ready {tag}, ms (L-I)", sl, si, sl - si, "ms"))
        self.stop(ik)
        if n_files == 1000:
            self.rewind(lk)
        self.stop(lk)

    def scan(self, n_files: int, sws: Path, ik: BenchKernel, inotify_ms: float) -> None:
        """The same one-file cells with `checkpoints.change_detection = "scan"` (shared volumes)."""
        tag = _tag(n_files)
        env = {**self.env, "LOGICIAN_CHECKPOINTS__CHANGE_DETECTION": "scan"}
        sk = self.kernel("logician-scan", sws, env)
        log(f"{tag}: starting logician-scan")
        sk.start()
        sk.run(MODIFY_ONE.format(i=0))
        for w in range(self.warmup):
            sk.run(MODIFY_ONE.format(i=w + 1))
        log(f"{tag}: {self.repeat} interleaved one-file cells, scan vs ipykernel")
        st, it = self.interleaved(sk, ik, MODIFY_ONE, self.repeat)
        sm, im = median_ms(st), median_ms(it)
        target = 80.0 if n_files == 10000 else None
        self.rows.append(
            Row(f"frame overhead {tag} with scan, median ms (S-I)", sm, im, sm - im, "ms", target)
        )
        self.rows.append(
            Row(f"  scan / ipykernel {tag} (inotify: {inotify_ms / im:.2f})", sm, im, sm / im, "x")
        )
        self.summary[f"scan_{tag}"] = f"{sm / im:.2f}x({sm - im:.1f}ms)"
        # Cells run back to back above, so the scan reads the workspace once per cell; after
        # a pause longer than scan_detector.FRESH_S it is once too only thanks to the looks
        # the idle kernel takes (idle_look.py), else it reads before and after the cell.
        pauses = max(3, self.repeat // 2)
        log(f"{tag}: {pauses} scan cells, each after a {PAUSE_S} s pause, vs ipykernel")
        st, it = self.interleaved(sk, ik, MODIFY_ONE, pauses, pause=PAUSE_S)
        pm, pi = median_ms(st), median_ms(it)
        self.rows.append(Row(f"  with scan, cells {PAUSE_S} s apart (S-I)", pm, pi, pm - pi, "ms"))
        self.summary[f"scan_paused_{tag}"] = f"{pm - pi:.1f}ms"
        self.stop(sk)

    def rewind(self, lk: BenchKernel) -> None:
        log(f"rewind: {self.rewind_repeat} x (modify 10 files, `%logician rewind --last`)")
        base = [lk.run("%logician help").seconds for _ in range(max(3, self.rewind_repeat))]
        times: list[float] = []
        for i in range(self.rewind_repeat):
            lk.run(MODIFY_TEN.format(i=i))
            r = lk.run("%logician rewind --last")
            times.append(r.seconds)
            restored = sum(1 for ln in r.text.splitlines() if ln.strip().startswith("restored"))
            on_disk = [(lk.cwd / "d0002" / f"f{k:03d}.txt").read_text() for k in range(10)]
            wrong = [k for k in range(10) if on_disk[k] != file_content(2, k)]
            if restored != 10 or wrong:
                self.anomalies[
                    f"rewind #{i}: {restored} paths reported restored, files not "
                    f"restored on disk: {wrong}; output: {r.text.strip()[:300]}"
                ] += 1
        rm, bm = median_ms(times), median_ms(base)
        self.rows.append(Row("rewind --last of 10 files (1k), median ms", rm, None, rm, "ms", 15.0))
        self.rows.append(
            Row("  of which beyond `%logician help` cell, ms", rm - bm, None, rm - bm, "ms")
        )
        self.summary["rewind10"] = f"{rm:.1f}ms"

    def run(self) -> None:
        try:
            self.round_trip()
            for n in self.sizes:
                self.frames(n)
        finally:
            for k in list(self.live):
                self.stop(k)
            log("removing workspaces")
            shutil.rmtree(self.tmp, ignore_errors=True)


def _tag(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def _fmt(x: float | None, unit: str = "ms") -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if unit == "x" else f"{x:.1f}"


def print_table(bench: Bench, load_before: str, load_after: str, wall: float) -> None:
    w = max(len(r.figure) for r in bench.rows)
    head = (
        f"{'figure':<{w}}  {'logician':>9}  {'ipykernel':>9}  {'value':>9}  {'target':>9}  result"
    )
    print(
        f"Logician Kernel benchmark  (repeat={bench.repeat}, warm-up={bench.warmup}, "
        f"cpus={os.cpu_count()}, loadavg {load_before} -> {load_after}, {wall:.0f}s)"
    )
    print(head)
    print("-" * len(head))
    for r in bench.rows:
        target = "-" if r.target is None else ("<= " + _fmt(r.target, r.unit))
        value = _fmt(r.value, r.unit) + (" x" if r.unit == "x" else "")
        print(
            f"{r.figure:<{w}}  {_fmt(r.logician):>9}  {_fmt(r.ipykernel):>9}  {value:>9}  "
            f"{target:>9}  {r.result}"
        )
    print("(logician/ipykernel columns are ms; value = the figure compared with its target)")
    if bench.anomalies:
        print("kernel notices and failures (stderr lines, failed cells; xN = how many cells):")
        for a, n in list(bench.anomalies.items())[:30]:
            print(f"  - x{n} {a}")
    else:
        print("kernel notices and failures: none (every cell ok, nothing on stderr)")
    print("ratios: " + " ".join(f"{k}={v}" for k, v in bench.summary.items()))


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="sizes 1000,10000 and repeat 10")
    p.add_argument("--sizes", help="comma-separated workspace sizes (default 1000,10000,100000)")
    p.add_argument("--repeat", type=int, help="cells per median (default 50; 10 with --quick)")
    p.add_argument("--tmpdir", help="where to create the workspaces (default: the system tmp dir)")
    p.add_argument("--warmup", type=int, default=3, help="warm-up cells per kernel (default 3)")
    args = p.parse_args(argv)
    sizes_s = args.sizes or ("1000,10000" if args.quick else "1000,10000,100000")
    sizes = [int(s.replace("_", "")) for s in sizes_s.split(",") if s.strip()]
    repeat = args.repeat or (10 if args.quick else 50)
    if shutil.which("git") is None:
        sys.exit("bench_kernel: git not found")
    try:
        KernelSpecManager().get_kernel_spec("python3")
    except Exception as exc:  # noqa: BLE001
        sys.exit(
            f"bench_kernel: ipykernel's python3 kernelspec not found ({exc}); "
            f"use the venv interpreter"
        )
    load_before, t0 = _loadavg(), time.perf_counter()
    bench = Bench(sizes, repeat, args.warmup, rewind_repeat=10, tmpdir=args.tmpdir)
    bench.run()
    print_table(bench, load_before, _loadavg(), time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
