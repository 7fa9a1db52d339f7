"""The variables store: groups of kernel values, content-addressed and authenticated under
`.logician/variables/`.

A blob (`LGV3`) is a serialized group (`variable_pickle.py`: the pickle and its out-of-band
buffers), each segment stored raw or zstd-compressed where that pays (`variable_codec.py`),
then a table of the segments (codec, stored and raw length) and a 32-byte MAC trailer (keyed
BLAKE3, `blob_key.py`; the key lives outside the workspace) over all of the stored bytes and
the blob's own name: nothing is decompressed or unpickled before it verified. A blob's name
is the digest of the group's uncompressed form, so the same value stored by two frames is one
blob, however it is compressed. Blobs of the previous format (`LGV2`: header, pickle,
buffers, MAC, never compressed) are still read. Anyone who can write the workspace can write these
files, so a blob planted, changed, or moved under another name without the user's key is
refused by name and never unpickled, and a file under a blob's name is never trusted because
it exists: a write is skipped only over a file that verifies, else it is overwritten. Blobs
of the unauthenticated format (`LGV1`) are refused too: there is no safe way to check a
pickle after the fact.

Must never: leave a partial blob under its final name, unpickle or decompress bytes whose MAC
did not verify, or skip a write because a file of that name exists without verifying that
file.
"""

from __future__ import annotations

import errno
import hmac
import json
import mmap
import os
import re
import stat
import struct
import threading
import time
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

from ..durable.blob_key import MAC_BYTES, BlobKey
from ..durable.fsync import durable_replace
from ..durable.journal_scan import read_json_lines
from ..durable.private import open_private, private_dir
from . import variable_codec as codec
from .variable_pickle import (
    HEADER,
    LENGTH,
    MAGIC,
    Pickled,
    SerializeError,
    digest_of,
    header,
    loads,
    pickle_group,
)

__all__ = [
    "BlobRefused",
    "Pickled",
    "SerializeError",
    "SpeculativeWrite",
    "VariableStore",
    "digest_of",
    "pickle_group",
]

OLD_MAGIC = b"LGV1"
"""Blobs of versions before the MAC: refused, never unpickled."""
_DOMAIN = b"logician variables blob v2\0"
"""What the MAC authenticates, so a MAC made for other state never passes for a blob's."""
MAGIC3 = b"LGV3"
"""The current format: segments (raw or compressed), their table, the MAC."""
_DOMAIN3 = b"logician variables blob v3\0"
PREFIX = struct.Struct("<4sI")
"""`LGV3`, then the number of out-of-band buffers (the pickle is one more segment)."""
SEGMENT = struct.Struct("<BQQ")
"""One segment in the table at a blob's end: codec, stored bytes, raw bytes."""
_NAME = re.compile(r"^[0-9a-f]{32}$")
MAP_FROM = 1024 * 1024
"""Blobs from this size on are mapped, not read: a large array comes back without a copy."""


class BlobRefused(Exception):
    """A stored group was not loaded; the message is the reason a rewind report shows beside
    each of its names ("stored value failed its check; not restored")."""

    def __init__(self, digest: str, reason: str) -> None:
        super().__init__(reason)
        self.digest = digest
        self.reason = reason


