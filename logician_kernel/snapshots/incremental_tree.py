"""The in-process half of a snapshot: the last tree with the paths a cell changed replaced,
and the private index told about it before git next reads the index.

Owns what a changed cell's snapshot writes: each changed file's or symlink's blob (read once,
written as a loose object, or into one pack when a cell changed many: git_pack.py) and,
through git_trees.py, the subtrees on the way to it. The private index is not written per
frame: the paths written here are remembered (`lag`) and a full scan first hands them to git in one `update-index --index-info` (`sync_index`), so the
index tracks exactly what it would have tracked had each frame updated it.

Must never: follow a symlink to read what it points at, raise for a path that is merely gone,
or raise anything but `SnapshotError` for one that cannot be read or stored.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ._fs import MODE_LINK, file_mode, read_file, write_loose_blob
from .git_pack import PackWriter, pack_writer
from .git_store import GitStore, SnapshotError
from .git_trees import MODE_TREE, Entry, TreeError, TreeStore
from .locks import IndexBusy
from .stat_memory import Looked, StatMemory
from .type_changes import lstat_entry


class IncrementalTrees:
    """Trees of one store built from changed paths; `lag` is what the index has not heard."""

    def __init__(self, workspace: Path, git: GitStore) -> None:
        self.workspace = Path(workspace)
        self._root = os.fspath(workspace)
        self._objects = git.store / "objects"
        self.git = git
        self.trees = TreeStore(self._objects, git.read_not_loose)
        self.packed: set[str] = set()
        """Blobs this session wrote into packs (in our store, though not as loose files)."""
        self.lag: set[str] = set()
        """Paths whose tree entries were written here since the index last heard of them."""
        self.seen = StatMemory()
        """Each file's identity and blob as stored here: a rewind reads it, not the file."""

    def update(
        self,
        base: str,
        update: list[str],
        drop: list[str],
        looks: dict[str, Looked] | None = None,
    ) -> str:
        """`base` with `update`'s paths as they are on disk now and `drop`'s removed; the
        private index is left as it is (`sync_index` catches it up). `looks`: the `lstat` the
        caller just took of a path (beneath no symlinked folder), and the clock before it."""
        looks = looks if looks is not None else {}
        changes: dict[str, Entry | None] = dict.fromkeys(drop)
        # Many blobs go into one pack (git_pack.py), written before any tree names them.
        pack = pack_writer(self._objects, self.packed, len(update))
        parents: dict[str, bool] = {}  # symlinked parents: each folder looked at once
        for path in update:
            changes[path] = self.blob_entry(path, pack, parents, looked=looks.get(path))
        if pack is not None:
            try:
                pack.flush()
            except OSError as exc:
                for path in update:
                    self.seen.forget(path)  # their blobs never reached the store
                raise SnapshotError(
                    f"cannot store {len(update)} files in {self.git.store}: {exc.strerror or exc}"
                ) from None
        try:
            tree = self.trees.update(base, changes) if changes else base
        except TreeError as exc:
            raise SnapshotError(str(exc)) from None
        self.lag.update(changes)
        return tree

    def sync_index(self, last_tree: str) -> None:
        """Tell the private index what was written here, before git reads it: the entries of
        `last_tree` for the lagging paths (no stat data, so git compares their content once),
        and removals for paths no longer there. A path the index tracks stays captured when an
        ignore rule later matches it, exactly as if each frame had updated the index."""
        lag, self.lag = self.lag, set()
        if not lag:
            return
        lines = []
        for path in sorted(lag):
            entry = self.trees.lookup(last_tree, path)
            mode, sha = entry if entry is not None and entry[0] != MODE_TREE else ("0", "0" * 40)
            lines.append(f"{mode} {sha}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
        try:
            with self.git.guard.hold():
                self.git.run(
                    "update-index", "-z", "--replace", "--index-info", stdin=b"".join(lines)
                )
        except IndexBusy as exc:
            raise SnapshotError(str(exc)) from None

    def forget(self) -> None:
        """The store was recreated: nothing written before counts."""
        self.lag.clear()
        self.packed.clear()
        self.seen.forget()

    def blob_entry(
        self,
        path: str,
        pack: PackWriter | None = None,
        parents: dict[str, bool] | None = None,
        *,
        again: bool = False,
        looked: Looked | None = None,
    ) -> Entry | None:
        """The tree entry of a file or symlink as it is now, its blob stored (in `pack` when
        given, else loose); None if gone. `parents` is the symlinked-parent answers of this
        update (one look per folder, not per path); without it the parents are looked at
        afresh. `looked`: the caller's `lstat_entry` of the path and the clock before it, used
        instead of a new look (the read still refuses anything but the regular file it was:
        a path swapped since is looked at again)."""
        st: os.stat_result | None
        if looked is not None and not again:
            looked_at, st = looked
        else:
            looked_at = self.seen.clock()
            st = lstat_entry(self._root, path, parents)
        if st is None:
            return None
        full = os.path.join(self._root, path)
        try:
            if stat.S_ISLNK(st.st_mode):
                data, mode = os.readlink(full).encode("utf-8", "surrogateescape"), MODE_LINK
            elif stat.S_ISREG(st.st_mode):
                read = read_file(full, st.st_size)
                if read is None:  # swapped for a symlink (or a FIFO) since the lstat
                    return None if again else self.blob_entry(path, pack, parents, again=True)
                data, mode = read, file_mode(st.st_mode)
            else:
                return None
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise SnapshotError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            sha = pack.add(data) if pack is not None else write_loose_blob(self._objects, data)
        except OSError as exc:
            raise SnapshotError(
                f"cannot store {path} in {self.git.store}: {exc.strerror or exc}"
            ) from None
        self.seen.note(path, st, looked_at, mode, sha, stored=True)
        return mode, sha
