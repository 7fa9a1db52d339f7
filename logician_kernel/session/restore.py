"""Per-file restore for rewinds: exact bytes, permission bits, symlinks; one rename each.

Must never: touch a path it was not asked to restore, or remove a directory (the empty
directories a rewind leaves are judged by their birth time, in `perms.remove_debris`).
"""

from __future__ import annotations

import os
from pathlib import Path

from .git_snapshot import GitSnapshotter, SnapshotError
from .states import PathState
from .thread_ledger import RestoredPath


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


def restore_path(snap: GitSnapshotter, path: str, target: PathState) -> RestoredPath:
    """Bring one path back to `target`, atomically per file; never raises for I/O."""
    full = snap.workspace / path
    try:
        if target.kind == "absent":
            try:
                if full.is_dir() and not full.is_symlink():
                    return RestoredPath(path=path, action="failed",
                                        detail="a directory now stands where the frame created a file")  # fmt: skip
                full.unlink()
            except FileNotFoundError:
                return RestoredPath(path=path, action="deleted", detail="was already gone")
            # Directories left empty are the caller's to judge (`perms.remove_debris`).
            return RestoredPath(path=path, action="deleted")
        if full.is_dir() and not full.is_symlink():
            # The frame turned this file into a directory; its files were deleted just before
            # (restore_order), so an empty one is ours to remove. One with files is not.
            try:
                full.rmdir()
            except OSError:
                return RestoredPath(path=path, action="failed",
                                    detail="a directory with files now stands where the file was")  # fmt: skip
        existed = os.path.lexists(full)
        full.parent.mkdir(parents=True, exist_ok=True)
        if target.kind == "large" and snap.large is not None:
            moved = _set_aside_journals(full)
            snap.large.store.restore(
                target.sha or "", full,
                target.perms or _perms(full, executable=target.mode == "100755"),
            )
            snap.large.restored(path, target.sha or "")
            return RestoredPath(path=path, action="restored" if existed else "recreated",
                                detail=moved or "")  # fmt: skip
        data = snap.read_blob(target.sha or "")
        if target.mode == "120000":
            if existed:
                full.unlink()
            os.symlink(data.decode("utf-8", "surrogateescape"), full)
        else:
            _atomic_write(full, data, executable=target.mode == "100755", perms=target.perms)
        return RestoredPath(path=path, action="restored" if existed else "recreated")
    except (OSError, SnapshotError) as exc:
        return RestoredPath(path=path, action="failed", detail=str(exc))


SKIP_TEXT = {
    "too-large": "larger than the capture size limit (checkpoints.max_file_bytes)",
    "ignored": "ignored by .gitignore or checkpoints.ignore",
    "nested-repository": "inside a nested git repository",
    "not-a-file": "not a regular file",
    "unstable": "still being written by another process when the frame closed",
    "over-budget": "the side store was full (checkpoints.max_store_bytes)",
    "low-disk": "large-file capture was paused: the disk was nearly full",
}


def _set_aside_journals(full: Path) -> str | None:
    """A database's WAL from a later state would be replayed over the restored file: move it
    (and its index) aside, keeping the bytes, before the database comes back."""
    moved = []
    for suffix in ("-wal", "-shm"):
        side = full.with_name(full.name + suffix)
        if side.exists():
            os.replace(side, side.with_name(side.name + ".before-rewind"))
            moved.append(side.name)
    return f"moved {', '.join(moved)} aside (*.before-rewind)" if moved else None


def _atomic_write(full: Path, data: bytes, *, executable: bool, perms: int | None) -> None:
    """Replace a file's bytes in one rename, with the recorded permission bits when the frame
    knew them (`chmod 600`), else keeping the file's own bits but the exec bits."""
    perms = perms if perms is not None else _perms(full, executable=executable)
    tmp = full.with_name(f".{full.name}.logician-restore")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, perms)
    os.replace(tmp, full)


def _perms(full: Path, *, executable: bool) -> int:
    """The permission bits a restored file gets: its current ones, the exec bits as recorded."""
    umask = os.umask(0)
    os.umask(umask)
    try:
        st = os.lstat(full)
        perms = 0o666 & ~umask if os.path.islink(full) else st.st_mode & 0o7777
    except FileNotFoundError:
        perms = 0o666 & ~umask
    if executable:
        # Execute bits follow the read bits the file has (as `chmod +x` under the umask would).
        perms |= (perms & 0o444) >> 2 & ~umask or 0o100
    else:
        perms &= ~0o111
    return perms
