"""What a frame changed, per file, ready to show: action, sizes, a bounded text diff.

Reads blobs from the snapshot store; formats nothing for a particular frontend.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ledger.frame_view import FrameView
from ..snapshots.git_snapshot import SnapshotError
from ..types.path_states import PathChange, PathState
from .chain_verdict import who
from .file_checkpoints import FileCheckpoints, RewindError
from .restore import SKIP_TEXT

MAX_DIFF_INPUT = 256 * 1024
MAX_DIFF_LINES = 200


@dataclass(frozen=True)
class FileDiff:
    path: str
    action: str
    before_size: int | None
    after_size: int | None
    diff: str | None
    note: str = ""
    by: str = ""
    """Who made the change: "cell", "tool bash (call_1)", "external (...)"; "" when unknown."""
    uncertain: str = ""
    """Why its writer could not be established ("" when it was): listed apart, last."""


def frame_diff(checkpoints: FileCheckpoints, spec: str) -> tuple[FrameView, list[FileDiff]]:
    """The frame named by `spec` (an id or --last) and what it did to each path."""
    frames = checkpoints.frames()
    if spec in ("--last", "last"):
        active = checkpoints.active_frames()
        if not active:
            raise RewindError("diff: no frame of this notebook is recorded yet")
        view = active[-1]
    else:
        try:
            view = frames[int(spec)]
        except ValueError:
            raise RewindError(f"diff: {spec!r} is not a frame id; see `%logician frames`") from None
        except KeyError:
            raise RewindError(f"diff: there is no frame {spec}") from None
    out: list[FileDiff] = []
    # Changes whose writer is known first; uncertain ones apart, after them.
    for change in sorted(view.changes, key=lambda c: bool(c.uncertain)):
        before = _content(checkpoints, change.before)
        after = _content(checkpoints, change.after)
        note = ""
        if change.after.kind == "uncaptured":
            note = f"its new content was not captured ({SKIP_TEXT[change.after.reason or 'too-large']})"
        elif "large" in (change.before.kind, change.after.kind):
            note = "large file: kept in the side store, no line diff"
        out.append(
            FileDiff(
                path=change.path,
                action=change.action,
                before_size=_size(before, change.before),
                after_size=_size(after, change.after),
                diff=_text_diff(change.path, before, after),
                note=note,
                by=_by(change),
                uncertain=change.uncertain,
            )
        )
    for skip in view.skipped:
        out.append(
            FileDiff(skip.path, "not captured", None, None, None, note=SKIP_TEXT[skip.reason])
        )
    return view, out


def _by(change: PathChange) -> str:
    if change.by is None:
        return ""
    text = who(change)
    return f"{text} ({change.basis})" if change.basis else text


def _size(content: bytes | None, state: PathState) -> int | None:
    if content is not None:
        return len(content)
    return state.fingerprint.size if state.kind == "large" and state.fingerprint else None


def _content(checkpoints: FileCheckpoints, state: PathState) -> bytes | None:
    if state.kind != "blob" or checkpoints.snapshotter is None:
        return None
    try:
        return checkpoints.snapshotter.read_blob(state.sha or "")
    except SnapshotError:
        return None


def _text_diff(path: str, before: bytes | None, after: bytes | None) -> str | None:
    texts = []
    for data in (before, after):
        if data is None:
            texts.append("")
            continue
        if len(data) > MAX_DIFF_INPUT or b"\0" in data:
            return None
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            return None
    import difflib  # 7 ms to import: loaded when first used

    lines = list(
        difflib.unified_diff(
            texts[0].splitlines(keepends=True),
            texts[1].splitlines(keepends=True),
            fromfile=f"a/{path}" if before is not None else "/dev/null",
            tofile=f"b/{path}" if after is not None else "/dev/null",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        cut = len(lines) - MAX_DIFF_LINES
        lines = lines[:MAX_DIFF_LINES] + [f"... {cut} more diff line(s) not shown\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
