"""Per-file restore for rewinds: exact bytes, permission bits, symlinks; one rename each,
beneath the workspace root (`beneath.py`).

Must never: touch a path it was not asked to restore, follow a symlink in a parent of the
path (that is a conflict, left alone), or remove a directory (the empty directories a
rewind leaves are judged by their birth time, in `perms.remove_debris`).
"""

from __future__ import annotations

import stat

from ..ledger.thread_ledger import RestoredPath
from ..snapshots.beneath import Beneath, Conflict, PathRefused
from ..snapshots.git_snapshot import GitSnapshotter, SnapshotError
from ..snapshots.perms import default_perms
from ..types.path_states import PathState


def still_as_left(current: PathState | None, after: PathState) -> bool:
    """Whether a path is as the frame left it. A directory where the frame left no file is:
    snapshots record files, so a file that became a directory reads as a deleted file."""
    if current is None:
        return False
    if after.kind == "absent" and current.kind == "uncaptured" and current.reason == "not-a-file":
        return True
    return current.same_as(after)


def restore_order(items: list[tuple[str, PathState]]) -> list[tuple[str, PathState]]:
    """Deletions first, deepest first, then the rest parents first: a type change (file <->
    directory) is undone by clearing the way before anything is written."""
    deletions = sorted(
        (i for i in items if i[1].kind == "absent"), key=lambda i: i[0], reverse=True
    )
    return deletions + sorted((i for i in items if i[1].kind != "absent"), key=lambda i: i[0])


def restore_path(
    snap: GitSnapshotter, path: str, target: PathState, tree: Beneath | None = None
) -> RestoredPath:
    """Bring one path back to `target`, atomically per file; never raises for I/O. Every
    change goes through `tree` (one per rewind: its directories stay open), never by name:
    a parent that became a symlink is a conflict, left alone."""
    if tree is None:
        with Beneath(snap.workspace) as own:
            return restore_path(snap, path, target, own)
    try:
        st = tree.lstat(path)
        if target.kind == "absent":
            if st is None:
                return RestoredPath(path=path, action="deleted", detail="was already gone")
            if stat.S_ISDIR(st.st_mode):
                return RestoredPath(
                    path=path,
                    action="failed",
                    detail="a directory now stands where the frame created a file",
                )
            try:
                tree.unlink(path)  # one look a path: no second `lstat` inside
            except FileNotFoundError:
                return RestoredPath(path=path, action="deleted", detail="was already gone")
            # Directories left empty are the caller's to judge (`perms.remove_debris`).
            return RestoredPath(path=path, action="deleted")
        if st is not None and stat.S_ISDIR(st.st_mode):
            # The frame turned this file into a directory; its files were deleted just before
            # (restore_order), so an empty one is ours to remove. One with files is not.
            try:
                tree.rmdir(path)
            except OSError:
                return RestoredPath(
                    path=path,
                    action="failed",
                    detail="a directory with files now stands where the file was",
                )
            st = None
        existed = st is not None
        if target.kind == "large" and snap.large is not None:
            moved = _set_aside_journals(tree, path)
            snap.large.store.restore_at(
                target.sha or "",
                tree,
                path,
                _target_perms(target, executable=target.mode == "100755"),
            )
            snap.large.restored(path, target.sha or "")
            notes = [moved] if moved else []
            if target.sha in snap.large.via_backup:
                notes.append(BACKUP_NOTE)
            return RestoredPath(
                path=path, action="restored" if existed else "recreated", detail="; ".join(notes)
            )
        data = snap.read_blob(target.sha or "")
        if target.mode == "120000":
            tree.symlink(path, data.decode("utf-8", "surrogateescape"))
        else:
            executable = target.mode == "100755"
            perms = _target_perms(target, executable=executable)
            written = tree.write_file(path, data, perms, st)
            if written is not None:  # a later plan or undo knows these bytes without a read
                snap.wrote(path, written, target)
        return RestoredPath(path=path, action="restored" if existed else "recreated")
    except Conflict as exc:
        return RestoredPath(path=path, action="conflict", detail=str(exc))
    except PathRefused as exc:
        return RestoredPath(path=path, action="failed", detail=str(exc))
    except (OSError, SnapshotError) as exc:
        return RestoredPath(path=path, action="failed", detail=str(exc))


BACKUP_NOTE = (
    "a connection held this database when it was captured, so it was copied through SQLite's "
    "backup API: the same content, but header bytes (change counter, schema cookie) may differ"
)

SKIP_TEXT = {
    "too-large": "larger than the capture size limit (checkpoints.max_file_bytes)",
    "ignored": "ignored by .gitignore or checkpoints.ignore",
    "nested-repository": "inside a nested git repository",
    "not-a-file": "not a regular file",
    "unstable": "still being written by another process when the frame closed",
    "over-budget": "the side store was full (checkpoints.max_store_bytes)",
    "low-disk": "large-file capture was paused: the disk was nearly full",
}


def _set_aside_journals(tree: Beneath, path: str) -> str | None:
    """A database's WAL from a later state would be replayed over the restored file: move it
    (and its index) aside, keeping the bytes, before the database comes back."""
    moved = []
    for suffix in ("-wal", "-shm"):
        side = path + suffix
        if tree.lstat(side) is not None:
            name = side.rpartition("/")[2]
            tree.rename(side, name + ".before-rewind")
            moved.append(name)
    return f"moved {', '.join(moved)} aside (*.before-rewind)" if moved else None


def _target_perms(target: PathState, *, executable: bool) -> int:
    """The permission bits a restored file gets: those recorded, or, where none were (the
    bits were what its git mode and the umask give), exactly those again - never the bits it
    has now (a frame that only ran `chmod 600` is rewound to 755 or 644, as it was)."""
    return target.perms if target.perms is not None else default_perms(executable)
