"""The two sides of one changed file, read for showing: a frame's before and after, or a rewind
preview's now-on-disk and what the rewind would put back.

A side is read from where its bytes are kept: a git blob of the frame's snapshot, the large-file
side store, or the workspace on disk (through `Beneath`: a symlink in any component, or at the
file itself, is refused and named, never followed). Every side is streamed once: its size and
sha256 are computed as it goes, and only one page of it is kept (`PAGE_LINES` lines or
`PAGE_BYTES` bytes, whichever comes first), with the count of pages. An image is sent whole
(base64) only up to `MAX_IMAGE_BYTES`; a notebook's cells only up to `MAX_NOTEBOOK_BYTES`;
a binary file is its size and sha256.

Must never: follow a symlink out of the workspace, hold a whole large file in memory, or write
anything (reading only).
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import io
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from ..snapshots.beneath import Beneath, Conflict, PathRefused
from ..types.path_states import PathState

Kind = Literal["text", "csv", "image", "notebook", "binary"]
SideState = Literal["absent", "file", "uncaptured", "refused"]

PAGE_LINES = 2000
PAGE_BYTES = 256 * 1024
MAX_IMAGE_BYTES = 2 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 4 * 1024 * 1024
SNIFF_BYTES = 8192
_CHUNK = 1 << 20

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
}
CSV_SUFFIXES = (".csv", ".tsv")


@dataclass(frozen=True)
class Side:
    """One side of a file: its state, and how to open its bytes when it has them."""

    state: SideState
    opener: Callable[[], IO[bytes]] | None = None
    size: int | None = None
    note: str = ""


def absent() -> Side:
    return Side("absent")


def from_state(
    state: PathState, read_blob: Callable[[str], bytes], large_path: Callable[[str], Path] | None
) -> Side:
    """The side a snapshot recorded: a git blob, a large file in the side store, or nothing."""
    if state.kind == "absent":
        return absent()
    if state.kind == "blob" and state.sha:
        sha = state.sha
        if state.mode == "120000":
            return Side("uncaptured", note="a symlink (its target is not shown)")
        return Side("file", lambda: io.BytesIO(read_blob(sha)))
    if state.kind == "large" and state.sha and large_path is not None:
        path = large_path(state.sha)
        return Side("file", lambda: open(path, "rb"), size=path.stat().st_size)
    size = state.fingerprint.size if state.fingerprint else None
    return Side("uncaptured", size=size, note="its content was not captured")


def on_disk(root: Path, path: str) -> Side:
    """The file as it is now in the workspace, reached beneath `root` without a symlink."""
    with Beneath(root) as tree:
        try:
            fd = tree.open_read(path)
        except (Conflict, PathRefused) as exc:
            return Side("refused", note=str(exc))
    if fd is None:
        return absent()
    os.close(fd)

    def opener() -> IO[bytes]:
        with Beneath(root) as again:
            fd = again.open_read(path)
        if fd is None:
            raise FileNotFoundError(f"{path}: removed while it was read")
        return os.fdopen(fd, "rb")

    return Side("file", opener)


def kind_of(path: str, sides: tuple[Side, Side]) -> Kind:
    """What the file is, by its name, else by the first bytes of a side that has them."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in CSV_SUFFIXES:
        return "csv"
    if suffix in IMAGE_TYPES:
        return "image"
    if suffix == ".ipynb":
        return "notebook"
    for side in sides:
        if side.opener is not None:
            with side.opener() as f:
                head = f.read(SNIFF_BYTES)
            return "text" if _looks_text(head) else "binary"
    return "text"


def _looks_text(head: bytes) -> bool:
    if b"\0" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return True


