"""What the kernel sends on the `logician` comm about frames: the frame list, a rewind's
preview (paged) and its files and diffs, a rewind's, undo's or resume's answer, the calls of
a frame, and the announcements a rewind makes (progress, frames changed, undone). Parts of
answers pass extra keys (a newer kernel may add a field an older frontend ignores).

Must never: do I/O or talk to a comm (the models are plain data; `comm.py` owns the wire).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import MISSING, Field

from ..types.rewind_scope import RestoreOperation
from .comm_base import Count, _Answer, _Kernel, _Part


class FrameRow(_Part):
    """One frame in the sidebar's list."""

    frame: Annotated[int, Field(ge=1)]
    execution_count: int | None
    cell_id: str | None
    code: Annotated[str, Field(max_length=240)]
    """The cell's code, cut short."""
    time: str
    """When the frame opened, ISO 8601."""
    outcome: str | None
    status: Literal["open", "active", "rewound"]
    rewound_at: str | None | MISSING = MISSING
    rewound_by: int | None | MISSING = MISSING
    """The ledger entry of the rewind that popped it."""
    files: Count
    """Paths it changed."""
    skipped: Count | MISSING = MISSING
    evicted: Annotated[list[str], Field(max_length=20)] | MISSING = MISSING
    """Paths whose large pre-image the disk budget evicted (absent when none was)."""
    incomplete: str | MISSING = MISSING
    """"rewind incomplete: N path(s) failed" while a rewind of it left paths failed."""
    input_tokens: Count
    output_tokens: Count


class PathDetail(_Part):
    """A path and what about it."""

    path: str
    detail: str


class CallLine(_Part):
    """One tool call of a frame, as its *Rewind this call* button shows it."""

    id: str
    tool: str
    words: str
    """A few words: the bash command, the path written, the code's first line."""
    files: list[str]
    """The files attribution credited to the call."""
    undoable: bool
    """Whether `rewind --call` can take it back now."""
    why_not: str
    """Why not, when it cannot ("it changed no file", "already rewound ...")."""
    rewound: bool
    """A call rewind took it back (and was not undone)."""


class PreviewFile(_Part):
    """What a rewind would do to one path."""

    path: str
    action: Literal["restore", "delete", "recreate"]
    """`delete`: a popped cell created it; `recreate`: a popped cell deleted it (absent now);
    `restore`: its bytes are put back."""


class CellStep(_Part):
    """What a rewind would do to one cell the agent edited."""

    id: str
    """The cell's id."""
    action: Literal["remove", "restore", "re-insert"]
    detail: str
    """In words, e.g. `inserted by the agent → removed`."""


class PreviewGroup(_Part):
    """The files of one directory a rewind would touch, counted."""

    directory: str
    """`data/parts/`; `` for the workspace's top level."""
    below: bool
    """It also holds the files of its subdirectories (folded to keep the groups few)."""
    delete: Count
    """Files the rewind deletes (the popped cells created them)."""
    restore: Count
    """Files it brings back as they were (changed or deleted by the popped cells)."""
    recreate: Count
    """Of `restore`, the files the popped cells deleted (the rewind recreates them)."""


class PreviewCell(_Part):
    """A cell whose frame the rewind pops."""

    frame: int
    execution_count: int | None
    """Its `In [n]`; null when unknown."""


class VariableStep(_Part):
    """What a rewind would do to one user variable."""

    name: str
    action: Literal["restore", "delete", "not-restorable", "not-live"]
    detail: str | MISSING = MISSING


class Frames(_Answer):
    type: Literal["frames"]
    rows: Annotated[list[FrameRow], Field(max_length=500)]
    """Newest first."""
    total: Count
    offset: Count


class FramesPreviewed(_Answer):
    type: Literal["frames.preview"]
    frame: int
    frames: list[int]
    """Every frame the rewind would pop."""
    files: list[PreviewFile]
    """The files (the first `FILES_PAGE` when `files_total` is sent; the rest in pages)."""
    files_total: Count | MISSING = MISSING
    """Files in all."""
    groups: list[PreviewGroup] | MISSING = MISSING
    """The files by directory, with counts (`frames.preview.page` lists a group's files)."""
    cells: list[PreviewCell] | MISSING = MISSING
    """The cells whose frames the rewind pops, oldest first."""
    skipped: list[PathDetail]
    skipped_total: Count | MISSING = MISSING
    conflicts: list[PathDetail]
    conflicts_total: Count | MISSING = MISSING
    external: list[PathDetail] | MISSING = MISSING
    """Paths changed outside this kernel only: left alone unless include_external."""
    external_total: Count | MISSING = MISSING
    messages_dropped: Count
    variables: list[VariableStep] | MISSING = MISSING
    cell_edits: list[CellStep] | MISSING = MISSING
    """The agent's cell edits the rewind would take back, newest first (a cell the user
    edited since is a conflict the notebook finds when it applies them)."""
    error: str | MISSING = MISSING
    """Why no rewind is possible (the lists are then empty)."""


class FramesPreviewPaged(_Answer):
    type: Literal["frames.preview.page"]
    frame: int
    group: str
    rows: Annotated[list[PreviewFile], Field(max_length=500)]
    total: Count
    """Files of the group in all."""
    offset: Count


