"""Blobs of a cell that changed many files, written as one git pack instead of one file each.

A changed cell's snapshot stores each changed file as a blob. Written loose, that is one new
file per blob in the store (a fan-out directory, a temporary name, a rename): for a cell that
wrote 5,000 files, 5,000 more file creations - as many as the cell itself made. `PackWriter`
collects the blobs of one snapshot in memory and writes them as one pack and its index (git's
formats, version 2, no deltas), the way `git fast-import` would: two files, whatever the count.
The first snapshot packs through `git fast-import` (first_snapshot.py); this one needs no
process, since the snapshot has each blob's bytes and id in hand already.

The pack is written under a temporary name and renamed into `objects/pack/` before its index
(git sees a pack only through its `.idx`), and only then may a tree name its blobs: a crash
leaves at worst an unreferenced pack, never a tree whose blob is missing. A blob already
packed by this store is not packed again; one stored loose may be (git reads either copy,
and looking for a loose copy would cost a `stat` per blob).

Must never: name a pack other than by its checksum, write an index that disagrees with its
pack, or leave a partly written file under a name git reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import zlib
from pathlib import Path

from ..durable.private import PRIVATE_DIR
from ..durable.test_hooks import stop_mid_pack
from .git_trees import place_new, temp_name

PACK_MIN_BLOBS = 64
"""Below this many blobs in one snapshot, loose objects cost less than a pack."""
PACK_MAX_BYTES = 256 * 1024 * 1024
"""Compressed bytes one pack holds before the next one starts (bounds the memory held)."""
_BLOB = 3  # git's object type number


def _sha1(data: bytes) -> hashlib._Hash:
    return hashlib.sha1(data, usedforsecurity=False)


class PackWriter:
    """Blobs added one by one, written as packs by `flush` (and whenever one grows large)."""

    def __init__(self, objects: Path, packed: set[str] | None = None) -> None:
        self.objects = os.fspath(objects)
        self.packed = packed if packed is not None else set()
        """Ids of the blobs packed so far (shared across writers: the caller's record)."""
        self._entries: list[tuple[bytes, int, bytes]] = []  # (id, crc32, packed bytes)
        self._ids: set[bytes] = set()
        self._size = 0
        self.written: list[str] = []
        """The packs written, as their file names without the extension."""

    def add(self, data: bytes) -> str:
        """Store `data` as a blob (in the next pack unless stored already); its id."""
        hasher = _sha1(b"blob %d\0" % len(data))
        hasher.update(data)
        digest = hasher.digest()
        sha = digest.hex()
        if digest in self._ids or sha in self.packed:
            return sha  # one loose copy may exist too: git reads either (no `stat` per blob)
        packed = _object_header(_BLOB, len(data)) + zlib.compress(data, 1)
        self._entries.append((digest, zlib.crc32(packed), packed))
        self._ids.add(digest)
        self._size += len(packed)
        if self._size >= PACK_MAX_BYTES:
            self.flush()
        return sha

    def flush(self) -> None:
        """Write what was added as one pack and its index (nothing if nothing was added)."""
        entries, self._entries, self._size = self._entries, [], 0
        if not entries:
            return
        pack_dir = os.path.join(self.objects, "pack")
        with contextlib.suppress(FileExistsError):
            os.mkdir(pack_dir, PRIVATE_DIR)
        body = [b"PACK", struct.pack(">II", 2, len(entries))]
        offsets: dict[bytes, tuple[int, int]] = {}
        at = 12
        for digest, crc, packed in entries:
            offsets[digest] = (at, crc)
            body.append(packed)
            at += len(packed)
        check = _sha1(b"".join(body[:2]))
        for part in body[2:]:
            check.update(part)
        trailer = check.digest()
        name = os.path.join(pack_dir, f"pack-{trailer.hex()}")
        data = b"".join([*body, trailer])
        stop_mid_pack(temp_name(name + ".pack"), data, len(entries))
        place_new(name + ".pack", data)
        place_new(name + ".idx", _index(offsets, trailer))
        self.written.append(name)
        self.packed.update(digest.hex() for digest, _, _ in entries)


def pack_writer(objects: Path, packed: set[str], count: int) -> PackWriter | None:
    """A writer for `count` blobs about to be stored, or None when loose objects cost less."""
    return PackWriter(objects, packed) if count >= PACK_MIN_BLOBS else None


def _object_header(kind: int, size: int) -> bytes:
    """A packed object's type and size: 3 type bits and 4 size bits, then 7 bits a byte."""
    if size < 0x800:  # a small file's: one or two bytes
        first = (kind << 4) | (size & 0x0F)
        return bytes((first,)) if size < 0x10 else bytes((first | 0x80, size >> 4))
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _index(offsets: dict[bytes, tuple[int, int]], pack_sha: bytes) -> bytes:
    """A version 2 pack index for the objects at `offsets` (id -> (offset, crc32))."""
    ids = sorted(offsets)
    fanout = [0] * 256
    for digest in ids:
        fanout[digest[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for digest in ids:
        offset = offsets[digest][0]
        if offset < 0x80000000:
            small.append(offset)
        else:
            small.append(0x80000000 | len(large))
            large.append(offset)
    parts = [
        b"\377tOc",
        struct.pack(">I", 2),
        struct.pack(">256I", *fanout),
        b"".join(ids),
        struct.pack(f">{len(ids)}I", *(offsets[d][1] for d in ids)),
        struct.pack(f">{len(small)}I", *small),
        struct.pack(f">{len(large)}Q", *large),
        pack_sha,
    ]
    data = b"".join(parts)
    return data + _sha1(data).digest()