def read_side(
    side: Side, kind: Kind, path: str, page: int = 1, notebook: list[bytes] | None = None
) -> dict[str, Any]:
    """The side as the diff view shows it: state, size, sha256, and page `page` (1-based) of
    its lines, or the image / notebook cells, with `pages` (how many pages it has). A
    notebook's bytes (within the bound) are also appended to `notebook`, for matching its
    cells against the other side's."""
    out: dict[str, Any] = {"state": side.state, "size": side.size, "sha256": None, "pages": 0}
    if side.note:
        out["note"] = side.note
    if side.opener is None:
        return out
    digest = hashlib.sha256()
    size = 0
    keep: list[bytes] = []
    kept = 0
    cap = {"image": MAX_IMAGE_BYTES, "notebook": MAX_NOTEBOOK_BYTES}.get(kind, 0)
    pager = _Pager(page) if kind in ("text", "csv") else None
    try:
        with side.opener() as f:
            for chunk in _chunks(f):
                digest.update(chunk)
                size += len(chunk)
                if pager is not None:
                    pager.feed(chunk)
                elif kept <= cap:
                    keep.append(chunk)
                    kept += len(chunk)
    except (Conflict, PathRefused) as exc:
        return {**out, "state": "refused", "note": str(exc)}
    out.update(size=size, sha256=digest.hexdigest())
    if pager is not None:
        pager.end()
        out.update(pages=pager.pages, page=min(page, max(pager.pages, 1)), text=pager.text())
        out["first_line"] = pager.first_line
    elif kind == "image":
        if size <= MAX_IMAGE_BYTES:
            suffix = os.path.splitext(path)[1].lower()
            out.update(mime=IMAGE_TYPES.get(suffix, "application/octet-stream"))
            out["data"] = base64.b64encode(b"".join(keep)).decode("ascii")
        else:
            out["note"] = f"{size:,} bytes: larger than {MAX_IMAGE_BYTES:,}, not shown"
    elif kind == "notebook":
        if size <= MAX_NOTEBOOK_BYTES:
            data = b"".join(keep)
            out["cells"] = notebook_cells(data)
            out["pages"] = 1
            if notebook is not None:
                notebook.append(data)
        else:
            out["note"] = f"{size:,} bytes: larger than {MAX_NOTEBOOK_BYTES:,}, cells not shown"
    return out


def _chunks(f: IO[bytes]) -> Iterator[bytes]:
    while chunk := f.read(_CHUNK):
        yield chunk


def notebook_cells(data: bytes) -> list[dict[str, str]]:
    """Each cell's type and source; a notebook that is not valid JSON is one raw cell."""
    try:
        nb = json.loads(data)
        cells = nb["cells"]
        return [
            {
                "cell_type": str(c.get("cell_type", "code")),
                "source": "".join(c["source"])
                if isinstance(c.get("source"), list)
                else str(c.get("source", "")),
            }
            for c in cells
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        return [{"cell_type": "raw", "source": data.decode("utf-8", "replace")}]


class _Pager:
    """Splits streamed bytes into pages of lines, keeping only page `want` (1-based)."""

    def __init__(self, want: int) -> None:
        self.want = max(want, 1)
        self.pages = 0
        self.first_line = 1
        self._line = 1
        self._partial = b""
        self._lines = 0
        self._bytes = 0
        self._kept: list[bytes] = []
        self._started = False

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._add(data[start : end + 1])
            start = end + 1
        self._partial = data[start:]
        if len(self._partial) > PAGE_BYTES:  # one very long line: cut it into pages
            self._add(self._partial)
            self._partial = b""

    def end(self) -> None:
        if self._partial:
            self._add(self._partial)
            self._partial = b""

    def _add(self, line: bytes) -> None:
        if not self._started or self._lines >= PAGE_LINES or self._bytes + len(line) > PAGE_BYTES:
            self.pages += 1
            self._started = True
            self._lines = self._bytes = 0
            if self.pages == self.want:
                self.first_line = self._line
        self._lines += 1
        self._bytes += len(line)
        self._line += 1
        if self.pages == self.want:
            self._kept.append(line)

    def text(self) -> str:
        if not self._kept and self.pages:  # a page past the end: the last one is not kept
            return ""
        return b"".join(self._kept).decode("utf-8", "replace")


def large_store_path(store_root: Path) -> Callable[[str], Path]:
    """Where the side store under `store_root` keeps the object of a key."""

    def where(key: str) -> Path:
        digest = key.split("-", 2)[1]
        return store_root / "objects" / digest[:2] / key

    return where
