"""The first full snapshot of a workspace git knows nothing of: its blobs written as packs, in
parallel, before the private index is built.

A full scan of a workspace our private index has never seen hands every file to
`git update-index --add`, which hashes, zlib-compresses and writes each one as a loose object:
on 100k small files that is 100k file creations, one after the other (about 11 s of the 13 s
here went to creating object files; hashing alone takes 0.4 s). `prepack` writes the same
blobs first, through `git fast-import` processes (one per core, each fed by its own thread)
into one pack each. The snapshot's own `update-index` that follows then only hashes each file
to find the object already stored (git writes no object it has), and records each file's
stat data in the index, so the next full scan (`ls-files --modified`) stays a stat walk.

Bytes are read as they are on disk (no filters: fast-import stores what it is given), so the
id git computes for a file is the id of the blob stored. A file that changes between our read
and git's simply gets its new content written loose by `update-index`, as before: the pack is
an optimisation, never the source of truth. Symlinks, directories, FIFOs and anything that is
not a regular file are left to `update-index`.

How far it has come is told to `progress` as `(files read, files in all)` from the thread that
called `prepack` (never from a packer's thread): once before the first file, every
`REPORT_EVERY` seconds while the packers run, and once with the total when they are done.

Must never: raise (a failure leaves the snapshot to write loose objects as it always did),
follow a symlink, block on a FIFO, or read a file that the snapshot does not capture (large,
ignored and too-large files were sorted out before `prepack` is called).
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..durable.test_hooks import first_snapshot_delay, hold_full_scan

PREPACK_MIN_PATHS = 256
"""Below this many paths the loose objects cost less than starting the packers."""
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_BATCH = 256  # blobs per write to fast-import's stdin: fewer system calls, bounded memory
REPORT_EVERY = 0.2
"""Seconds between two `progress` reports while the packers run (a listener throttles too)."""
ScanProgress = Callable[[int, int], None]
"""`(files read, files in all)` of the first snapshot's pack."""
# --depth=0: no delta search (it would compare every blob with the one before it).
FAST_IMPORT = ("fast-import", "--quiet", "--depth=0")


def packers() -> int:
    """How many fast-import processes to run: one per core we may use, at most four."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def prepack(
    workspace: Path,
    store: Path,
    paths: Sequence[str],
    env: Mapping[str, str],
    *,
    max_bytes: int,
    workers: int | None = None,
    progress: ScanProgress | None = None,
) -> int:
    """Write the regular files among `paths` (workspace-relative) into packs in `store`;
    how many blobs were written. `progress` is told how many files were read. Never raises."""
    total = len(paths)
    tell = _safe(progress)
    if total >= PREPACK_MIN_PATHS:
        tell(0, total)  # before the hold: a test sees the work under way while it is held
    hold_full_scan()  # test-only: a slow first snapshot, deterministically
    if total < PREPACK_MIN_PATHS:
        return 0
    workers = workers or packers()
    # Interleaved shares: files of one directory are alike in size, so each packer gets
    # some of every directory and both finish together.
    shares = [paths[i::workers] for i in range(workers)]
    counts = [0] * workers
    read = [0] * workers  # files each packer has read so far (one writer per slot)
    threads = [
        threading.Thread(
            target=_pack_share,
            args=(workspace, store, share, env, max_bytes, counts, i, read, first_snapshot_delay()),
            name=f"logician-prepack-{i}",
            daemon=True,
        )
        for i, share in enumerate(shares)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(REPORT_EVERY)
            tell(min(sum(read), total), total)
    tell(total, total)
    return sum(counts)


def _safe(progress: ScanProgress | None) -> ScanProgress:
    def tell(done: int, total: int) -> None:
        if progress is None:
            return
        try:
            progress(done, total)
        except Exception:  # noqa: BLE001 - a listener's trouble must never stop the snapshot
            pass

    return tell


def _pack_share(
    workspace: Path,
    store: Path,
    paths: Sequence[str],
    env: Mapping[str, str],
    max_bytes: int,
    counts: list[int],
    slot: int,
    read: list[int],
    delay: float = 0.0,
) -> None:
    try:
        proc = subprocess.Popen(
            ["git", f"--git-dir={store}", *FAST_IMPORT],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            cwd=store,
        )
    except OSError:
        return
    assert proc.stdin is not None
    written = 0
    try:
        chunk: list[bytes] = []
        for n, rel in enumerate(paths, 1):
            data = _read_regular(workspace / rel, max_bytes)
            read[slot] = n
            if delay:
                time.sleep(delay)  # test-only (LOGICIAN_TEST_SLOW_FIRST_SNAPSHOT)
            if data is None:
                continue
            chunk.append(b"blob\ndata %d\n" % len(data))
            chunk.append(data)
            chunk.append(b"\n")
            written += 1
            if len(chunk) >= 3 * _BATCH:
                proc.stdin.write(b"".join(chunk))
                chunk.clear()
        if chunk:
            proc.stdin.write(b"".join(chunk))
        proc.stdin.close()
    except (OSError, ValueError):  # fast-import died: update-index writes what is missing
        written = 0
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        proc.wait()
    if proc.returncode == 0:
        counts[slot] = written


def _read_regular(full: Path, max_bytes: int) -> bytes | None:
    """The bytes of a regular file, or None for anything else (gone, a symlink, a FIFO)."""
    try:
        fd = os.open(full, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        parts, total = [], 0
        while True:  # to the end, even if it grew: the blob is whatever was read
            block = os.read(fd, max(st.st_size - total, 1 << 16))
            if not block:
                break
            parts.append(block)
            total += len(block)
            if total > max_bytes:
                return None
        return parts[0] if len(parts) == 1 else b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
