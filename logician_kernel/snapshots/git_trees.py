"""Git tree objects read, rebuilt and compared in this process: a changed cell's snapshot
without a git process.

Owns tree objects for the incremental half of a snapshot (incremental_tree.py reads the
changed files and keeps the private index informed). When the change detector names the
paths a cell changed, the new tree is the last one with those entries replaced: the subtrees on the way to
each path are rebuilt (a handful of small objects), and the frame's diff walks only the
subtrees whose ids differ. Both were three short git processes per changed cell (update-index,
write-tree, diff-tree, about 17 ms at 1k files); here they cost well under a millisecond
(`tests/bench/bench_git_paths.py`). The objects are the ones git would write - same bytes,
same ids - so git reads them (`cat-file`, rewinds, `fsck`) as its own.

The private index is not updated on this path; it lags until the next full scan, which first
hands git the lagging paths' entries (`IncrementalTrees.sync_index`), so the tree that scan
writes is exact and the index tracks what it would have tracked anyway.

Must never: write an object under a name other than its id, leave a partly written object
(write to a private temporary name, then rename), keep an empty directory in a tree, or use a
loose object whose bytes do not hash to its name or that is reached through a symlink.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..durable.lease import boot_id
from ..durable.private import PRIVATE_DIR, write_private

MODE_TREE = "40000"
Entry = tuple[str, str]
"""A tree entry: (git mode, hex object id)."""
Entries = Mapping[bytes, Entry]
_CACHE_ENTRIES = 32_768
"""Entries of the trees kept parsed, the least recently used tree dropped first: each frame
rewrites the trees on its changed paths, and the versions it supersedes must not pile up
frame after frame in an idle kernel's memory (a frame's work reads the root and the trees on
its paths: a 100k-file workspace's root holds ~1k entries, each of its directories ~100)."""


class TreeError(RuntimeError):
    """A tree object is missing or malformed; the message names it."""


def object_id(kind: bytes, body: bytes) -> str:
    return hashlib.sha1(b"%s %d\0" % (kind, len(body)) + body, usedforsecurity=False).hexdigest()


def matches_id(sha: str, kind: str, body: bytes) -> bool:
    """Whether an object read back (kind as text, body) is the one named `sha`: git's readers
    do not check, and a store may hold planted bytes under a name."""
    return object_id(kind.encode(), body) == sha


def write_loose(objects: Path, kind: bytes, body: bytes) -> str:
    """Store one object as a loose file unless it is there already; its id."""
    raw = b"%s %d\0" % (kind, len(body)) + body
    sha = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    # Strings, not Path objects: a cell that changed thousands of files stores as many blobs.
    fan_out = os.path.join(objects, sha[:2])
    obj = os.path.join(fan_out, sha[2:])
    if not os.path.exists(obj):
        # Only the fan-out directory: a store that vanished is not silently begun again here
        # (the session notices and recreates it, saying so).
        try:
            os.mkdir(fan_out, PRIVATE_DIR)
        except FileExistsError:
            pass
        place_new(obj, zlib.compress(raw, 1))
    return sha


