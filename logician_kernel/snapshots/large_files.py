"""Which workspace files go to the side store, and capturing them consistently within budget.

The snapshotter asks `LargeFiles.capture` for every changed path above the threshold (and for
SQLite databases of any size). A file whose stat fingerprint is unchanged since it was last
stored costs nothing; otherwise it is stored byte for byte - after any writer lets go of it; a
database a connection holds under a read lock, or through SQLite's backup API where that
cannot give a whole copy (WAL mode) - and only within `checkpoints.max_store_bytes`
and above the free-space floor. What cannot be captured becomes an `uncaptured` state with its
reason, so a frame says so instead of pretending.

Must never: raise into a snapshot (every failure is a reason), or evict a pre-image of one of
the `keep_recent_frames` newest frames or the current content of a workspace file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..types.path_states import Fingerprint, PathState, SkipReason
from ._fs import file_mode, open_files
from .large_store import LargeFileStore, hash_file, key_size

GB = 1 << 30
SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")
SQLITE_JOURNALS = tuple(f"*{s}{j}" for s in SQLITE_SUFFIXES for j in ("-wal", "-shm", "-journal"))
"""SQLite's side files: transient, meaningless apart from their database, never captured."""
_SQLITE_MAGIC = b"SQLite format 3\0"
SETTLE_SECONDS = 2.0
"""How long a capture waits for another process to stop writing a file before calling it
unstable."""


@dataclass(frozen=True)
class LargeLimits:
    """The resolved `checkpoints.*` limits of the side store."""

    threshold: int = 4 << 20
    max_store_bytes: int | None = None
    keep_recent_frames: int = 20
    min_free_bytes: int = GB


