"""The first full snapshot of a workspace that is not a git repository (issue 17).

Builds workspaces of small files (100 per directory, as bench_kernel.py does) with no git
repository, and times the snapshotter's first full scan into a fresh private store:

- `packed`: as the kernel does it (blobs packed by parallel `git fast-import` first,
  first_snapshot.py), and `loose`: the way before it (every blob a loose object written by
  `update-index --add`), alternated round by round so machine load hits both alike;
- `cp -r` of the same tree and `git add -A` of it into a fresh repository, as yardsticks;
- the second full scan after the first (git's stat cache: it must be cheap and list nothing).

With `--kernel`, also a real kernel on the largest workspace: the reply time of a cell that
touches no file, sent as soon as the kernel is ready, and whether the first snapshot was still
running when it replied (it must not have waited for it).

    .venv/bin/python tests/bench/bench_first_snapshot.py                 # 10k and 100k files
    .venv/bin/python tests/bench/bench_first_snapshot.py --sizes 10000 --repeat 3 --kernel
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from logician_kernel.snapshots import first_snapshot  # noqa: E402
from logician_kernel.snapshots.git_snapshot import GitSnapshotter  # noqa: E402
from logician_kernel.snapshots.large_files import LargeFiles, LargeLimits  # noqa: E402
from logician_kernel.snapshots.large_store import LargeFileStore  # noqa: E402

FILES_PER_DIR = 100


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def make_plain_workspace(root: Path, n_files: int) -> Path:
    """`n_files` small files, d0000/f000.txt ..., 100 per directory; no git repository."""
    root.mkdir(parents=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    for i in range(n_files):
        d, f = divmod(i, FILES_PER_DIR)
        if f == 0:
            os.mkdir(root / f"d{d:04d}")
        fd = os.open(root / f"d{d:04d}" / f"f{f:03d}.txt", flags, 0o644)
        try:
            os.write(fd, f"file {d} {f}\n".encode())
        finally:
            os.close(fd)
    os.sync()  # the first round must not pay for writing the tree back
    return root


def _snapshotter(ws: Path) -> GitSnapshotter:
    shutil.rmtree(ws / ".logician", ignore_errors=True)
    state = ws / ".logician"
    large = LargeFiles(ws, LargeFileStore(state / "large"), LargeLimits())
    snap = GitSnapshotter(ws, state / "git", max_file_bytes=2 * 1024**3, large=large)
    snap.ensure_store()
    return snap


def first_scan(ws: Path, *, packed: bool) -> tuple[float, float, str, bytes]:
    """(first full scan s, second full scan s, tree, what the second scan's ls-files listed)."""
    snap = _snapshotter(ws)
    saved = first_snapshot.PREPACK_MIN_PATHS
    first_snapshot.PREPACK_MIN_PATHS = saved if packed else sys.maxsize
    try:
        t = time.perf_counter()
        tree = snap.snapshot().tree
        first = time.perf_counter() - t
    finally:
        first_snapshot.PREPACK_MIN_PATHS = saved
    t = time.perf_counter()
    listed = snap._git(
        "ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"
    )
    again = snap._full_scan().tree
    second = time.perf_counter() - t
    assert again == tree, "the second full scan changed the tree"
    snap.close()
    return first, second, tree, listed


def cp_r(ws: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-cp-") as tmp:
        t = time.perf_counter()
        subprocess.run(["cp", "-r", str(ws), f"{tmp}/copy"], check=True)
        return time.perf_counter() - t


def git_add(ws: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-git-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env["GIT_INDEX_FILE"] = f"{tmp}/index"
        base = ["git", f"--git-dir={tmp}/repo", f"--work-tree={ws}"]
        subprocess.run(["git", "init", "-q", "--bare", f"{tmp}/repo"], check=True, env=env)
        t = time.perf_counter()
        subprocess.run([*base, "add", "-A", "--", ".", ":!.logician"], check=True, env=env, cwd=ws)
        return time.perf_counter() - t


def kernel_no_file_cell(ws: Path, tmp: Path) -> tuple[float, bool]:
    """Reply time of a no-file cell sent right after start; whether the snapshot still ran."""
    from kernel_harness import Kernel, make_kernel_env

    shutil.rmtree(ws / ".logician", ignore_errors=True)
    k = Kernel(ws, make_kernel_env(tmp))
    try:
        t = time.perf_counter()
        r = k.run(
            "print(get_ipython().kernel.logician.checkpoints.warming_up)",
            timeout=600,
        )
        took = time.perf_counter() - t
        return took, "True" in r.stdout
    finally:
        k.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3, help="rounds per size (median)")
    parser.add_argument("--kernel", action="store_true", help="also the real-kernel row")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-first-snapshot-") as tmp_name:
        tmp = Path(tmp_name)
        for n in args.sizes:
            log(f"building {n} files")
            ws = make_plain_workspace(tmp / f"ws{n}", n)
            packed, loose, seconds, cps, adds = [], [], [], [], []
            for i in range(args.repeat):
                order = (True, False) if i % 2 == 0 else (False, True)
                for is_packed in order:
                    first, second, _tree, listed = first_scan(ws, packed=is_packed)
                    (packed if is_packed else loose).append(first)
                    if is_packed:
                        seconds.append(second)
                        assert listed == b"", f"the second scan listed {listed[:200]!r}"
                    log(f"  {n}: {'packed' if is_packed else 'loose'} {first:.2f} s")
                cps.append(cp_r(ws))
                adds.append(git_add(ws))
            med = statistics.median
            rows.append((n, med(loose), med(packed), med(seconds), med(cps), med(adds)))
            if args.kernel and n == max(args.sizes):
                reply, still = kernel_no_file_cell(ws, tmp)
                rows.append((n, reply, still))
            shutil.rmtree(ws)
    load_end = os.getloadavg()[0]
    print(
        f"\nfirst full snapshot, no git repository ({args.repeat} rounds, medians; "
        f"load average {load:.1f} -> {load_end:.1f}, {os.cpu_count()} cores)"
    )
    print(
        "| files | before (loose objects) | packed (now) | ratio | second full scan | "
        "`cp -r` | `git add -A` | packed / cp -r | packed / git add |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        if len(row) == 3:
            n, reply, still = row
            print(
                f"\nkernel, {n} files: a no-file cell sent at ready replied in {reply * 1000:.0f} "
                f"ms; first snapshot still running then: {still}"
            )
            continue
        n, lo, pk, sec, cp, add = row
        print(
            f"| {n:,} | {lo:.2f} s | {pk:.2f} s | {pk / lo:.2f}x | {sec:.2f} s | {cp:.2f} s | "
            f"{add:.2f} s | {pk / cp:.2f}x | {pk / add:.2f}x |"
        )


if __name__ == "__main__":
    main()
