"""The variables blob format: how one serialized group is laid out, authenticated and read.

`LGV3` (written): `PREFIX` (magic, number of out-of-band buffers), the segments (the pickle,
then each buffer; raw or compressed, `variable_codec.py`), a table of the segments (codec,
stored and raw length) and a 32-byte MAC (keyed BLAKE3, `durable/blob_key.py`) over all of it
and the blob's own name. `LGV2` (read only): header, pickle, buffers, MAC, never compressed.
`LGV1` (no MAC) is refused.

Must never: decompress or unpickle bytes whose MAC did not verify, size anything by a header
or table before checking it fits the file, or follow a symlink to read a blob.
"""

from __future__ import annotations

import errno
import hmac
import mmap
import os
import stat
import struct
import threading
from pathlib import Path
from typing import Any

from ..durable.blob_key import MAC_BYTES, BlobKey
from . import variable_codec as codec
from .variable_pickle import HEADER, LENGTH, MAGIC, Pickled

OLD_MAGIC = b"LGV1"
"""Blobs of versions before the MAC: refused, never unpickled."""
DOMAIN2 = b"logician variables blob v2\0"
"""What the MAC authenticates, so a MAC made for other state never passes for a blob's."""
MAGIC3 = b"LGV3"
"""The current format: segments (raw or compressed), their table, the MAC."""
DOMAIN3 = b"logician variables blob v3\0"
PREFIX = struct.Struct("<4sI")
"""`LGV3`, then the number of out-of-band buffers (the pickle is one more segment)."""
SEGMENT = struct.Struct("<BQQ")
"""One segment in the table at a blob's end: codec, stored bytes, raw bytes."""
MAP_FROM = 1024 * 1024
"""Blobs from this size on are mapped, not read: a large array comes back without a copy."""


class BlobRefused(Exception):
    """A stored group was not loaded; the message is the reason a rewind report shows beside
    each of its names ("stored value failed its check; not restored")."""

    def __init__(self, digest: str, reason: str) -> None:
        super().__init__(reason)
        self.digest = digest
        self.reason = reason


