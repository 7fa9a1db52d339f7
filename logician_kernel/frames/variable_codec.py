"""Compression of variable blobs' segments: zstd (level 1) where it pays, raw bytes elsewhere.

Measured on pickled values (docs/benchmarks.md, "Variables store: compression"): a 1M-row
mixed DataFrame pickles to 40 MB and compresses to 26% at ~330 MB/s with zstd level 1 (zlib
level 1: 27% at ~100 MB/s; lz4: 50%); a 50 MB array of random floats compresses to 96% with
any codec, so it is stored raw and still comes back as a zero-copy mapping. Whether a
segment pays is decided from a sample (three slices of 256 KiB) before the segment is
written, so an incompressible array costs one sample, not a whole compression.

zstd comes from the `zstandard` package. Where it is missing, blobs are written raw (every
reader reads them) and a compressed segment is refused by name with the fix.

Must never: decide from anything but the bytes (the result is deterministic per content), or
hand back a decompressed segment of another length than the table says.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from typing import Any

try:
    import zstandard
except ImportError:  # an install without it writes raw segments (see the module docstring)
    zstandard = None  # type: ignore[assignment]

RAW = 0
ZSTD = 1
CODECS = {RAW: "raw", ZSTD: "zstd"}
LEVEL = 1
MIN_BYTES = 4096
"""Segments smaller than this are stored raw: a frame header would eat what they save."""
SAMPLE = 256 * 1024
PAYS_BELOW = 0.9
"""A segment is compressed when its sample shrinks below this fraction of its size."""
CHUNK = 8 * 1024 * 1024
MAP_FROM = 1024 * 1024


class CodecError(Exception):
    """A segment cannot be decoded; the message is the reason a rewind report shows."""


def available() -> bool:
    return zstandard is not None


def choose(segment: memoryview) -> int:
    """The codec `segment` is stored with: ZSTD when a sample of it compresses well."""
    n = segment.nbytes
    if zstandard is None or n < MIN_BYTES:
        return RAW
    if n <= 3 * SAMPLE:
        sample = bytes(segment)
    else:
        mid = n // 2 - SAMPLE // 2
        sample = b"".join(
            (segment[:SAMPLE], segment[mid : mid + SAMPLE], segment[n - SAMPLE :])  # type: ignore[arg-type]
        )
    packed = zstandard.ZstdCompressor(level=LEVEL).compress(sample)
    return ZSTD if len(packed) < PAYS_BELOW * len(sample) else RAW


def pieces(segment: memoryview, codec: int) -> Iterator[Any]:
    """The stored form of `segment`, in pieces of at most ~`CHUNK` input bytes each."""
    if codec == RAW:
        for start in range(0, segment.nbytes, CHUNK):
            yield segment[start : start + CHUNK]
        return
    assert zstandard is not None  # choose() picks ZSTD only when it is there
    packer = zstandard.ZstdCompressor(level=LEVEL).compressobj()
    for start in range(0, segment.nbytes, CHUNK):
        out = packer.compress(segment[start : start + CHUNK])
        if out:
            yield out
    yield packer.flush()


def decode(stored: Any, codec: int, raw_len: int) -> Any:
    """The raw bytes of a compressed segment, writable (restored arrays may be mutated): a
    bytearray, or for a large one an anonymous mapping (no pass that zero-fills it first)."""
    if codec not in CODECS or codec == RAW:
        raise CodecError(f"stored with an unknown compression (codec {codec})")
    if zstandard is None:
        raise CodecError(
            "stored compressed with zstd, and the zstandard package is not installed "
            "(pip install zstandard)"
        )
    out: Any = mmap.mmap(-1, raw_len) if raw_len >= MAP_FROM else bytearray(raw_len)
    view = memoryview(out)
    got = 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(stored) as reader:
            while got < raw_len:
                n = reader.readinto(view[got:])
                if not n:
                    break
                got += n
            extra = reader.read(1)
    except zstandard.ZstdError as exc:
        raise CodecError(f"its compressed bytes do not decode ({exc})") from None
    if got != raw_len or extra:
        raise CodecError("its compressed bytes decode to another length than recorded")
    return out
