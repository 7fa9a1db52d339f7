"""The content-addressed side store for large files: `<workspace>/.logician/large/`.

Files above `checkpoints.large_file_bytes` bypass git (whose zlib objects cost a full compress
and a full inflate per version) and land here as plain copies named by their content: the key
is an XXH3-128 digest plus the size, so the same bytes are stored once however often a cell
writes them. A copy is a reflink (`FICLONE`) where the file system shares extents, else direct
writes from a mapping of the source (`direct_copy.py`: no page-cache copy), else a streamed copy
in the kernel; a capture hashes alongside the copy. A file is never held in memory whole.

Anyone who can write the workspace can write `.logician/large/`, so an object is never trusted
for its name: a new copy replaces a file already under its key (never skipped because one
exists), and a restore re-hashes the bytes it is about to rename into place and refuses them,
naming the file, when they are not what the key says.

Must never: leave a partly written object under its final name (every object is written to a
temporary name and renamed), delete an object except through `remove` (eviction and gc), or
restore bytes whose hash does not match their key.
"""

from __future__ import annotations

import builtins  # `list` is also a method of the store below
import contextlib
import errno
import fcntl
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# XXH3-128: ~2.5x BLAKE3 and ~10x hashlib.blake2b on this machine (README, "What was
# measured"); 128 bits make an accidental collision as likely as none, and the store holds
# the user's own files, not an adversary's. The size in the key is a second check.
from xxhash import xxh3_128 as _hasher

from ..durable.fsync import durable_replace
from ..durable.journal_scan import read_json_lines
from ..durable.private import open_private, private_dir
from .beneath import Beneath
from .direct_copy import copy_direct, replace

HASH_NAME = "x3"

CHUNK = 8 << 20
"""Bytes per read of a streamed copy: big enough for full-speed I/O, small enough to be cheap."""
HASH_CHUNK = 1 << 20
"""Bytes per read while hashing: a chunk that stays in the CPU cache between the read and the
hash (200 MB keyed in 24 ms vs 35 ms with 8 MB chunks here)."""
FICLONE = 0x40049409
"""The Linux ioctl that makes a file share another's extents (`cp --reflink`)."""


class LargeStoreError(OSError):
    """The side store cannot take or give back an object; the message says which and why."""

    def __str__(self) -> str:  # a rewind report shows the reason, not "[Errno 74]"
        return self.strerror or super().__str__()


@dataclass(frozen=True)
class StoredObject:
    """One object in the side store."""

    key: str
    """`<hash name>-<hex digest>-<size>`: the content's identity."""
    size: int
    """Size in bytes."""
    stored_at: float
    """When it was first stored (seconds since the epoch)."""


def key_size(key: str) -> int:
    """The size a key records (the last dash-separated part)."""
    return int(key.rsplit("-", 1)[1])


