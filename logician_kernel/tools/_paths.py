"""Path arguments: resolved against where the user's cells run (inside the workspace),
refused when they leave the workspace.

Symlinks are resolved before the check, so a link pointing outside is refused like `../`.
Writes are also refused under `.logician/` (our own durable state) and `.git/`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._base import ToolContext, ToolError

PROTECTED_DIRS = (".logician", ".git")
"""Top-level workspace directories no tool may write into."""

_SNIFF_BYTES = 8192


def resolve_path(ctx: ToolContext, path: str, *, for_write: bool) -> Path:
    """The absolute, symlink-resolved path of `path` (relative to `base_dir(ctx)`, where the
    user's cells run, or absolute).

    Raises `ToolError` when it lies outside the workspace (reads and writes alike, for now),
    or, for writes, under `.logician/` or `.git/`.
    """
    verb = "write" if for_write else "read"
    if not isinstance(path, str) or not path.strip():
        raise ToolError(f"{verb}: the path is empty; give a path relative to the workspace")
    if "\0" in path:
        raise ToolError(f"{verb}: path {path!r} contains a NUL character")
    root = workspace_root(ctx)
    candidate = Path(path) if os.path.isabs(path) else base_dir(ctx) / path
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise ToolError(f"{verb}: cannot resolve path {path}: {exc}") from None
    if resolved != root and not resolved.is_relative_to(root):
        raise ToolError(
            f"{verb}: path {path} is outside the workspace {root}; "
            f"only workspace files may be {'written' if for_write else 'read'}"
        )
    if for_write:
        rel = resolved.relative_to(root).parts
        if not rel:
            raise ToolError(f"write: path {path} is the workspace itself, not a file")
        if rel[0] in PROTECTED_DIRS:
            raise ToolError(
                f"write: path {path} is under {rel[0]}/, which holds "
                f"{'the kernel state' if rel[0] == '.logician' else 'git internals'}; "
                "tools may not write there"
            )
    return resolved


def workspace_root(ctx: ToolContext) -> Path:
    return Path(ctx.workspace).resolve()


def base_dir(ctx: ToolContext) -> Path:
    """The directory relative paths resolve against: the kernel's current directory when it
    lies inside the workspace, else the workspace root."""
    root = workspace_root(ctx)
    if ctx.cwd is None:
        return root
    try:
        cwd = Path(ctx.cwd).resolve()
    except (OSError, RuntimeError):
        return root
    return cwd if cwd == root or cwd.is_relative_to(root) else root


def relative(ctx: ToolContext, path: Path) -> str:
    """Workspace-relative POSIX form of a resolved path (`.` for the root): the name frames
    capture and rewind it by."""
    return path.relative_to(workspace_root(ctx)).as_posix() or "."


def display_path(ctx: ToolContext, path: Path) -> str:
    """The form the model and the user read: relative to `base_dir(ctx)` (`../x` for a
    workspace path above it), so a path taken from a result works as an argument again."""
    return os.path.relpath(path, base_dir(ctx)).replace(os.sep, "/")


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first few KiB: what git and grep call binary."""
    return b"\0" in head[:_SNIFF_BYTES]


def sniff(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(_SNIFF_BYTES)
