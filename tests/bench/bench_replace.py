"""Benchmark: the floor of a rewind that puts back the old bytes of N rewritten files.

    .venv/bin/python tests/bench/bench_replace.py [--n 1000] [--rounds 5] [--dir DIR] [--sync]

A rewind replaces each file atomically (`snapshots/beneath.py`, `Beneath.write_file`): a new
file beside it (`O_CREAT | O_EXCL`), the bytes, its bits, then one `rename` over the old one,
so a reader, a kill -9 or a full disk never leaves a file half old and half new. The plain way
a rewind is compared with (`bench_many_files.py`: copying the old bytes back from a backup)
truncates each file and writes into it. This measures both on the same directory with no
kernel and no Python of ours between the system calls, in rounds alternating which goes first,
plus the atomic way with `renameat2(RENAME_EXCHANGE)` and an unlink (ext4 starts the new
file's write-back on a `rename` over an existing name; an exchange does not): the ratio of the
atomic replace to the in-place write is what a rewind of a rewrite costs over the plain way
before any work of ours. Progress goes to stderr, a markdown table and a `ratios:` line to
stdout. Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_RENAME_EXCHANGE = 2


def _libc_exchange() -> Callable[[int, str, str], None] | None:
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        return None

    def exchange(dir_fd: int, a: str, b: str) -> None:
        if libc.renameat2(dir_fd, a.encode(), dir_fd, b.encode(), _RENAME_EXCHANGE) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    return exchange


def prepare(directory: str, n: int) -> int:
    """N files of the "rewritten" version, as the cell left them; returns the directory's fd."""
    os.mkdir(directory)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(n):
        f = os.open(f"f{i:05d}.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(f, f"second version {i}\n".encode())
        os.close(f)
    return fd


def in_place(dir_fd: int, n: int) -> None:
    for i in range(n):
        f = os.open(f"f{i:05d}.txt", os.O_WRONLY | os.O_TRUNC, dir_fd=dir_fd)
        os.write(f, f"first {i}\n".encode())
        os.close(f)


def new_file_then(put: Callable[[int, str, str], None]) -> Callable[[int, int], None]:
    """Each file written anew beside the old one, then `put(dir_fd, tmp, name)` in its place."""

    def run(dir_fd: int, n: int) -> None:
        for i in range(n):
            name = f"f{i:05d}.txt"
            tmp = f".{name}.restore"
            f = os.open(tmp, _NEW, 0o600, dir_fd=dir_fd)
            os.write(f, f"first {i}\n".encode())
            os.fchmod(f, 0o644)
            os.close(f)
            put(dir_fd, tmp, name)

    return run


def rename_over(dir_fd: int, tmp: str, name: str) -> None:
    os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def exchange_and_unlink(
    exchange: Callable[[int, str, str], None],
) -> Callable[[int, str, str], None]:
    def put(dir_fd: int, tmp: str, name: str) -> None:
        exchange(dir_fd, tmp, name)
        os.unlink(tmp, dir_fd=dir_fd)

    return put


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="files per round (default 1000)")
    p.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    p.add_argument("--dir", help="where to make the files (default: system tmp)")
    p.add_argument(
        "--sync",
        action="store_true",
        help="sync the machine's file systems before each way (default: the files just written,"
        " as in bench_many_files.py, where a rewind follows the rewrite at once)",
    )
    a = p.parse_args(argv)
    ways: dict[str, Callable[[int, int], None]] = {
        "truncate and write in place (the plain way)": in_place,
        "new file and rename over (a rewind)": new_file_then(rename_over),
    }
    exchange = _libc_exchange()
    if exchange is not None:
        ways["new file, exchange and unlink"] = new_file_then(exchange_and_unlink(exchange))
    root = tempfile.mkdtemp(prefix="logician-replace-", dir=a.dir)
    times: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for r in range(a.rounds):
            order = list(ways)
            order = order[r % len(order) :] + order[: r % len(order)]
            for name in order:
                directory = os.path.join(root, f"r{r}-{len(times[name])}-{order.index(name)}")
                fd = prepare(directory, a.n)
                try:
                    if a.sync:  # the rewritten files written back, as a cell's are later
                        os.sync()
                    t0 = time.perf_counter()
                    ways[name](fd, a.n)
                    times[name].append(time.perf_counter() - t0)
                finally:
                    os.close(fd)
                shutil.rmtree(directory)
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    plain = statistics.median(times[next(iter(ways))])
    print(f"| way ({a.n:,} files, median of {a.rounds}) | ms | x the plain way |")
    print("|---|---|---|")
    ratios = []
    for name, xs in times.items():
        med = statistics.median(xs)
        print(f"| {name} | {med * 1000:,.0f} | {med / plain:.2f}x |")
        ratios.append(f"{name}={med / plain:.2f}")
    print("ratios: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
