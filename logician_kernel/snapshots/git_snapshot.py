"""Workspace snapshots as git tree objects, through a private index and object store.

Owns `<workspace>/.logician/git`: a bare repository whose work tree is the workspace, whose
index is private to us, and whose objects hold every captured file version. The user's own
repository (index, HEAD, refs, stash, work tree) is never written: every git command here runs
with `--git-dir` pointing at our store and a private `GIT_INDEX_FILE` (git_store.py runs them
and reads objects; this module decides what a snapshot is).

When the change detector names what changed, a snapshot is the last tree with those paths
replaced, built in this process (git_trees.py: no git process, the index not written). A full
scan is one `git ls-files` (git's stat cache in our private index does the heavy lifting), an
`update-index` of the paths that differ from the index, and `write-tree`. Files over
the size cap and ignored files are not captured, but they are fingerprinted (size, mtime,
mode) so a frame can say it saw them change - never silently.

Must never: run a porcelain command that touches the user's index or work tree, follow the
user's clean/smudge filters (LFS would store pointers instead of content), or raise into the
user's cell - callers catch `SnapshotError` and record the capture failure.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..types.path_states import Fingerprint, PathChange, PathState, SkippedPath, SkipReason
from ._fs import (
    MODE_EXEC,
    MODE_FILE,
    fingerprint,
    fingerprint_dir,
    fingerprint_ignored,
    join_z,
    split_z,
)
from ._user_repo import user_git_dir
from .blob_stream import BlobStream
from .change_detection import ChangeDetection, Detector, make_detector
from .first_snapshot import ScanProgress, prepack
from .git_pack import PackWriter
from .git_store import GitStore, SnapshotError
from .git_trees import TreeError
from .ignore_checker import IgnoreChecker
from .incremental_tree import IncrementalTrees
from .large_files import LargeFiles, journal_of
from .locks import IndexBusy, clear_stale_git_lock
from .perms import carry_perms, unusual_perms, walk_unusual
from .snapshot_diff import snapshot_diff
from .snapshot_objects import SnapshotObjects
from .stat_memory import Looked, StatMemory
from .type_changes import lstat_entry

__all__ = ["EMPTY_TREE", "GitSnapshotter", "Snapshot", "SnapshotError"]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class Snapshot:
    """The captured state of the workspace at one moment."""

    tree: str
    """Git tree id of every captured path (small, not ignored)."""
    uncaptured: Mapping[str, tuple[SkipReason, Fingerprint]] = field(default_factory=dict)
    """Paths seen but not captured, with why and a stat fingerprint to detect change."""
    large: Mapping[str, PathState] = field(default_factory=dict)
    """Large files (and SQLite databases) captured in the side store instead of git."""
    perms: Mapping[str, int] = field(default_factory=dict)
    """Files whose permission bits git's mode does not imply (`chmod 600`), with the bits."""


