"""The variables store: groups of kernel values, content-addressed and authenticated under
`.logician/variables/`.

A blob (`variable_blob.py` has its format) is a serialized group (`variable_pickle.py`: the
pickle and its out-of-band buffers), compressed where that pays and closed by a MAC keyed with
the user's key (`durable/blob_key.py`, kept outside the workspace) over its bytes and its own
name. A blob's name is the digest of the group's uncompressed form, so the same value stored by
two frames is one blob, however it is compressed. Anyone who can write the workspace can write
these files, so a blob planted, changed, or moved under another name without the user's key is
refused by name and never unpickled, and a file under a blob's name is never trusted because
it exists: a write is skipped only over a file that verifies, else it is overwritten.

Must never: leave a partial blob under its final name, unpickle or decompress bytes whose MAC
did not verify, or skip a write because a file of that name exists without verifying that
file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import threading
import time
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

from ..durable.blob_key import BlobKey
from ..durable.fsync import durable_replace
from ..durable.journal_scan import read_json_lines
from ..durable.private import open_private, private_dir
from .variable_blob import (
    DOMAIN2,
    DOMAIN3,
    BlobRefused,
    open_verified,
    trailer,
    write_body,
)
from .variable_pickle import (
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

_NAME = re.compile(r"^[0-9a-f]{32}$")


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
        mac = self.key.mac(DOMAIN2)
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
        mac = self.key.mac(DOMAIN3)  # KeyFileError before any file is made
        self._bucket(pickled.digest)
        tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        try:
            with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                table = write_body(fh, pickled, mac, None)
                assert table is not None  # only a stop event ends a body early
                fh.write(trailer(mac, table, pickled.digest))
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

    def _open_verified(self, digest: str) -> tuple[Any, list[Any]]:
        """The pickle and buffers of a verified blob (`variable_blob.open_verified`)."""
        try:
            return open_verified(self._path(digest), digest, self.key)
        except FileNotFoundError:
            raise BlobRefused(digest, self.missing_reason(digest)) from None


class SpeculativeWrite:
    """A group being written (and MAC'd) to a temporary file before its digest is known."""

    def __init__(self, store: VariableStore, pickled: Pickled) -> None:
        self.store = store
        self.pickled = pickled
        self.tmp = store.root / f".speculative.{os.getpid()}.{threading.get_ident()}.tmp"
        self.error: OSError | None = None
        self.table: bytes | None = None
        self._mac = store.key.mac(DOMAIN3)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._write, args=(pickled,), daemon=True, name="logician-variables-write"
        )
        self._thread.start()

    def _write(self, pickled: Pickled) -> None:
        try:
            with os.fdopen(open_private(self.tmp, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                self.table = write_body(fh, pickled, self._mac, self._stop)
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
                    fh.write(trailer(self._mac, self.table, digest))
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