class VariableStore:
    """Blobs of pickled groups, by digest, under one directory (`.logician/variables`), each
    authenticated with `key`."""

    def __init__(self, root: Path, key: BlobKey) -> None:
        self.root = Path(root)
        self.key = key
        self._known: dict[str, tuple[int, int, int]] = {}
        """Blobs this process wrote or verified, with the (inode, size, mtime) it saw then:
        a file that changed since is verified again before a write is skipped."""
        self._total: int | None = None
        """Bytes of all blobs, counted once and then kept up to date by this process's writes
        and removals (the disk budget asks after every frame that stored a value)."""
        self._total_lock = threading.Lock()

    def _path(self, digest: str) -> Path:
        if not _NAME.match(digest):  # a ledger's blob name never walks out of `objects/`
            raise BlobRefused(digest, "stored value has an invalid name; not restored")
        return self.root / "objects" / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return self._path(digest).exists()

    def mac(self, pickled: Pickled, digest: str) -> bytes:
        """The MAC an `LGV2` blob of `pickled` stored under `digest` carries (how blobs of the
        previous format were made; tests make one with it)."""
        mac = self.key.mac(_DOMAIN)
        mac.update(header(pickled.main, pickled.buffers))
        mac.update(pickled.main)
        for buffer in pickled.buffers:
            mac.update(buffer)
        mac.update(digest.encode())
        return mac.digest()

    def speculate(self, pickled: Pickled) -> SpeculativeWrite | None:
        """Start writing a group whose digest is not known yet, on a thread: the caller hashes
        it meanwhile (both release the GIL), then `keep`s or `drop`s the write. A large
        array mutated in place costs about one write, not a hash and then a write. None when
        the key cannot be used (the plain `write` then says why)."""
        try:
            self.key.secret()
        except OSError:
            return None
        private_dir(self.root)
        return SpeculativeWrite(self, pickled)

    def write(self, pickled: Pickled) -> None:
        """Store a group once: the same content stored twice costs once, but a file already
        under its name is only trusted once it verifies (else it is overwritten)."""
        final = self._path(pickled.digest)
        if self.trusted(pickled.digest):
            return
        mac = self.key.mac(_DOMAIN3)  # KeyFileError before any file is made
        self._bucket(pickled.digest)
        tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        try:
            with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                table = _write_body(fh, pickled, mac, None)
                assert table is not None  # only a stop event ends a body early
                fh.write(_trailer(mac, table, pickled.digest))
            self._install(tmp, pickled.digest)
        finally:
            tmp.unlink(missing_ok=True)

    def _bucket(self, digest: str) -> None:
        """Make the blob's directory (0700), refusing a symlink planted on the way: a write
        (and private_dir's chmod) would follow it out of the store."""
        bucket = self._path(digest).parent
        for level in (self.root, bucket.parent, bucket):
            if level.is_symlink():
                raise OSError(errno.ELOOP, f"{level} is a symbolic link; nothing written there")
        private_dir(bucket)

    def _install(self, tmp: Path, digest: str) -> None:
        final = self._path(digest)
        try:
            replaced = os.lstat(final).st_size
        except OSError:
            replaced = 0
        # Over a planted or damaged file of that name, atomically; counted: a test can fail
        # the store's Nth write.
        durable_replace(tmp, final)
        st = os.stat(final)
        self._known[digest] = (st.st_ino, st.st_size, st.st_mtime_ns)
        self._count(st.st_size - replaced)

    def _count(self, delta: int) -> None:
        with self._total_lock:
            if self._total is not None:
                self._total += delta

    def trusted(self, digest: str) -> bool:
        """Whether a verified blob stands under `digest` (a write of it can be skipped)."""
        try:
            st = os.stat(self._path(digest))
        except OSError:
            return False
        if self._known.get(digest) == (st.st_ino, st.st_size, st.st_mtime_ns):
            return True
        try:
            self._open_verified(digest)
        except (BlobRefused, OSError):
            return False
        self._known[digest] = (st.st_ino, st.st_size, st.st_mtime_ns)
        return True

    # -- listing and eviction ---------------------------------------------------------------

    def blobs(self) -> Iterator[tuple[str, int, float]]:
        """Every stored blob: digest, bytes on disk, when it was stored."""
        objects = self.root / "objects"
        if not objects.is_dir():
            return
        for bucket in os.scandir(objects):
            if len(bucket.name) != 2 or not bucket.is_dir(follow_symlinks=False):
                continue
            for entry in os.scandir(bucket.path):
                digest = bucket.name + entry.name
                if not _NAME.match(digest):
                    continue  # a temporary file of a write in progress
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield digest, st.st_size, st.st_mtime

    def total_bytes(self) -> int:
        """Bytes of all blobs: listed once, then kept by this process's writes and removals
        (`recount` lists again, to see other kernels' writes to a shared store)."""
        with self._total_lock:
            if self._total is not None:
                return self._total
        return self.recount()

    def recount(self) -> int:
        total = sum(size for _, size, _ in self.blobs())
        with self._total_lock:
            self._total = total
        return total

    def remove(self, digest: str, *, why: str, frames: list[int], names: list[str]) -> int:
        """Delete one blob and log it (what, why, which frames and names lose it); bytes freed."""
        path = self._path(digest)
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            return 0
        self._known.pop(digest, None)
        self._count(-size)
        record = {
            "key": digest,
            "size": size,
            "why": why,
            "frames": frames,
            "names": names,
            "time": time.time(),
        }
        fd = open_private(self.root / "evictions.jsonl", os.O_WRONLY | os.O_APPEND)
        with os.fdopen(fd, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
        return size

    def missing_reason(self, digest: str) -> str:
        """Why a blob the ledger names is not in the store (what a rewind report says)."""
        if any(e.get("key") == digest for e in self.evictions()):
            return (
                "stored value was evicted to stay within checkpoints.max_store_bytes "
                "(see `%logician storage`); not restored"
            )
        return "stored value is missing (evicted or removed); not restored"

    def evictions(self) -> list[dict]:
        """Every eviction so far, oldest first."""
        return read_json_lines(self.root / "evictions.jsonl")  # a torn line: gone either way

    # -- reading ----------------------------------------------------------------------------

    def load(
        self, digest: str, namespace: MutableMapping[str, Any] | None = None
    ) -> dict[str, Any] | str:
        """The group under `digest`, or the reason it was not loaded (for a rewind report)."""
        try:
            return self.read(digest, namespace)
        except BlobRefused as exc:
            return exc.reason
        except Exception as exc:  # noqa: BLE001 - a verified pickle still runs the user's own __setstate__
            return f"could not be read back ({type(exc).__name__}: {exc})"[:200]

    def read(
        self, digest: str, namespace: MutableMapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The group stored under `digest`, once its MAC verified (else `BlobRefused`);
        buffers share one read of the file. Notebook functions in it get `namespace` as
        their globals."""
        main, buffers = self._open_verified(digest)
        values = loads(main, buffers, namespace)
        if not isinstance(values, dict):
            raise BlobRefused(digest, "stored value is not a variables group; not restored")
        return values

    def _open_verified(self, digest: str) -> tuple[Any, list[memoryview]]:
        """The pickle and buffers of a blob whose size, header and MAC check out. The header
        and the pickle are copied out of a mapping before they are checked: what pickle runs
        is what was checked, whatever happens to the file meanwhile."""
        path = self._path(digest)
        try:
            view, size, mapped = _map(path)
        except FileNotFoundError:
            raise BlobRefused(digest, self.missing_reason(digest)) from None
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
            return self._open_v3(digest, view, size, mapped, damaged)
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
            mac = self.key.mac(_DOMAIN)
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
        self, digest: str, view: memoryview, size: int, mapped: bool, damaged: BlobRefused
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
            mac = self.key.mac(_DOMAIN3)
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


def _map(path: Path) -> tuple[memoryview, int, bool]:
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


def _write_body(fh: Any, pickled: Pickled, mac: Any, stop: threading.Event | None) -> bytes | None:
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


def _trailer(mac: Any, table: bytes, digest: str) -> bytes:
    """The table and the MAC that close a blob (the MAC has seen everything before it)."""
    mac.update(table)
    mac.update(digest.encode())
    return table + mac.digest()


class SpeculativeWrite:
    """A group being written (and MAC'd) to a temporary file before its digest is known."""

    def __init__(self, store: VariableStore, pickled: Pickled) -> None:
        self.store = store
        self.pickled = pickled
        self.tmp = store.root / f".speculative.{os.getpid()}.{threading.get_ident()}.tmp"
        self.error: OSError | None = None
        self.table: bytes | None = None
        self._mac = store.key.mac(_DOMAIN3)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._write, args=(pickled,), daemon=True, name="logician-variables-write"
        )
        self._thread.start()

    def _write(self, pickled: Pickled) -> None:
        try:
            with os.fdopen(open_private(self.tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                self.table = _write_body(fh, pickled, self._mac, self._stop)
        except OSError as exc:
            self.error = exc

    def keep(self, digest: str) -> bool:
        """The value changed: finish the write under its digest. False if it failed."""
        try:
            done = self.store.trusted(digest)
        except OSError as exc:  # reading a stored blob to verify it: the write goes ahead
            self.error = self.error or exc
            done = False
        self._thread.join()
        try:
            if self.error is None and not done and self.table is not None:
                with os.fdopen(open_private(self.tmp, os.O_WRONLY | os.O_APPEND), "wb") as fh:
                    fh.write(_trailer(self._mac, self.table, digest))
                self.store._bucket(digest)
                self.store._install(self.tmp, digest)
            return self.error is None
        except OSError as exc:  # a full disk at the rename: the caller's own write retries
            self.error = exc
            return False
        finally:
            self.tmp.unlink(missing_ok=True)

    def drop(self) -> None:
        """The value did not change: stop and remove the partial write."""
        self._stop.set()
        self._thread.join()
        self.tmp.unlink(missing_ok=True)