class GitSnapshotter(SnapshotObjects):
    """Takes snapshots of one workspace into one private store; not thread-safe."""

    def __init__(
        self,
        workspace: Path,
        store: Path,
        *,
        max_file_bytes: int = 1_000_000,
        extra_ignores: Iterable[str] = (),
        large: LargeFiles | None = None,
        index_name: str = "logician-index",
    ) -> None:
        self.workspace = Path(workspace)
        self.large = large
        """The side-store policy; None keeps every captured file in git (tests, tools)."""
        self.store = Path(store)
        self._objects = self.store / "objects"
        self.max_file_bytes = max_file_bytes
        self.extra_ignores = tuple(extra_ignores)
        # Our store's git: plumbing commands with the private index, the object reader.
        self.git = GitStore(self.workspace, self.store, index_name)
        self._env, self._base, self._guard = self.git.env, self.git.base, self.git.guard
        self._last_tree: str | None = None
        self._last: Snapshot | None = None
        # inotify tells which paths changed, so a snapshot costs O(changes), not O(files).
        self._watcher: Detector | None = None
        # A changed cell's new tree and the frame's diff, in-process (see incremental_tree.py).
        self._inc = IncrementalTrees(self.workspace, self.git)
        self._trees = self._inc.trees
        # Whether a path is ignored only changes when ignore rules do (that forces a full scan).
        self._ignored_cache: dict[str, bool] = {}
        self._ignore = IgnoreChecker(
            self._base, self.workspace, self.git.check_ignore_env(), self.git.check_ignore
        )
        # Unusual permission bits by path, carried from snapshot to snapshot; walked once.
        self._perms: dict[str, int] | None = None
        # The opening snapshot of a frame whose drain a stat scan skipped (see snapshot()).
        self._start: Snapshot | None = None
        self._may_defer = False  # the last thing done was a frame's closing snapshot
        self._batch: PackWriter | None = None  # blobs of a `blob_batch` block
        self._stream: BlobStream | None = None  # blobs of a `blob_stream` block
        self.scan_progress: ScanProgress | None = None
        """Told `(files read, files in all)` while a full scan packs many new files (the
        first snapshot, or a cell's thousands of new files), from the scanning thread; set by
        whoever shows it."""
        self.scanned_once = False
        """A full scan of this session has finished: a later one reads a cell's files, not
        the workspace's first snapshot (what the progress is called)."""

    # -- setup -----------------------------------------------------------------------------

    def ensure_store(self) -> None:
        """Create the private store once; refresh our excludes from the workspace's own."""
        self.git.ensure(self.extra_ignores)

    def configure(self, *, max_file_bytes: int, extra_ignores: tuple[str, ...]) -> None:
        """New capture limits; the next snapshot rescans so every path is judged by them."""
        if (max_file_bytes, extra_ignores) == (self.max_file_bytes, self.extra_ignores):
            return
        self.max_file_bytes, self.extra_ignores = max_file_bytes, extra_ignores
        self.git.write_excludes(self.extra_ignores)
        self._last = None

    def _git(self, *args: str, stdin: bytes | None = None) -> bytes:
        return self.git.run(*args, stdin=stdin)

    def clear_stale_user_lock(self) -> str | None:
        """Remove the user's abandoned `.git/index.lock` (see locks.py); a notice, or None."""
        return clear_stale_git_lock(user_git_dir(self.workspace))

    # -- snapshots -------------------------------------------------------------------------

    def watch(self, mode: ChangeDetection = "auto") -> bool:
        """Track changes (inotify or a stat scan, per `mode`) from now on; False when that is
        unavailable here (every snapshot is then a full git scan)."""
        watcher = make_detector(mode, self.workspace, (".git", ".logician"))
        if not watcher.start():
            watcher.close()
            return False
        self._watcher = watcher
        self._last = None  # the next snapshot is a full scan, taken after watching began
        return True

    def take_notice(self) -> str | None:
        """A one-time message: the change detector switched to a stat scan, a stale lock
        of our index was cleared, or the store was repaired."""
        for source in (self._watcher, self._guard, self.git):
            notice = getattr(source, "notice", None)
            if notice is not None:
                source.notice = None  # type: ignore[union-attr]
                return notice
        return None

    def close(self) -> None:
        try:
            self._sync_index()  # the next session's first scan then starts from this one
        except (SnapshotError, TreeError):
            pass  # that scan re-reads whatever differs from the index anyway
        self._ignore.close()
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        self.git.close()

    def read_before_next_frame(self) -> None:
        """Something changed between cells that a scan could date wrongly (the Lab reported a
        save): the next frame reads the workspace before its cell runs, so if the cell writes
        that file too, its pre-image is the saved content, not the state before the save."""
        self._may_defer = False

    def snapshot(self, *, opening: bool = False) -> Snapshot:
        """Capture the workspace now. Cost scales with what changed since the last call.

        `opening`: a frame opens; a stat scan may answer with the last snapshot and read
        the workspace once, after the cell (see scan_detector.py): `take_start()` is then
        the workspace as it was when the frame opened."""
        # Only straight after a frame closed: a rewind or a diff in between may have left
        # files for the user to look at and edit, and those must be read before the cell.
        may_defer, self._may_defer = self._may_defer, False
        self.git.verify()  # in-process tree writes too: never into a store swapped in since
        if opening:
            self._start = None
            defer = getattr(self._watcher, "defer", None)
            if may_defer and self._last is not None and defer is not None and defer():
                self._start = self._last
                return self._last
        return self._look()

    def look_in_frame(self) -> Snapshot:
        """A snapshot inside an open frame (a `bash` call's baseline, `frames/call_watch.py`).
        Refused (`SnapshotError`) where it would walk the whole workspace (no change detector,
        or a stat scan, whose deferred opening read of the frame it would also disturb)."""
        scan = self._watcher is None or getattr(self._watcher, "kind", "") == "scan"
        if scan or self._start is not None:
            raise SnapshotError("changes are found by a full scan here, too slow for each call")
        return self.snapshot()

    def look_between_cells(self) -> bool:
        """Between cells, no frame open: read what changed since the last look now, so the
        next frame may skip its opening drain (see idle_look.py). False, and nothing read,
        unless the detector is a stat scan and the last thing done was a frame's close (no
        rewind, diff or reported save since)."""
        if not self._may_defer or self._last is None:
            return False
        if getattr(self._watcher, "kind", None) != "scan":
            return False
        self._look()
        return True

    def _look(self) -> Snapshot:
        changed = self._watcher.drain() if self._watcher is not None and self._last else None
        early = getattr(self._watcher, "early", None)
        if early is not None and self._start is not None:
            self._start = self._start_from(self._start, early, changed)
            if self._start is not None and changed is not None:
                self._last = self._start
                # New ignore rules still need the full scan after the cell (below).
                changed -= {p for p in early if p.rsplit("/", 1)[-1] != ".gitignore"}
        if changed is not None and self._last is not None:
            if not changed:
                return self._last
            if not any(p.endswith("/") or p.rsplit("/", 1)[-1] == ".gitignore" for p in changed):
                self._last = self._incremental(self._last, changed)
                return self._last
        self._last = self._full_scan()
        self.scanned_once = True
        return self._last

    def _start_from(
        self, last: Snapshot, early: set[str], changed: set[str] | None
    ) -> Snapshot | None:
        """The snapshot at a skipped drain: `last` plus what changed before it (between
        cells, unchanged since, so what is on disk now is what was there then)."""
        if changed is None:
            return None  # no precise answer: the frame's diff starts from `last`, as before
        if any(p.rsplit("/", 1)[-1] == ".gitignore" for p in early):
            self._ignored_cache.clear()  # new rules: re-ask for every path looked at
            self._ignore.restart()
        return self._incremental(last, early) if early else last

    def take_start(self) -> Snapshot | None:
        """The workspace when the frame opened, read after the cell; None when the opening
        snapshot was taken then (or no precise answer exists)."""
        start, self._start = self._start, None
        return start

    def _incremental(self, last: Snapshot, changed: set[str]) -> Snapshot:
        """Re-examine just the paths inotify reported (no deleted directories, no new rules)."""
        # A database in WAL mode changes through its -wal file: look at the database too.
        paths = sorted(changed | {db for p in changed if (db := journal_of(p))})
        unknown = [p for p in paths if p not in self._ignored_cache]
        if unknown:
            found = self._ignore.ignored(unknown)
            self._ignored_cache.update((p, p in found) for p in unknown)
        ignored = {p for p in paths if self._ignored_cache[p]}
        uncaptured = dict(last.uncaptured)
        large = dict(last.large)
        update: list[str] = []
        drop: list[str] = []
        perms = self._perms if self._perms is not None else {}
        parents: dict[str, bool] = {}  # symlinked parents, looked at once for this look
        looks: dict[str, Looked] = {}  # each path's lstat, which its blob's read goes by
        clock = StatMemory.clock
        for path in paths:
            uncaptured.pop(path, None)
            large.pop(path, None)
            perms.pop(path, None)
            looked_at = clock()
            try:
                st = lstat_entry(self.workspace, path, parents)
            except OSError:
                continue
            if st is not None and (bits := unusual_perms(st)) is not None:
                perms[path] = bits
            if st is None:
                update.append(path)  # --remove drops it from the index
                continue
            if stat.S_ISDIR(st.st_mode):
                drop.append(path)  # a file or symlink that became a directory leaves the index
                continue
            looks[path] = (looked_at, st)
            if path in ignored:
                uncaptured[path] = ("ignored", fingerprint(st))
            else:
                self._place(path, st, update, drop, uncaptured, large)
        return Snapshot(
            tree=self._tree_update(last.tree, update, drop, looks),
            uncaptured=uncaptured,
            large=large,
            perms=dict(perms),
        )

    def _tree_update(
        self, base: str, update: list[str], drop: list[str], looks: dict[str, Looked]
    ) -> str:
        """`base` with `update`'s paths as they are on disk now and `drop`'s removed; `looks`:
        the `lstat` each path was sorted by (its blob is read by it, not looked at again)."""
        self._last_tree = self._inc.update(base, update, drop, looks)
        return self._last_tree

    def _sync_index(self) -> None:
        if self._last_tree is not None:
            self._inc.sync_index(self._last_tree)

    def _place(
        self,
        path: str,
        st: os.stat_result,
        update: list[str],
        drop: list[str],
        uncaptured: dict[str, tuple[SkipReason, Fingerprint]],
        large: dict[str, PathState],
    ) -> None:
        """Sort one changed, not ignored path: git, the side store, or uncaptured."""
        if stat.S_ISDIR(st.st_mode):
            drop.append(path)  # a file or symlink that became a directory leaves the index
        elif stat.S_ISLNK(st.st_mode):
            update.append(path)
        elif not stat.S_ISREG(st.st_mode):  # a FIFO, socket or device: git stores none of them
            uncaptured[path] = ("not-a-file", fingerprint(st))
            drop.append(path)
        elif st.st_size > self.max_file_bytes:
            uncaptured[path] = ("too-large", fingerprint(st))
            drop.append(path)
        elif self.large is not None and self.large.wants_path(path, st):
            captured = self.large.capture(path, st)
            if captured.kind == "large":
                large[path] = captured
            else:
                uncaptured[path] = (captured.reason or "unstable", fingerprint(st))
            drop.append(path)
        else:
            update.append(path)

    def _write_tree(self, update: list[str], drop: list[str]) -> str:
        if update or drop or self._last_tree is None:
            try:
                with self._guard.hold():
                    return self._write_tree_held(update, drop)
            except IndexBusy as exc:
                raise SnapshotError(str(exc)) from None
        return self._last_tree

    def _write_tree_held(self, update: list[str], drop: list[str]) -> str:
        if update:
            # --replace: a path whose type changed (file <-> directory) displaces the index
            # entries in its way instead of failing the whole capture.
            self._git(
                "update-index",
                "-z",
                "--add",
                "--remove",
                "--replace",
                "--stdin",
                stdin=join_z(update),
            )
        if drop:
            self._git("update-index", "-z", "--force-remove", "--stdin", stdin=join_z(drop))
        self._last_tree = self._git("write-tree").decode().strip()
        return self._last_tree

    def _full_scan(self) -> Snapshot:
        self._ignored_cache.clear()
        self._ignore.restart()
        try:
            self._sync_index()
        except TreeError as exc:
            raise SnapshotError(str(exc)) from None
        changed = self._git(
            "ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"
        )
        ignored = self._git(
            "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
        )
        uncaptured: dict[str, tuple[SkipReason, Fingerprint]] = {}
        large: dict[str, PathState] = {}
        update: list[str] = []
        drop: list[str] = []
        parents: dict[str, bool] = {}
        # The regular files looked at, each with the clock read just before its lstat: what
        # the notes of `_note_scanned` are judged against.
        files: dict[str, tuple[os.stat_result, int]] = {}
        clock = self._inc.seen.clock
        for raw in split_z(changed):
            path = raw.decode("utf-8", "surrogateescape")
            if path.endswith("/"):  # an untracked nested repository: git shows only its root
                uncaptured[path.rstrip("/")] = (
                    "nested-repository",
                    fingerprint_dir(self.workspace / path),
                )
                continue
            looked_at = clock()
            st = lstat_entry(self.workspace, path, parents)
            if st is None:
                update.append(path)  # --remove drops it from the index
                continue
            if self._perms is not None:
                self._perms.pop(path, None)
                if (bits := unusual_perms(st)) is not None:
                    self._perms[path] = bits
            if stat.S_ISREG(st.st_mode):
                files[path] = (st, looked_at)
            self._place(path, st, update, drop, uncaptured, large)
        ignored_dirs = []
        for raw in split_z(ignored):
            path = raw.decode("utf-8", "surrogateescape").rstrip("/")
            if path == ".logician" or path.startswith(".logician/"):
                continue
            ignored_dirs.append(path)
            for sub, fp in fingerprint_ignored(self.workspace, path):
                uncaptured[sub] = ("ignored", fp)
        if self._perms is None:
            # Once per session: which files carry bits git cannot (a later change of one is
            # seen by the scans above, which update this map).
            self._perms = walk_unusual(self.workspace, [".git", ".logician", *ignored_dirs])
        # Many new files (the first snapshot): their blobs go into packs first, in parallel.
        prepack(
            self.workspace,
            self.store,
            update,
            self._env,
            max_bytes=self.max_file_bytes,
            progress=self._tell_scan,
        )
        tree = self._write_tree(update, drop)
        self._note_scanned(tree, update, files)
        return Snapshot(tree=tree, uncaptured=uncaptured, large=large, perms=dict(self._perms))

    def _note_scanned(
        self, tree: str, update: list[str], files: dict[str, tuple[os.stat_result, int]]
    ) -> None:
        """Note each regular file the scan handed to git with the blob git stored for it, so
        a rewind's plan need not read 20,000 files again after a scan (an inotify overflow).
        Safe though git read the file after our `lstat`: a note is trusted only for a file
        whose times were `RACY_NS` older than the clock read before that `lstat`, so any
        write after it gives the file another identity (its change time, at least), and the
        note no longer answers. Not noted as stored: git writes no blob the user's objects
        hold already."""
        seen = self._inc.seen
        try:
            for path in update:
                looked = files.get(path)
                entry = self._inc.trees.lookup(tree, path) if looked is not None else None
                if looked is not None and entry is not None and entry[0] in (MODE_FILE, MODE_EXEC):
                    seen.note(path, looked[0], looked[1], entry[0], entry[1], stored=False)
        except TreeError:
            return  # no note: the next look reads the file, as it always did

    def _tell_scan(self, done: int, total: int) -> None:
        if self.scan_progress is not None:  # read each time: it may be set once a scan began
            self.scan_progress(done, total)

    def snapshot_deferring_large(self) -> Snapshot:
        """A snapshot whose changed large files are noted, not copied yet (`finish_large`)."""
        if self.large is None:
            snap = self.snapshot()
            self._may_defer = True
            return snap
        self.large.defer = True
        try:
            return self.snapshot()
        finally:
            self.large.defer = False
            self._may_defer = True

    def finish_large(self) -> None:
        """Copy what `snapshot_deferring_large` noted into the side store."""
        if self.large is not None and self.large.pending and self._last is not None:
            self.large.finish_pending(self._last.large, self._last.uncaptured)  # type: ignore[arg-type]

    def directories(self) -> list[str]:
        """The workspace's directories as the change detector knows them (relative; none
        when it keeps no list): where a rewind looks for empty directories its frames made."""
        known = getattr(self._watcher, "directories", None)
        return known() if known is not None else []

    def invalidate(self) -> None:
        """Forget the cached state (after we rewrote files ourselves without a watcher)."""
        self._may_defer = False
        if self._watcher is None:
            self._last_tree = None
            self._last = None

    def reset(self) -> None:
        """The store vanished: forget everything cached; the next snapshot rescans in full."""
        self._last_tree = self._last = self._start = None
        self._inc.forget()
        self._may_defer = False
        self._ignored_cache.clear()
        self._ignore.restart()
        self._perms = None

    def diff(self, before: Snapshot, after: Snapshot) -> tuple[list[PathChange], list[SkippedPath]]:
        """What changed between two snapshots: captured changes and skipped (uncaptured) paths."""
        try:
            raw = self._trees.diff_raw(before.tree, after.tree)
        except TreeError as exc:
            raise SnapshotError(str(exc)) from None
        changes, skipped = snapshot_diff(raw, before, after)
        if before.perms or after.perms:
            changes = carry_perms(changes, before.perms, after.perms, self.hash_path)
        return changes, skipped