class LargeFileStore:
    """The side store of one workspace: put, has, restore, remove, list. Thread-safe per call
    (every object write is a temporary file and one rename)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.objects = self.root / "objects"
        self.tmp = self.root / "tmp"
        self.reflinks: bool | None = None
        """Whether the last copy could share extents (None until a copy was tried)."""

    def _path(self, key: str) -> Path:
        digest = key.split("-", 2)[1]
        return self.objects / digest[:2] / key

    def ensure(self) -> None:
        private_dir(self.objects)
        private_dir(self.tmp)

    def sweep(self) -> None:
        """Remove half-made objects of kernels that died mid-copy (their pid is gone)."""
        if not self.tmp.is_dir():
            return
        for entry in os.scandir(self.tmp):
            pid = entry.name.split("-")[1] if entry.name.count("-") >= 2 else ""
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)

    def has(self, key: str) -> bool:
        return self._path(key).is_file()

    # -- put ---------------------------------------------------------------------------------

    def put(self, source: Path, progress: Callable[[int, int], None] | None = None) -> str:
        """Store the bytes of `source` (a regular file); its key. The same content is stored
        once. Raises OSError (the source vanished or the disk is full) - nothing is left behind.
        `progress` is told `(bytes copied, bytes in all)` as the copy goes, from this thread."""
        clone = self.clone(source)
        if clone is not None:
            return self.adopt(clone)  # hash the clone: it cannot change under us
        self.ensure()
        tmp = self._tmp_name("in")
        try:
            with open(source, "rb") as src, open(tmp, "wb") as dst:
                size = os.fstat(src.fileno()).st_size
                # Key and copy at once, on two cores (the copy stays in the kernel, the hash
                # releases the GIL): 96 vs 124 ms for 200 MB here. Content already stored costs
                # a copy that is dropped. The caller checks the source's fingerprint around
                # this, so a change in between shows.
                key = _key_while(source, size, lambda: _copy_range(src, dst, progress))
            if tmp.stat().st_size != size and not self.has(key):
                raise LargeStoreError(errno.EAGAIN, f"{source} changed size while it was copied")
            self._install(tmp, key)
            return key
        finally:
            tmp.unlink(missing_ok=True)

    def clone(self, source: Path) -> Path | None:
        """A reflink of `source` in the temporary area (a consistent copy that costs no data
        blocks until one side changes), or None where the file system cannot share extents.
        The caller `adopt`s or `discard`s it."""
        if self.reflinks is False:
            return None
        self.ensure()
        tmp = self._tmp_name("cl")
        try:
            with open(source, "rb") as src, open(tmp, "wb") as dst:
                if _clone(src.fileno(), dst.fileno(), self):
                    return tmp
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        tmp.unlink(missing_ok=True)
        return None

    def adopt(self, clone: Path) -> str:
        """Key a `clone` and move it into the store (dropped if that content is stored already)."""
        try:
            key = _key_of(clone, os.stat(clone).st_size)
            self._install(clone, key)
            return key
        finally:
            clone.unlink(missing_ok=True)

    @staticmethod
    def discard(clone: Path) -> None:
        clone.unlink(missing_ok=True)

    def _tmp_name(self, kind: str) -> Path:
        # `<kind>-<pid>-<n>`: `sweep` removes those of kernels that died
        return self.tmp / f"{kind}-{os.getpid()}-{time.monotonic_ns()}"

    def _install(self, tmp: Path, key: str) -> None:
        # Over any file already under that name: the copy in hand was hashed by us, while a
        # file that stands there may have been planted (a rename costs no more than a skip).
        final = self._path(key)
        private_dir(final.parent)
        os.chmod(tmp, 0o400)  # objects are immutable; a stray write fails loudly
        durable_replace(tmp, final)  # counted: a test can fail the store's Nth write

    # -- restore -----------------------------------------------------------------------------

    def restore(self, key: str, dest: Path, perms: int) -> None:
        """`restore_at` a file named by its full path (its own directory is trusted)."""
        with Beneath(dest.parent) as tree:
            self.restore_at(key, tree, dest.name, perms)

    def restore_at(self, key: str, tree: Beneath, path: str, perms: int) -> None:
        """Write the object's bytes to workspace path `path` in one rename, with permission
        bits `perms`; the temporary file and the rename go through `tree` (beneath.py: no
        symlinked parent is followed), once the copy about to be renamed is verified against
        `key` (`verify`)."""
        obj = self._path(key)
        if not obj.is_file() or obj.is_symlink():
            raise LargeStoreError(errno.ENOENT, f"large-file object {key[:20]}… was evicted")
        dir_fd, tmp, fd = tree.new_temp(path)
        try:
            with open(obj, "rb") as src, os.fdopen(fd, "wb") as dst:
                if not _clone(src.fileno(), dst.fileno(), self):
                    _copy_range(src, dst)
                # The object's pages were read for this copy only (and are clean): free them
                # (~1 ms for 200 MB), so the restored file's first reader gets those frames.
                with contextlib.suppress(OSError, AttributeError):
                    os.posix_fadvise(src.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            check = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:
                verify(key, check)  # before the bits: a mode without read would refuse the check
                os.fchmod(check, perms)
            finally:
                os.close(check)
            replace(tmp, path.rpartition("/")[2], dir_fd=dir_fd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)

    # -- listing and removal -----------------------------------------------------------------

    def list(self) -> Iterator[StoredObject]:
        if not self.objects.is_dir():
            return
        for bucket in os.scandir(self.objects):
            if not bucket.is_dir():
                continue
            for entry in os.scandir(bucket.path):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                yield StoredObject(key=entry.name, size=st.st_size, stored_at=st.st_mtime)

    def total_bytes(self) -> int:
        return sum(o.size for o in self.list())

    def remove(self, key: str, *, why: str, frames: builtins.list[int]) -> int:
        """Delete one object and log it (what, why, which frames lose it); bytes freed."""
        obj = self._path(key)
        try:
            size = obj.stat().st_size
            obj.unlink()
        except FileNotFoundError:
            return 0
        record = {"key": key, "size": size, "why": why, "frames": frames, "time": time.time()}
        fd = open_private(self.root / "evictions.jsonl", os.O_WRONLY | os.O_APPEND)
        with os.fdopen(fd, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
        return size

    def mark_rebuilt(self, key: str) -> None:
        """Note that `key` is a database rebuilt by SQLite's backup API, not the file's own
        bytes (a restore of it says so, in later sessions too)."""
        fd = open_private(self.root / "rebuilt.txt", os.O_WRONLY | os.O_APPEND)
        with os.fdopen(fd, "a", encoding="utf-8") as log:
            log.write(key + "\n")

    def rebuilt(self) -> set[str]:
        """Every key `mark_rebuilt` noted."""
        try:
            return set((self.root / "rebuilt.txt").read_text(encoding="utf-8").split())
        except OSError:
            return set()

    def evictions(self) -> builtins.list[dict]:
        """Every eviction so far, oldest first (the log a user reads through `storage`)."""
        return read_json_lines(self.root / "evictions.jsonl")  # a torn line: gone either way


def _clone(src_fd: int, dst_fd: int, store: LargeFileStore) -> bool:
    """Share extents when the file system can (XFS, btrfs); False means copy the bytes."""
    if store.reflinks is False:
        return False
    try:
        fcntl.ioctl(dst_fd, FICLONE, src_fd)
    except OSError:
        store.reflinks = False
        return False
    store.reflinks = True
    return True


def _copy_range(src, dst, progress=None) -> None:  # type: ignore[no-untyped-def]
    """Copy straight to the disk from the source's pages where the file system can (no page
    of the copy is allocated: see direct_copy.py); else in the kernel, page to page (no byte
    crosses into Python); plain reads elsewhere."""
    size = os.fstat(src.fileno()).st_size
    told = (lambda done: progress(done, size)) if progress is not None else None
    if copy_direct(src.fileno(), dst.fileno(), size, told):
        return
    try:
        done = 0
        while copied := os.copy_file_range(src.fileno(), dst.fileno(), CHUNK * 8):
            done += copied
            if told is not None:
                told(done)
    except OSError:
        src.seek(0)
        dst.seek(0)
        dst.truncate()
        shutil.copyfileobj(src, dst, CHUNK)


def _key_while(path: Path, size: int, copy: Callable[[], None]) -> str:
    """The key of `path`, computed in a second thread while `copy` runs in this one."""
    box: dict[str, str | BaseException] = {}

    def keyer() -> None:
        try:
            box["key"] = _key_of(path, size)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=keyer, name="logician-large-key", daemon=True)
    thread.start()
    try:
        copy()
    finally:
        thread.join()
    if isinstance(error := box.get("error"), BaseException):
        raise error
    return str(box["key"])


def _key_of(path: Path | str | int, size: int) -> str:
    hasher = _hasher()
    with open(path, "rb", closefd=not isinstance(path, int)) as fh:
        buf = bytearray(HASH_CHUNK)
        view = memoryview(buf)
        while n := fh.readinto(buf):
            hasher.update(view[:n])
    return f"{HASH_NAME}-{hasher.hexdigest()}-{size}"


def verify(key: str, copy: Path | int) -> None:
    """Refuse `copy` unless its bytes hash to `key`: the copy, not the object, is what a
    restore renames into place, so a change to the object after this check cannot land.
    XXH3 (8 ms per 200 MB here) catches a planted or damaged object; it is not a MAC (see
    docs/security.md): what it guards is file content a workspace writer could write anyway."""
    try:
        size = os.fstat(copy).st_size if isinstance(copy, int) else os.stat(copy).st_size
        got = _key_of(copy, size)
    except OSError as exc:
        raise LargeStoreError(
            exc.errno or errno.EIO, f"the stored copy cannot be checked ({exc.strerror or exc})"
        ) from None
    if got != key:
        raise LargeStoreError(
            errno.EBADMSG,
            "its stored copy in .logician/large failed its "
            "check (changed or planted); not restored",
        )


def hash_file(path: Path) -> str:
    """The key of a file's current bytes, without storing them (streamed)."""
    return _key_of(path, os.stat(path).st_size)
