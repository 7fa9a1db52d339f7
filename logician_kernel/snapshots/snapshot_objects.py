"""One path's captured version: read, hashed and stored in the snapshot's object store.

Owns what a rewind, an undo, a diff or a frame's pre-images ask of the store one path or one
object at a time: the content of a captured version (`read_blob`, checked against its id by
the store's reader, or from a `blob_stream` pass), the state of a path now, hashed
(`hash_path`) or stored (`store_path`, `store_looked`, into one pack inside `blob_batch`),
and what this session already knows of a file without reading it again (stat_memory.py's
racy rule). A mix-in of `GitSnapshotter`, which owns the store, the trees and the snapshots.

Must never: read or store the bytes behind a parent that is not a plain directory (a symlink
to outside the workspace), store a blob only in the user's objects (alternates) when a frame
needs it as a pre-image, or let a batch's blobs be named before the pack is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..types.path_states import PathState
from ._fs import MODE_EXEC, MODE_FILE, path_state, store_path, write_loose_blob
from .beneath import blocked_parent
from .blob_stream import STREAM_MIN_BLOBS, BlobStream
from .git_pack import PackWriter, pack_writer
from .git_store import GitStore, SnapshotError
from .incremental_tree import IncrementalTrees
from .large_files import LargeFiles
from .perms import unusual_perms, with_perms
from .stat_memory import Identity, Looked


class SnapshotObjects:
    """The object half of `GitSnapshotter` (see the module docstring)."""

    workspace: Path
    store: Path
    large: LargeFiles | None
    max_file_bytes: int
    git: GitStore
    _objects: Path
    _env: dict[str, str]
    _inc: IncrementalTrees
    _may_defer: bool
    _batch: PackWriter | None
    _stream: BlobStream | None

    def read_blob(self, sha: str) -> bytes:
        """The content of one captured file version."""
        self._may_defer = False
        streamed = self._stream.take(sha) if self._stream is not None else None
        kind, data = streamed if streamed is not None else self.git.read_object(sha)
        if kind != "blob":
            raise SnapshotError(f"{sha[:12]} in {self.store} is a {kind!r}, not a file version")
        return data

    def hash_path(self, path: str, looked: Looked | None = None) -> PathState:
        """The state of a workspace path now, hashed the way a snapshot would (not stored).
        `looked`: (the clock read just before, its `lstat`) when the caller took them through
        a `Beneath` walk (no parent is a symlink): not looked at again (a plan of 20,000)."""
        self._may_defer = False
        seen = self._path_look(path, looked)
        if seen is None:
            return PathState.absent()
        looked_at, st = seen
        if st is not None and self._is_large(path, st):
            return self.large.current(path, st)  # type: ignore[union-attr]
        known = self._recalled(path, st)
        if known is not None:
            return known  # as stored or hashed when last read: not read again
        state = path_state(os.path.join(self.workspace, path), self.max_file_bytes, st)
        self._note(path, st, looked_at, state, stored=False)
        return state

    def remembers(self, path: str, st: os.stat_result | None, state: PathState) -> bool:
        """Whether the file is still the blob `state`, known without reading it: `st` (its
        `lstat` now, which the caller took without following a parent symlink) is exactly
        what this session last stored or hashed as that blob, under stat_memory.py's racy
        rule. False means "not known", never "changed": hash it (`hash_path`)."""
        self._may_defer = False
        if st is None or state.kind != "blob" or st.st_size > self.max_file_bytes:
            return False
        if self._is_large(path, st):
            return False
        return self._inc.seen.recall(path, st) == (state.mode, state.sha)

    def wrote(self, path: str, st: os.stat_result, state: PathState) -> None:
        """`path` now holds `state`'s bytes, written by this session, `st` being what
        `Beneath.write_file` returned: a later plan or undo knows the file by that `lstat`
        without reading it (stat_memory.py, `wrote`)."""
        if state.kind == "blob" and state.mode in (MODE_FILE, MODE_EXEC) and state.sha:
            self._inc.seen.wrote(path, st, state.mode, state.sha)

    def _path_look(
        self, path: str, looked: Looked | None
    ) -> tuple[int, os.stat_result | None] | None:
        """`looked` when the caller took it, else the clock and the path's `lstat` now; None
        when a parent is not a plain directory: not an entry of the workspace tree (as a
        snapshot sees it: lstat_entry), and the bytes behind a symlinked parent lie outside,
        never read nor stored (beneath.py)."""
        if looked is not None:
            return looked
        if "/" in path and blocked_parent(self.workspace, path) is not None:
            return None
        return self._inc.seen.clock(), self._lstat(path)

    def store_path(self, path: str) -> PathState:
        """The state of a workspace path now, its content stored in our object store."""
        return self.store_looked(path)[0]

    def store_looked(
        self, path: str, looked: Looked | None = None
    ) -> tuple[PathState, os.stat_result | None]:
        """`store_path`, with the `lstat` it judged the path by (None: absent, or behind a
        parent that is not a plain directory): a rewind plan takes the path's bits and owner
        from it instead of a look of its own. `looked`: as for `hash_path`."""
        seen = self._path_look(path, looked)
        if seen is None:
            return PathState.absent(), None  # nothing outside is stored
        looked_at, st = seen
        if st is not None and self._is_large(path, st):
            return self.large.capture(path, st), st  # type: ignore[union-attr]
        known = self._recalled(path, st, stored=True)
        if known is not None and st is not None:  # its blob is in the store already
            return with_perms(known, unusual_perms(st)), st
        write = self._batch.add if self._batch is not None else None
        full = os.path.join(self.workspace, path)
        stored = store_path(full, self.max_file_bytes, self._objects, write, st)
        # A blob of a batch is stored only once the batch is flushed: noted as hashed.
        self._note(path, st, looked_at, stored, stored=self._batch is None)
        if st is None:
            return with_perms(stored, _unusual_at(Path(full))), None
        return with_perms(stored, unusual_perms(st)), st

    def stored(self, states: Iterable[PathState]) -> None:
        """Blobs frames recorded: those in our own store (not only in the user's objects,
        through alternates) need no second write by a `store_path` of a file last hashed to
        them. Checked without reading them (no git; one `stat` each with alternates)."""
        borrowed = self._borrows()
        for state in states:
            if state.kind == "blob" and state.sha and self._own(state.sha, borrowed):
                self._inc.seen.stored(state.sha)

    def _borrows(self) -> bool:
        return os.path.exists(os.path.join(self.store, "objects", "info", "alternates"))

    def _own(self, sha: str, borrowed: bool | None = None) -> bool:
        if sha in self._inc.packed or not (self._borrows() if borrowed is None else borrowed):
            return True
        return os.path.exists(os.path.join(self.store, "objects", sha[:2], sha[2:]))

    @contextmanager
    def blob_stream(self, shas: list[str]) -> Iterator[None]:
        """`read_blob` answers `shas`, asked in this order, from one `cat-file --batch` pass
        (blob_stream.py) inside the block; few of them are read one by one as always."""
        if len(shas) < STREAM_MIN_BLOBS or self._stream is not None:
            yield
            return
        self.git.verify()
        self._stream = BlobStream(str(self.store), self._env, shas)
        try:
            yield
        finally:
            self._stream.close()
            self._stream = None

    @contextmanager
    def blob_batch(self, count: int) -> Iterator[None]:
        """The blobs `store_path` stores for `count` paths inside the block go into one pack,
        written when the block ends, before anything durable may name them (a rewind plan of
        20,000 paths); loose, as always, for a few (`git_pack.pack_writer`)."""
        self._batch = pack_writer(self.store / "objects", self._inc.packed, count)
        try:
            yield
            if self._batch is not None:
                self._batch.flush()
        finally:
            self._batch = None

    def _lstat(self, path: str) -> os.stat_result | None:
        try:
            return os.lstat(os.path.join(self.workspace, path))
        except OSError:
            return None

    def _is_large(self, path: str, st: os.stat_result) -> bool:
        return (
            self.large is not None
            and st.st_size <= self.max_file_bytes
            and self.large.wants_path(path, st)
        )

    def _recalled(
        self, path: str, st: os.stat_result | None, *, stored: bool = False
    ) -> PathState | None:
        """The state this session last read for the file, when `st` shows it untouched
        since (stat_memory.py; `stored`: with its blob in the store); None: read it."""
        if st is None or st.st_size > self.max_file_bytes:
            return None
        found = self._inc.seen.recall(path, st, stored=stored)
        if found is None:
            return None
        mode, sha = found
        # Validated, not `model_construct`: pydantic-core's validation is 3x faster than it.
        return PathState.blob(mode, sha)

    def _note(
        self,
        path: str,
        st: os.stat_result | None,
        looked_at: int,
        state: PathState,
        *,
        stored: bool,
    ) -> None:
        if st is not None and state.kind == "blob" and state.mode and state.sha:
            self._inc.seen.note(path, st, looked_at, state.mode, state.sha, stored=stored)

    def write_blob(self, data: bytes) -> str:
        """Store bytes in our own object store (never only in the user's, via alternates)."""
        return write_loose_blob(self.store / "objects", data)

    def looked_since(self, path: str, since: int) -> Identity | None:
        """What a look at `path` from the clock reading `since` on found (inode, device, size,
        mode, times) as it stored the file's bytes, else None (stat_memory.py)."""
        return self._inc.seen.looked_since(path, since)

    def own_blob(self, sha: str) -> None:
        """Make sure a pre-image lives in our store even if it came from the user's objects."""
        if self._own(sha):  # strings: once per pre-image
            return
        may_defer = self._may_defer  # part of closing a frame, not a look at its files
        self.write_blob(self.read_blob(sha))
        self._may_defer = may_defer


def _unusual_at(full: Path) -> int | None:
    try:
        return unusual_perms(os.lstat(full))
    except OSError:
        return None
