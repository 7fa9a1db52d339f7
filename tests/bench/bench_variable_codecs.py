"""Benchmark: which compression pays on pickled kernel values (the variables store's codec).

    .venv/bin/python tests/bench/bench_variable_codecs.py      # needs zstandard and lz4

Pickles (protocol 5, buffers out of band, as the variables store does) a 50 MB array of
normal floats, a 1M-row mixed DataFrame (ids, prices with two decimals, small integers, five
city names, timestamps) and 20 MB of random bytes; compresses every segment with zlib (levels 1
and 6, the standard library), zstd (levels -3, -1, 1 and 3) and lz4 (frame, default level); prints the
stored size against the raw one and the compression and decompression speed (best of two, MB of
raw data per second). Not a pytest module (file name bench_*.py).
"""

from __future__ import annotations

import os
import pickle
import sys
import time
import zlib

try:
    import lz4.frame
    import numpy as np
    import pandas as pd
    import zstandard
except ImportError as exc:  # pragma: no cover - an optional package is missing
    sys.exit(f"bench_variable_codecs: {exc}; pip install zstandard lz4 numpy pandas")


def values() -> dict[str, object]:
    rng = np.random.default_rng(0)
    n = 1_000_000
    df = pd.DataFrame(
        {
            "id": np.arange(n),
            "price": np.round(rng.normal(100, 15, n), 2),
            "qty": rng.integers(1, 50, n),
            "city": rng.choice(["Paris", "Lyon", "Nantes", "Lille", "Nice"], n),
            "when": pd.date_range("2020-01-01", periods=n, freq="min"),
        }
    )
    return {
        "float64 array 50 MB (normal)": rng.normal(size=50_000_000 // 8),
        "DataFrame 1M rows mixed": df,
        "random bytes 20 MB": os.urandom(20_000_000),
    }


def segments(obj: object) -> list[memoryview]:
    buffers: list[memoryview] = []
    main = pickle.dumps(obj, protocol=5, buffer_callback=lambda b: buffers.append(b.raw()))
    return [memoryview(main), *buffers]


CODECS = {
    "zlib-1": (lambda b: zlib.compress(b, 1), zlib.decompress),
    "zlib-6": (lambda b: zlib.compress(b, 6), zlib.decompress),
    "zstd--3": (
        zstandard.ZstdCompressor(level=-3).compress,
        zstandard.ZstdDecompressor().decompress,
    ),
    "zstd--1": (
        zstandard.ZstdCompressor(level=-1).compress,
        zstandard.ZstdDecompressor().decompress,
    ),
    "zstd-1": (
        zstandard.ZstdCompressor(level=1).compress,
        zstandard.ZstdDecompressor().decompress,
    ),
    "zstd-3": (
        zstandard.ZstdCompressor(level=3).compress,
        zstandard.ZstdDecompressor().decompress,
    ),
    "lz4": (lz4.frame.compress, lz4.frame.decompress),
}


def main() -> int:
    print("value | codec | raw MB | stored MB | ratio | compress MB/s | decompress MB/s")
    for name, obj in values().items():
        parts = segments(obj)
        raw = sum(p.nbytes for p in parts)
        for codec, (pack, unpack) in CODECS.items():
            best_pack = best_unpack = float("inf")
            for _ in range(2):
                start = time.perf_counter()
                out = [pack(p) for p in parts]
                best_pack = min(best_pack, time.perf_counter() - start)
                start = time.perf_counter()
                for o in out:
                    unpack(o)
                best_unpack = min(best_unpack, time.perf_counter() - start)
            stored = sum(len(o) for o in out)
            print(
                f"{name} | {codec} | {raw / 1e6:.1f} | {stored / 1e6:.1f} | {stored / raw:.2f} | "
                f"{raw / 1e6 / best_pack:.0f} | {raw / 1e6 / best_unpack:.0f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