class FileRow(_Part):
    """One file a frame changed."""

    path: str
    action: str
    kind: Literal["text", "csv", "image", "notebook", "binary"]
    before_size: Count | None
    after_size: Count | None


class FramesFilesListed(_Answer):
    type: Literal["frames.files"]
    frame: int
    rows: Annotated[list[FileRow], Field(max_length=500)]
    total: Count
    """Files the frame changed in all."""
    offset: Count


class DiffCell(_Part):
    """One notebook cell of a side."""

    cell_type: str
    source: str


class DiffSide(_Part):
    """One side of a file's diff."""

    state: Literal["absent", "file", "uncaptured", "refused"]
    """`refused`: a symlink or a non-file on the way (`note` names it), not followed."""
    size: Count | None
    sha256: str | None
    pages: Count
    """Pages of lines this side has (text and CSV)."""
    page: Count | MISSING = MISSING
    first_line: Count | MISSING = MISSING
    """The line number the page's text starts at."""
    text: str | MISSING = MISSING
    """The page's lines (text and CSV)."""
    mime: str | MISSING = MISSING
    data: str | MISSING = MISSING
    """An image's bytes, base64 (bounded; absent above the bound, `note` says so)."""
    cells: list[DiffCell] | MISSING = MISSING
    """A notebook's cells."""
    note: str | MISSING = MISSING


class CellMatch(_Part):
    """One row of a notebook's diff as nbdime matched it: a cell of before, of after, or of
    both."""

    before: Count | None
    """Its index among the before side's cells (None: added)."""
    after: Count | None
    """Its index among the after side's cells (None: removed)."""
    status: Literal["same", "changed", "added", "removed", "moved"]
    """`changed`: its source changed; `moved`: the same cell elsewhere (`before` is where it
    was)."""
    changed: list[str]
    """What changed in the cell: `source`, `outputs`, `execution_count`, `metadata`, ..."""


class FramesDiffed(_Answer):
    type: Literal["frames.diff"]
    frame: int
    path: str
    kind: Literal["text", "csv", "image", "notebook", "binary"]
    preview: bool
    page: Count
    pages: Count
    """Pages of the longer side."""
    before: DiffSide
    after: DiffSide
    cell_matches: list[CellMatch] | MISSING = MISSING
    """A notebook's cells matched by nbdime, in order (sent only where nbdime is importable
    in the kernel; without it the view diffs the cells' sources)."""


class FramesRewound(_Answer):
    type: Literal["frames.rewind"]
    ok: Literal[True]
    frame: int
    frames: list[int]
    conflicts: list[str]
    external: list[str] | MISSING = MISSING
    """Paths left alone because they were changed outside this kernel."""
    summary: str
    headline: str | MISSING = MISSING
    """One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast."""


class FramesCallsListed(_Answer):
    type: Literal["frames.calls"]
    frame: int
    calls: Annotated[list[CallLine], Field(max_length=500)]
    """In the order they ran."""


class FramesCallRewound(_Answer):
    type: Literal["frames.rewind_call"]
    ok: Literal[True]
    call_id: str
    frame: int | None
    """The frame whose call it was (it stays)."""
    restored: list[str]
    """Paths put back (restored, deleted or recreated)."""
    left: list[PathDetail]
    """Paths left alone (conflicts, skips), with why."""
    summary: str
    headline: str
    """One line in the user's words, for a toast."""


class FramesUndoDone(_Answer):
    type: Literal["frames.undo"]
    ok: Literal[True]
    frames: list[int]
    undoes: int
    """The ledger entry of the rewind undone."""
    conflicts: list[str]
    summary: str
    headline: str | MISSING = MISSING
    """One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast."""


class FramesResumed(_Answer):
    type: Literal["frames.resume"]
    ok: Literal[True]
    frames: list[int]
    conflicts: list[str]
    summary: str
    headline: str | MISSING = MISSING
    """One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast."""


class FramesUndone(_Kernel):
    """Announced after an undo made frames active again."""

    type: Literal["frames.undone"]
    frames: list[int]
    cell_ids: list[str]
    at: str
    by: int
    undoes: int


class FramesChanged(_Kernel):
    """Announced after every cell."""

    type: Literal["frames.changed"]
    total: Count


class FramesRewoundNotice(_Kernel):
    """Announced after every rewind (a frontend greys out the cells of rewound frames)."""

    type: Literal["frames.rewound"]
    frames: list[int]
    cell_ids: list[str]
    at: str
    by: int


class RestoreProgressMessage(_Kernel):
    """Announced while a rewind, undo or resume restores paths, or a full scan reads them
    (`first_snapshot`; `capture`: a later scan reading a cell's thousands of new files):
    before the first, then at most `PROGRESS_HZ` times a second, and once `finished`; sent
    again to a frontend that opens its comm mid-work."""

    type: Literal["progress"]
    operation: RestoreOperation
    done: Count
    """Paths restored (the first snapshot: files read) so far."""
    total: Count
    """Paths to restore (files to read) in all (0: nothing to restore, e.g. the conversation
    only)."""
    finished: bool
    """The operation has ended (done or failed): a frontend hides its bar."""
    path: str | MISSING = MISSING
    """`large_capture`: the big file being copied after a cell (`done`/`total` its bytes)."""
