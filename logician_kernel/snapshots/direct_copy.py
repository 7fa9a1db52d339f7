"""Copies of large files that bypass the page cache: O_DIRECT writes from a mapping of the source.

Both copies the side store makes - a capture (workspace file -> object) and a rewind (object ->
a temporary file renamed over the workspace file) - create a new file while the old bytes must
stay valid, so a buffered copy needs a second set of page-cache pages as large as the file.
Measured on this machine (docs/benchmarks.md, "Large files"), fresh pages cost up to ~2.5 ms per MB
to fill on first touch (430-750 ms for 200 MB, against ~60 ms when freed pages are recycled, as
`cp` over an existing file recycles the ones its truncation drops), and renaming a new, still
dirty file over an existing one costs another 10-145 ms on ext4 (`auto_da_alloc` flushes it).
A direct write hands the source's pages to the disk: no page is allocated for the copy, nothing
is left dirty for the rename to flush or for writeback to push the user's working set out with,
and the time is the disk's (~1.4 GB/s here), not the page allocator's. (A source not in memory,
such as a stored object a rewind reads, is read in through the mapping; the store gives those
clean pages back after the copy.)

The last partial block (O_DIRECT needs whole blocks) is written the ordinary way.

`replace` renames the finished copy over the old file with the old file still open: the rename
then only swaps names, and freeing the old version (its pages, its blocks: ~50 ms for 200 MB
here) happens when that handle closes, in the background, after the rewind has moved on.

Must never: touch the source's mapping from Python (a file truncated under it would SIGBUS the
kernel; inside a system call the same fault is an EFAULT the caller handles), or leave a file
with some bytes missing without raising.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import threading
from collections.abc import Callable

ALIGN = 4096
"""Offset and length unit of a direct write: a page, the widest block size file systems and
disks ask for (a logical block of 512 bytes divides it)."""
CHUNK = 32 << 20
"""Bytes per direct write: past ~8 MB the disk's speed no longer depends on it; larger calls only
make a cancelled or failing copy slower to notice."""
_DIRECT = getattr(os, "O_DIRECT", 0)
_PATH_ONLY = getattr(os, "O_PATH", 0)
_REFUSED = (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP)
"""What a file system that cannot do direct I/O (tmpfs before 6.6, FUSE, some network file
systems) answers: the caller copies through the page cache instead."""


def copy_direct(
    src_fd: int, dst_fd: int, size: int, progress: Callable[[int], None] | None = None
) -> bool:
    """Write the first `size` bytes of `src_fd` to the empty file `dst_fd` with direct writes.

    True when done; False, with `dst_fd` empty again, where direct I/O is refused (or the
    file is smaller than a block: nothing to gain). Other OSErrors propagate (EFAULT: the source
    shrank while it was copied; ENOSPC). `progress` is told the bytes written after each chunk.
    """
    aligned = size - size % ALIGN
    if not _DIRECT or aligned == 0:
        return False
    flags = fcntl.fcntl(dst_fd, fcntl.F_GETFL)
    try:
        fcntl.fcntl(dst_fd, fcntl.F_SETFL, flags | _DIRECT)
    except OSError as exc:
        if exc.errno in _REFUSED:
            return False
        raise
    try:
        with mmap.mmap(src_fd, size, prot=mmap.PROT_READ) as mapped:
            mapped.madvise(mmap.MADV_SEQUENTIAL)  # read ahead if the source is not in memory
            view = memoryview(mapped)
            try:
                _write_all(dst_fd, view, aligned, progress)
            except OSError as exc:
                if exc.errno not in _REFUSED:
                    raise
                os.ftruncate(dst_fd, 0)
                return False
            finally:
                view.release()
    finally:
        fcntl.fcntl(dst_fd, fcntl.F_SETFL, flags)
    if size > aligned:
        tail = os.pread(src_fd, size - aligned, aligned)
        if len(tail) != size - aligned:
            raise OSError(errno.EAGAIN, "the file shrank while it was copied")
        os.pwrite(dst_fd, tail, aligned)
    return True


def _write_all(
    dst_fd: int, view: memoryview, end: int, progress: Callable[[int], None] | None = None
) -> None:
    offset = 0
    while offset < end:
        stop = min(offset + CHUNK, end)
        piece = view[offset:stop]
        try:
            written = os.pwrite(dst_fd, piece, offset)
        finally:
            piece.release()  # else a traceback holding it keeps the mapping from closing
        if written <= 0:
            raise OSError(errno.EIO, f"a direct write stopped at byte {offset:,}")
        offset += written
        if progress is not None:
            progress(offset)


def replace(tmp: str, dest: str, *, dir_fd: int) -> None:
    """`os.replace(tmp, dest)` inside the directory `dir_fd` (both names in it: see
    beneath.py), tearing down the replaced file off the caller's path."""
    old = None
    with contextlib.suppress(OSError):
        # O_PATH: no read permission needed, no open of a FIFO that blocks; it still holds the
        # inode, so its last reference is dropped by our close, not by the rename.
        if _PATH_ONLY:
            old = os.open(dest, _PATH_ONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        os.replace(tmp, dest, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        if old is not None:
            os.close(old)
        raise
    if old is not None:
        threading.Thread(
            target=os.close, args=(old,), name="logician-unlink-old", daemon=True
        ).start()
