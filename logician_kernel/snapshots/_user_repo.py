"""Reading the user's own repository, never writing it: where its git directory is, and a
copy of its index to seed our private store with (no git processes here).

Must never: modify anything under the user's `.git`.
"""

from __future__ import annotations

from pathlib import Path

from ..durable.private import write_private


def user_git_dir(workspace: Path) -> Path | None:
    """The git directory of the workspace's own repository, if it has one."""
    dot_git = workspace / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # worktrees and submodules: "gitdir: <path>"
        content = dot_git.read_text(errors="replace").strip()
        if content.startswith("gitdir:"):
            path = Path(content.split(":", 1)[1].strip())
            return path if path.is_absolute() else (workspace / path).resolve()
    return None


def user_objects_dir(workspace: Path) -> Path | None:
    """The object directory of the workspace's own repository (a worktree's common one)."""
    user_git = user_git_dir(workspace)
    if user_git is None:
        return None
    common = user_git / "commondir"
    try:
        if common.is_file():
            return (user_git / common.read_text().strip() / "objects").resolve()
    except OSError:
        return None
    return user_git / "objects"


def seed_from_user_repo(workspace: Path, store: Path, index: Path) -> None:
    """Start from a copy of the user's index, borrowing their objects through alternates.

    With it, the first snapshot of a big repository hashes only the user's uncommitted
    changes instead of every file. Reading `.git/index` never modifies it. Any problem here
    leaves a cold start (the caller also checks that git can parse the copy).
    """
    user_git = user_git_dir(workspace)
    if user_git is None or not (user_git / "index").is_file():
        return
    objects = user_objects_dir(workspace)
    if objects is None:
        return
    try:
        write_private(index, (user_git / "index").read_bytes())
        write_private(store / "objects" / "info" / "alternates", f"{objects}\n".encode())
    except OSError:
        index.unlink(missing_ok=True)
        (store / "objects" / "info" / "alternates").unlink(missing_ok=True)