def default_budget(where: Path) -> int:
    """The smaller of 20 GB and a quarter of the free space at `where`."""
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        return 20 * GB
    return min(20 * GB, free // 4)


def is_sqlite(full: Path | str) -> bool:
    if not os.fspath(full).endswith(SQLITE_SUFFIXES):
        return False
    try:
        with open(full, "rb") as fh:
            return fh.read(16) == _SQLITE_MAGIC
    except OSError:
        return False


def journal_of(path: str) -> str | None:
    """The database a SQLite side file (`x.db-wal`) belongs to, else None."""
    for suffix in ("-wal", "-shm", "-journal"):
        if path.endswith(suffix) and path[: -len(suffix)].endswith(SQLITE_SUFFIXES):
            return path[: -len(suffix)]
    return None


def content_fingerprint(full: Path, st: os.stat_result, sqlite: bool) -> Fingerprint:
    """The stat fingerprint that changes when the content does: for a database in WAL mode the
    commits land in `-wal` first, so its time counts too."""
    mtime = st.st_mtime_ns
    if sqlite:
        try:
            mtime = max(mtime, os.stat(f"{full}-wal").st_mtime_ns)
        except OSError:
            pass
    return Fingerprint(size=st.st_size, mtime_ns=mtime, mode=st.st_mode)


def open_by_others(paths: Iterable[Path]) -> dict[Path, bool]:
    """Which of `paths` some process (this one included) holds open, and whether for writing.

    One pass over `/proc/*/fd`; processes we may not inspect are skipped (they are not ours).
    """
    wanted = {str(p): p for p in paths}
    found: dict[Path, bool] = {}
    if not wanted:
        return found
    try:
        pids = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        for fd, target in open_files(pid):
            if target not in wanted:
                continue
            writing = False
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                    for line in info:
                        if line.startswith("flags:"):
                            writing = int(line.split()[1], 8) & 0o3 in (1, 2)
                            break
            except (OSError, ValueError):
                pass
            found[wanted[target]] = found.get(wanted[target], False) or writing
    return found


@dataclass
class LargeFiles:
    """The side-store policy of one snapshotter."""

    workspace: Path
    store: LargeFileStore
    limits: LargeLimits = field(default_factory=LargeLimits)
    evict: Callable[[int], int] | None = None
    """Frees at least this many bytes of evictable pre-images; bytes freed (set by the frame
    stack, which knows which frames are recent)."""
    known: dict[str, tuple[Fingerprint, str]] = field(default_factory=dict)
    """Path -> the fingerprint it had when stored, and its key: unchanged files cost nothing."""
    seen: dict[tuple[str, Fingerprint], str] = field(default_factory=dict)
    """(path, fingerprint) -> key of every version stored or restored in this session: what a
    frame's deferred after-state turned out to be."""
    others: Callable[[], int] | None = None
    """Bytes another store keeps within the same budget (the variables store), set by the
    frame stack."""
    notices: list[str] = field(default_factory=list)
    """What a user should hear about (a paused capture, an eviction); drained by the kernel."""
    budget: int = 0
    paused: bool = False
    defer: bool = False
    """While set (a frame's post-snapshot), changed files are only noted in `pending`: their
    copies are made by `finish_pending`, off the cell's path."""
    pending: dict[str, PathState] = field(default_factory=dict)
    copy_progress: Callable[[str, int, int], None] | None = None
    """Told `(path, bytes copied, bytes in all)` while a file's bytes are copied into the side
    store (the copy after a cell, above all), from the copying thread; set by whoever shows it."""
    clones: dict[str, tuple[Fingerprint, Path]] = field(default_factory=dict)
    """Path -> a reflink taken when the frame closed (the content at that moment), keyed and
    stored by `finish_pending`: the frame closes without reading the file."""

    via_backup: set[str] = field(default_factory=set)
    """Keys stored through the backup API (kept by the store across sessions): a restore of
    one says its header may differ from the file's bytes when it was captured."""

    def __post_init__(self) -> None:
        self.store.sweep()
        self.via_backup = self.store.rebuilt()
        self.budget = self.limits.max_store_bytes or default_budget(self.workspace)

    def configure(self, limits: LargeLimits) -> None:
        self.limits = limits
        self.budget = limits.max_store_bytes or default_budget(self.workspace)

    def wants_path(self, path: str, st: os.stat_result) -> bool:
        """Whether the workspace-relative `path` goes to the side store rather than git; its
        full path is built only for a name a database may have (a snapshot or a rewind's plan
        asks this of 20,000 small files)."""
        if not stat.S_ISREG(st.st_mode):
            return False
        if st.st_size > self.limits.threshold:
            return True
        return path.endswith(SQLITE_SUFFIXES) and is_sqlite(os.path.join(self.workspace, path))

    def live_keys(self) -> set[str]:
        return {key for _, key in self.known.values()}

    # -- capture -----------------------------------------------------------------------------

    def capture(self, path: str, st: os.stat_result) -> PathState:
        """Store `path` unless it is stored already; its state (never raises)."""
        full = self.workspace / path
        sqlite = is_sqlite(full)
        fp = content_fingerprint(full, st, sqlite)
        mode = file_mode(st.st_mode)
        known = self.known.get(path)
        if known is not None and known[0] == fp and self.store.has(known[1]):
            return PathState.large(mode, known[1], fp)
        if self.defer:
            self.pending[path] = PathState.large(mode, None, fp)
            if not sqlite:
                self._clone_now(path, full, fp)
            return self.pending[path]
        try:
            reason = self._room_for(st.st_size)
            if reason is not None:
                return PathState.uncaptured(reason, fp)
            holders = open_by_others([full])
            key: str | None
            if sqlite and full in holders:
                # A connection holds it (the kernel's own, too): its bytes under a read lock,
                # else (WAL, busy) a consistent copy through the backup API.
                key = self._copy_sqlite_locked(full) or self._backup_sqlite(full)
            else:
                if holders.get(full) and not self._settle(full):
                    return PathState.uncaptured("unstable", fp)
                key, fp = self._put_stable(full, sqlite, path)
                if key is None:
                    return PathState.uncaptured("unstable", fp)
        except (OSError, sqlite3.Error) as exc:
            self.notices.append(f"Logician: could not capture {path}: {exc}")
            return PathState.uncaptured("unstable", fp)
        self.known[path] = (fp, key)
        self.seen[(path, fp)] = key
        return PathState.large(mode, key, fp)

    def _clone_now(self, path: str, full: Path, fp: Fingerprint) -> None:
        """Reflink a changed file as its frame closes (milliseconds, whatever its size); kept
        only if no other process is writing it and it did not change while cloned."""
        old = self.clones.pop(path, None)
        if old is not None:
            self.store.discard(old[1])
        if self.store.reflinks is False:
            return
        try:
            clone = self.store.clone(full)
            if clone is None:
                return
            after = content_fingerprint(full, os.stat(full), False)
        except OSError:
            return  # `finish_pending` copies it the ordinary way and reports what fails
        if after != fp or open_by_others([full]).get(full):
            self.store.discard(clone)
            return
        self.clones[path] = (fp, clone)

    def _adopt(self, path: str, mode: str, fp: Fingerprint, clone: Path, size: int) -> PathState:
        """Key a frame-close clone and keep it (or drop it: same content stored, or no room)."""
        try:
            reason = self._room_for(size)
            if reason is not None:
                self.store.discard(clone)
                return PathState.uncaptured(reason, fp)
            key = self.store.adopt(clone)
        except OSError as exc:
            self.store.discard(clone)
            self.notices.append(f"Logician: could not capture {path}: {exc}")
            return PathState.uncaptured("unstable", fp)
        self.known[path] = (fp, key)
        self.seen[(path, fp)] = key
        return PathState.large(mode, key, fp)

    def _room_for(self, size: int) -> SkipReason | None:
        try:
            free = shutil.disk_usage(self.store.root.parent).free
        except OSError:
            free = self.limits.min_free_bytes + size
        if free - size < self.limits.min_free_bytes:
            if not self.paused:
                self.notices.append(
                    f"Logician: large-file capture paused: {free / GB:.1f} GB free, below the "
                    f"{self.limits.min_free_bytes / GB:.1f} GB floor; files over "
                    f"{self.limits.threshold:,} bytes are not rewindable until space frees up "
                    "(`%logician gc` frees old pre-images)."
                )
            self.paused = True
            return "low-disk"
        self.paused = False
        used = self.store.total_bytes() + (self.others() if self.others is not None else 0)
        if used + size > self.budget and self.evict is not None:
            used -= self.evict(used + size - self.budget)
        if used + size > self.budget:
            return "over-budget"
        return None

    def _settle(self, full: Path) -> bool:
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            time.sleep(0.1)
            if not open_by_others([full]).get(full):
                return True
        return False

    def _put_stable(
        self, full: Path, sqlite: bool, path: str = ""
    ) -> tuple[str | None, Fingerprint]:
        """Store the file; if it changed while being copied, try once more after a pause.
        `copy_progress` is told how far the copy has come (`path`, bytes copied, in all)."""
        told = self.copy_progress
        progress = (lambda done, total: told(path, done, total)) if told is not None else None
        for attempt in (1, 2):
            before = content_fingerprint(full, os.stat(full), sqlite)
            try:
                key = self.store.put(full, progress)
            except OSError:
                if attempt == 2:
                    raise
                time.sleep(0.2)
                continue
            after = content_fingerprint(full, os.stat(full), sqlite)
            if before == after:
                return key, after
            time.sleep(0.2)
        return None, after

    def _copy_sqlite_locked(self, full: Path) -> str | None:
        """The database's own bytes, copied while our read transaction holds its SHARED lock
        (no connection can commit meanwhile, in this process or another); None where that
        does not make a whole copy: WAL mode (commits live in `-wal`) or a busy database."""
        if os.path.exists(f"{full}-wal"):
            return None
        con = sqlite3.connect(f"file:{full}?mode=ro", uri=True, timeout=2, isolation_level=None)
        try:
            if str(con.execute("pragma journal_mode").fetchone()[0]).lower() == "wal":
                return None
            con.execute("begin")
            con.execute("select count(*) from sqlite_master").fetchone()  # takes SHARED
            try:
                return self.store.put(full)
            finally:
                con.execute("rollback")
        except sqlite3.Error:
            return None
        finally:
            con.close()

    def _backup_sqlite(self, full: Path) -> str:
        """A consistent copy of a database a connection holds (SQLite's backup API): the same
        content, but the header's counters (change counter, schema cookie) may differ."""
        self.store.ensure()
        tmp = self.store.tmp / f"db-{os.getpid()}-{time.monotonic_ns()}"
        try:
            src = sqlite3.connect(f"file:{full}?mode=ro", uri=True, timeout=10)
            dst = sqlite3.connect(tmp)
            try:
                src.backup(dst)
            finally:
                dst.close()
                src.close()
            key = self.store.put(tmp)
        finally:
            tmp.unlink(missing_ok=True)
        if key not in self.via_backup:
            self.via_backup.add(key)
            with contextlib.suppress(OSError):  # the copy stands; later sessions lose the note
                self.store.mark_rebuilt(key)
        return key

    def finish_pending(
        self, large: dict[str, PathState], uncaptured: dict[str, tuple[SkipReason, Fingerprint]]
    ) -> None:
        """Make the copies a post-snapshot deferred, filling in that snapshot's entries (it is
        the next frame's pre-snapshot, whose pre-images these are)."""
        pending, self.pending = self.pending, {}
        clones, self.clones = self.clones, {}
        for path, noted in pending.items():
            clone = clones.pop(path, None)
            if large.get(path) is not noted:
                if clone is not None:
                    self.store.discard(clone[1])
                continue  # a later snapshot already judged this path
            if clone is not None:
                # the content as the frame closed, whatever happened to the file since
                fp, copy = clone
                state = self._adopt(path, noted.mode or "100644", fp, copy, fp.size)
            else:
                try:
                    st = os.lstat(self.workspace / path)
                except OSError:
                    del large[path]
                    continue
                state = self.capture(path, st)
            if state.kind == "large":
                large[path] = state
            else:
                del large[path]
                uncaptured[path] = (state.reason or "unstable", state.fingerprint)  # type: ignore[assignment]
        for _, copy in clones.values():
            self.store.discard(copy)

    # -- reading back ------------------------------------------------------------------------

    def current(self, path: str, st: os.stat_result) -> PathState:
        """The state of a large path now, hashed only if it changed since it was stored."""
        full = self.workspace / path
        fp = content_fingerprint(full, st, is_sqlite(full))
        mode = file_mode(st.st_mode)
        known = self.known.get(path)
        if known is not None and known[0] == fp:
            return PathState.large(mode, known[1], fp)
        return PathState.large(mode, hash_file(self.workspace / path), fp)

    def restored(self, path: str, key: str) -> None:
        """A rewind wrote `key` to `path`: remember it, so the next snapshot does not re-hash."""
        full = self.workspace / path
        try:
            self.known[path] = (content_fingerprint(full, os.stat(full), is_sqlite(full)), key)
            self.seen[(path, self.known[path][0])] = key
        except OSError:
            self.known.pop(path, None)

    def resolve(self, path: str, state: PathState) -> PathState:
        """A deferred after-state with the key its copy got, when this session knows it."""
        if state.kind != "large" or state.sha is not None or state.fingerprint is None:
            return state
        key = self.seen.get((path, state.fingerprint))
        return (
            state
            if key is None
            else PathState.large(state.mode or "100644", key, state.fingerprint)
        )

    def stored_size(self, key: str) -> int:
        return key_size(key)