def open_verified(path: Path, digest: str, key: BlobKey) -> tuple[Any, list[Any]]:
    """The pickle and buffers of the blob at `path` (named `digest`) whose size, header
    and MAC check out. The header and the pickle are copied out of a mapping before they
    are checked: what pickle runs is what was checked, whatever happens to the file
    meanwhile. FileNotFoundError when there is no blob (the store says why)."""
    try:
        view, size, mapped = map_file(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise BlobRefused(
            digest, f"stored value cannot be read ({exc.strerror or exc}); not restored"
        ) from None
    if size >= 4 and view[:4] == OLD_MAGIC:
        raise BlobRefused(
            digest,
            "stored by an older version of Logician without a check, "
            "so it cannot be verified; not restored",
        )
    damaged = BlobRefused(
        digest, "stored value failed its check (damaged or not a variables blob); not restored"
    )
    if size >= 4 and view[:4] == MAGIC3:
        return _open_v3(digest, key, view, size, mapped, damaged)
    if size < HEADER.size + MAC_BYTES or view[:4] != MAGIC:
        raise damaged
    head = bytes(view[: HEADER.size])
    _, count, main_len = HEADER.unpack(head)
    table_end = HEADER.size + count * LENGTH.size
    if table_end + main_len + MAC_BYTES > size:  # before anything is sized by the header
        raise damaged
    table = bytes(view[HEADER.size : table_end])
    lengths = struct.unpack(f"<{count}Q", table)
    if table_end + main_len + sum(lengths) + MAC_BYTES != size:
        raise damaged
    main: Any = view[table_end : table_end + main_len]
    if mapped:
        main = bytes(main)
    buffers = []
    offset = table_end + main_len
    for length in lengths:
        buffers.append(view[offset : offset + length])
        offset += length
    try:
        mac = key.mac(DOMAIN2)
    except OSError as exc:
        raise BlobRefused(
            digest, f"stored value cannot be checked ({exc.strerror or exc}); not restored"
        ) from None
    for part in (head, table, main, *buffers, digest.encode()):
        mac.update(part)
    if not hmac.compare_digest(mac.digest(), bytes(view[size - MAC_BYTES :])):
        raise BlobRefused(digest, "stored value failed its check; not restored")
    return main, buffers


def _open_v3(
    digest: str, key: BlobKey, view: memoryview, size: int, mapped: bool, damaged: BlobRefused
) -> tuple[Any, list[Any]]:
    """An `LGV3` blob: the table at its end sizes the segments; the MAC covers the stored
    bytes, checked before anything is decompressed or unpickled."""
    if size < PREFIX.size + SEGMENT.size + MAC_BYTES:
        raise damaged
    prefix = bytes(view[: PREFIX.size])
    _, count = PREFIX.unpack(prefix)
    body_end = size - MAC_BYTES - (count + 1) * SEGMENT.size
    if body_end < PREFIX.size:  # before anything is sized by the table
        raise damaged
    table = bytes(view[body_end : size - MAC_BYTES])
    segments = [SEGMENT.unpack_from(table, i * SEGMENT.size) for i in range(count + 1)]
    if PREFIX.size + sum(stored for _, stored, _ in segments) != body_end:
        raise damaged
    parts: list[Any] = []
    offset = PREFIX.size
    for _, stored, _ in segments:
        parts.append(view[offset : offset + stored])
        offset += stored
    parts[0] = bytes(parts[0])  # the pickle: what runs is what is checked
    try:
        mac = key.mac(DOMAIN3)
    except OSError as exc:
        raise BlobRefused(
            digest, f"stored value cannot be checked ({exc.strerror or exc}); not restored"
        ) from None
    for part in (prefix, *parts, table, digest.encode()):
        mac.update(part)
    if not hmac.compare_digest(mac.digest(), bytes(view[size - MAC_BYTES :])):
        raise BlobRefused(digest, "stored value failed its check; not restored")
    decoded: list[Any] = []
    for part, (kind, stored, raw) in zip(parts, segments, strict=True):
        if kind == codec.RAW:
            if stored != raw:
                raise damaged
            decoded.append(part)
            continue
        try:
            decoded.append(memoryview(codec.decode(part, kind, raw)))
        except codec.CodecError as exc:
            raise BlobRefused(digest, f"stored value {exc}; not restored") from None
    main = decoded[0] if isinstance(decoded[0], bytes) else bytes(decoded[0])
    return main, decoded[1:]


def map_file(path: Path) -> tuple[memoryview, int, bool]:
    """The whole file, mapped (large; True) or read (small), never following a last symlink;
    only a regular file of this user's."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with open(fd, "rb", buffering=0) as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if st.st_uid != os.geteuid():
            raise OSError(errno.EPERM, f"owned by uid {st.st_uid}, not by you")
        size = st.st_size
        if size >= MAP_FROM:
            # A private copy-on-write mapping: the restored buffers page in from the page
            # cache as they are touched, and the blob is never written (objects are
            # immutable; eviction unlinks, which leaves a live mapping valid).
            return memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)), size, True
        data = bytearray(size)
        view = memoryview(data)
        got = 0
        while got < size:
            n = fh.readinto(view[got:])
            if not n:
                break  # shrank while read: the size check after this refuses it
            got += n
        return view[:got], got, False


def _flat(buffer: memoryview) -> memoryview:
    return buffer.cast("B") if buffer.format != "B" or buffer.ndim != 1 else buffer


def write_body(fh: Any, pickled: Pickled, mac: Any, stop: threading.Event | None) -> bytes | None:
    """Write a blob's prefix and segments (each raw or compressed, `variable_codec.py`) to
    `fh`, feeding the MAC as it goes; the segment table (None when `stop` was set)."""
    prefix = PREFIX.pack(MAGIC3, len(pickled.buffers))
    fh.write(prefix)
    mac.update(prefix)
    table = []
    for segment in (memoryview(pickled.main), *pickled.buffers):
        flat = _flat(segment)
        kind = codec.choose(flat)
        stored = 0
        for piece in codec.pieces(flat, kind):
            if stop is not None and stop.is_set():
                return None
            fh.write(piece)
            mac.update(piece)
            stored += len(piece) if isinstance(piece, bytes) else piece.nbytes
        table.append(SEGMENT.pack(kind, stored, flat.nbytes))
    return b"".join(table)


def trailer(mac: Any, table: bytes, digest: str) -> bytes:
    """The table and the MAC that close a blob (the MAC has seen everything before it)."""
    mac.update(table)
    mac.update(digest.encode())
    return table + mac.digest()