class DamagedObject(RuntimeError):
    """A loose object that is not what its name says: a symlink, not zlib, a malformed
    header, a size or a hash that does not match its id. Planted or broken; never used."""


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def read_loose(objects: str | Path, sha: str) -> tuple[str, bytes] | None:
    """(kind, body) of the loose object `sha`, checked against its id; None when there is
    no loose object of that name (packed, in the user's store, or missing: ask git).

    Neither the fan-out directory nor the object is followed through a symlink, and the
    bytes must hash to `sha`: whatever stands under that name may have been written by
    someone else (a shipped `.logician/`), and a rewind writes it into the user's file."""
    try:
        dir_fd = os.open(
            os.path.join(objects, sha[:2]), _READ_FLAGS | getattr(os, "O_DIRECTORY", 0)
        )
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DamagedObject(f"object folder {sha[:2]}/ cannot be opened: {exc.strerror}") from None
    try:
        fd = os.open(sha[2:], _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DamagedObject(f"object {sha[:12]} cannot be opened: {exc.strerror}") from None
    finally:
        os.close(dir_fd)
    try:
        with os.fdopen(fd, "rb") as f:
            raw = zlib.decompress(f.read())
    except (OSError, zlib.error) as exc:
        raise DamagedObject(f"object {sha[:12]} is unreadable: {exc}") from None
    header, nul, body = raw.partition(b"\0")
    kind, _, size = header.partition(b" ")
    if not nul or kind not in _KINDS or size != b"%d" % len(body):
        raise DamagedObject(f"object {sha[:12]} has a malformed header")
    if object_id(kind, body) != sha:
        raise DamagedObject(f"object {sha[:12]} does not hash to its name")
    return kind.decode(), body


_KINDS = frozenset((b"blob", b"tree", b"commit", b"tag"))


def _machine_tag() -> str:
    """8 hex digits naming this machine and boot: a temporary file's process id means
    something only where the tag matches (store_repair.py)."""
    return hashlib.sha1(f"{socket.gethostname()}\0{boot_id()}".encode()).hexdigest()[:8]


MACHINE_TAG = _machine_tag()


def temp_name(final: str) -> str:
    """The private temporary name `final` is written under first: `<final>.<machine>-<pid>.
    <random>.tmp`, so two kernels storing the same object at once never share one, and a
    store repair can tell a writer killed on this machine from one still writing."""
    return f"{final}.{MACHINE_TAG}-{os.getpid()}.{os.urandom(4).hex()}.tmp"


def place_new(final: str, data: bytes) -> None:
    """Write `data` under a private temporary name of this process's own (`temp_name`), then
    rename it to `final`."""
    tmp = temp_name(final)
    try:
        write_private(tmp, data)
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _sort_key(item: tuple[bytes, Entry]) -> bytes:
    # Git orders a directory as if its name ended in "/".
    name, (mode, _) = item
    return name + b"/" if mode == MODE_TREE else name


def serialize(entries: Entries) -> bytes:
    return b"".join(
        b"%s %s\0%s" % (mode.encode(), name, bytes.fromhex(sha))
        for name, (mode, sha) in sorted(entries.items(), key=_sort_key)
    )


def parse(body: bytes) -> dict[bytes, Entry]:
    out: dict[bytes, Entry] = {}
    pos, end = 0, len(body)
    while pos < end:
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        out[body[space + 1 : nul]] = (body[pos:space].decode(), body[nul + 1 : nul + 21].hex())
        pos = nul + 21
    return out


class TreeStore:
    """Parsed trees of one object store, and the two operations a frame needs on them."""

    def __init__(self, objects: Path, read_object: Callable[[str], tuple[str, bytes]]) -> None:
        self.objects = Path(objects)
        self._read_object = read_object
        """Fallback reader (kind, body) for trees that are not loose (packed, alternates)."""
        self._cache: OrderedDict[str, dict[bytes, Entry]] = OrderedDict()
        self._cached_entries = 0
        self._superseded: set[str] = set()
        """Trees the last `update` replaced by new versions: kept for that frame's diff, let
        go at the next update (an idle kernel's memory must not grow frame after frame with
        versions nobody reads; a rewind that wants one reads it back)."""

    def entries(self, sha: str) -> Mapping[bytes, Entry]:
        cached = self._cache.get(sha)
        if cached is None:
            cached = parse(self._load(sha))
            self._remember(sha, cached)
        else:
            self._cache.move_to_end(sha)
        return cached

    def _load(self, sha: str) -> bytes:
        try:
            loose = read_loose(self.objects, sha)
        except DamagedObject as exc:
            raise TreeError(f"tree {sha[:12]} in {self.objects.parent}: {exc}") from None
        # Not loose: packed, or in the user's store (alternates): git's reader checks it.
        kind, body = loose if loose is not None else self._read_object(sha)
        if kind != "tree":
            raise TreeError(f"{sha[:12]} in {self.objects.parent} is a {kind}, not a tree")
        return body

    def _remember(self, sha: str, entries: dict[bytes, Entry]) -> None:
        old = self._cache.pop(sha, None)
        if old is not None:
            self._cached_entries -= len(old)
        self._cache[sha] = entries
        self._cached_entries += len(entries)
        while self._cached_entries > _CACHE_ENTRIES and len(self._cache) > 1:
            _, dropped = self._cache.popitem(last=False)
            self._cached_entries -= len(dropped)

    def write(self, entries: dict[bytes, Entry]) -> str:
        try:
            sha = write_loose(self.objects, b"tree", serialize(entries))
        except OSError as exc:
            raise TreeError(
                f"cannot write a tree to {self.objects}: {exc.strerror or exc}"
            ) from exc
        self._remember(sha, entries)
        return sha

    def lookup(self, root: str, path: str) -> Entry | None:
        """The entry at `path` in tree `root`, or None."""
        entry: Entry | None = (MODE_TREE, root)
        for part in path.encode("utf-8", "surrogateescape").split(b"/"):
            if entry is None or entry[0] != MODE_TREE:
                return None
            entry = self.entries(entry[1]).get(part)
        return entry

    # -- update ----------------------------------------------------------------------------

    def update(self, root: str, changes: Mapping[str, Entry | None]) -> str:
        """The tree `root` with each path set to its entry (None: removed). A path set under
        a name that is a file replaces the file, as `update-index --replace` does."""
        split = [(p.encode("utf-8", "surrogateescape").split(b"/"), e) for p, e in changes.items()]
        old, self._superseded = self._superseded, set()
        for sha in old:
            self._forget(sha)
        return self._update(root, split) or self.write({})

    def _forget(self, sha: str) -> None:
        dropped = self._cache.pop(sha, None)
        if dropped is not None:
            self._cached_entries -= len(dropped)

    def _update(
        self, sha: str | None, changes: Iterable[tuple[list[bytes], Entry | None]]
    ) -> str | None:
        entries = dict(self.entries(sha)) if sha else {}
        below: dict[bytes, list[tuple[list[bytes], Entry | None]]] = {}
        for parts, entry in changes:
            if len(parts) > 1:
                below.setdefault(parts[0], []).append((parts[1:], entry))
            elif entry is None:
                entries.pop(parts[0], None)
            else:
                entries[parts[0]] = entry
        for name, sub in below.items():
            current = entries.get(name)
            is_tree = current is not None and current[0] == MODE_TREE
            new = self._update(current[1] if is_tree else None, sub)  # type: ignore[index]
            if new is not None:
                entries[name] = (MODE_TREE, new)
            elif is_tree:
                entries.pop(name)  # emptied: git keeps no empty directory
        if not entries:
            if sha is not None:
                self._superseded.add(sha)
            return None
        if sha is not None and entries == self.entries(sha):
            return sha
        new_sha = self.write(entries)
        self._superseded.discard(new_sha)  # the same tree again elsewhere stays
        if sha is not None:
            self._superseded.add(sha)
        return new_sha

    # -- diff ------------------------------------------------------------------------------

    def diff_raw(self, before: str, after: str) -> bytes:
        """`git diff-tree -r -z --no-renames --raw before after`, computed here."""
        out: list[bytes] = []
        self._diff(before, after, b"", out)
        return b"".join(out)

    def _diff(self, a: str | None, b: str | None, prefix: bytes, out: list[bytes]) -> None:
        if a == b:
            return
        # Merge the two sides in git's order. A name that is a file on one side and a
        # directory on the other sorts twice ("a" before "a.txt" before "a/"): two changes.
        sides: dict[bytes, list[tuple[bytes, Entry] | None]] = {}
        for i, entries in enumerate((self.entries(a) if a else {}, self.entries(b) if b else {})):
            for item in entries.items():
                sides.setdefault(_sort_key(item), [None, None])[i] = item
        for key in sorted(sides):
            old, new = sides[key]
            x, y = old and old[1], new and new[1]
            if x == y:
                continue
            path = prefix + (old or new)[0]  # type: ignore[index]
            if (x or y)[0] == MODE_TREE:  # type: ignore[index]
                self._diff(x and x[1], y and y[1], path + b"/", out)
            else:
                out.append(_raw_line(x, y, path))


_NONE: Entry = ("000000", "0" * 40)


def _raw_line(x: Entry | None, y: Entry | None, path: bytes) -> bytes:
    status = "A" if x is None else "D" if y is None else "M" if x[0][:2] == y[0][:2] else "T"
    (om, os_), (nm, ns) = x or _NONE, y or _NONE
    return f":{om:0>6} {nm:0>6} {os_} {ns} {status}".encode() + b"\0" + path + b"\0"
