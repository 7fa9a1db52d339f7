"""`ls`, `glob` and `grep`: read-only exploration of the workspace.

The walking runs in a worker thread, off the kernel's event loop, and stops at the next file
once the call is cancelled. Results are sorted and bounded; `.git/` and `.logician/` are
skipped by `glob` and `grep`, and nothing reached through a symlink leaving the workspace is
reported.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ._base import Recovery, Tool, ToolContext, ToolError, ToolResult
from ._paths import (
    PROTECTED_DIRS,
    base_dir,
    display_path,
    looks_binary,
    resolve_path,
    workspace_root,
)

_LS_MAX_ENTRIES = 1000
_GLOB_MAX_RESULTS = 1000
_GLOB_SCAN_LIMIT = 100_000
_GREP_DEFAULT_MATCHES = 200
_GREP_MAX_FILE_BYTES = 10 * 1024 * 1024
_GREP_MAX_LINE_CHARS = 300

_T = TypeVar("_T")


async def _in_thread(fn: Callable[[threading.Event], _T]) -> _T:
    """Run blocking filesystem work off the loop; ask it to stop when we are cancelled."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def _directory(ctx: ToolContext, tool: str, path: str) -> tuple[Path, str]:
    target = resolve_path(ctx, path, for_write=False)
    shown = display_path(ctx, target)
    if not target.exists():
        raise ToolError(f"{tool}: no such directory: {shown}")
    if not target.is_dir():
        raise ToolError(f"{tool}: {shown} is not a directory")
    return target, shown


def _inside(root: Path, path: Path) -> bool:
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return False
    return resolved == root or resolved.is_relative_to(root)


class LsTool(Tool):
    name: ClassVar[str] = "ls"
    description: ClassVar[str] = (
        "List the entries of a workspace directory, sorted; directories end with `/`."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "default": ".",
                "description": "Directory, relative to the workspace (default: its root).",
            },
        },
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "pure"
    read_only: ClassVar[bool] = True

    def _describe(self, arguments: dict[str, Any]) -> str:
        return f"ls {arguments.get('path') or '.'}"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target, shown = _directory(ctx, "ls", args["path"])

        def work(stop: threading.Event) -> list[str]:
            names = []
            with os.scandir(target) as it:
                for entry in it:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    names.append(entry.name + ("/" if is_dir else ""))
            return sorted(names)

        try:
            names = await _in_thread(work)
        except OSError as exc:
            raise ToolError(f"ls: cannot list {shown}: {exc.strerror or exc}") from None
        if not names:
            return ToolResult(content=f"({shown} is empty)", display=f"ls {shown}: empty")
        body = "\n".join(names[:_LS_MAX_ENTRIES])
        if len(names) > _LS_MAX_ENTRIES:
            body += f"\n[... and {len(names) - _LS_MAX_ENTRIES:,} more entries not shown]"
        return ToolResult(content=body, display=f"ls {shown}: {len(names)} entries")


class GlobTool(Tool):
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find workspace paths matching a glob pattern such as `**/*.py` or `src/*.toml`, "
        "relative to the workspace (or to `path`). Sorted; directories end with `/`; "
        ".git/ and .logician/ are skipped."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob pattern, relative; `**` matches any number of directories.",
            },
            "path": {
                "type": "string",
                "default": ".",
                "description": "Directory to search from, relative to the workspace.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "pure"
    read_only: ClassVar[bool] = True

    def _describe(self, arguments: dict[str, Any]) -> str:
        where = arguments.get("path")
        return f"glob {arguments.get('pattern', '')}" + (f" in {where}" if where else "")

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"].strip()
        if not pattern:
            raise ToolError("glob: the pattern is empty")
        if os.path.isabs(pattern) or ".." in Path(pattern).parts:
            raise ToolError(
                f"glob: pattern {pattern} must be relative and stay inside the workspace "
                "(no absolute paths, no `..`)"
            )
        base, _ = _directory(ctx, "glob", args["path"])
        root = workspace_root(ctx)
        here = base_dir(ctx)

        def work(stop: threading.Event) -> tuple[list[str], bool]:
            found: list[str] = []
            for scanned, match in enumerate(base.glob(pattern)):
                if stop.is_set() or scanned >= _GLOB_SCAN_LIMIT:
                    return found, True
                if any(part in PROTECTED_DIRS for part in match.relative_to(base).parts):
                    continue
                if not _inside(root, match):
                    continue
                rel = os.path.relpath(match, here).replace(os.sep, "/")
                found.append(rel + "/" if match.is_dir() else rel)
            return found, False

        try:
            found, stopped = await _in_thread(work)
        except ValueError as exc:  # pathlib rejects e.g. `a**b`
            raise ToolError(f"glob: invalid pattern {pattern}: {exc}") from None
        except OSError as exc:
            raise ToolError(f"glob: {exc.strerror or exc}") from None
        found.sort()
        if not found:
            return ToolResult(content=f"No paths match {pattern}", display="glob: no matches")
        body = "\n".join(found[:_GLOB_MAX_RESULTS])
        if len(found) > _GLOB_MAX_RESULTS:
            body += (
                f"\n[... {len(found) - _GLOB_MAX_RESULTS:,} more matches not shown; "
                "narrow the pattern]"
            )
        if stopped:
            body += f"\n[search stopped after {_GLOB_SCAN_LIMIT:,} paths; narrow the pattern]"
        return ToolResult(content=body, display=f"glob: {len(found)} matches")


class GrepTool(Tool):
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search workspace text files for a regular expression (Python `re` syntax). "
        "Returns `path:line: text` for each matching line, in path order. Binary files, "
        ".git/ and .logician/ are skipped."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {
                "type": "string",
                "default": ".",
                "description": "File or directory to search, relative to the workspace.",
            },
            "glob": {
                "type": "string",
                "description": "Only search files whose name or relative path matches, e.g. `*.py`.",
            },
            "ignore_case": {
                "type": "boolean",
                "default": False,
                "description": "Match case-insensitively.",
            },
            "max_matches": {
                "type": "integer",
                "minimum": 1,
                "default": _GREP_DEFAULT_MATCHES,
                "description": "Stop after this many matching lines.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "pure"
    read_only: ClassVar[bool] = True

    def _describe(self, arguments: dict[str, Any]) -> str:
        where = arguments.get("path")
        return f"grep {arguments.get('pattern', '')!r}" + (f" in {where}" if where else "")

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"]
        try:
            regex = re.compile(pattern, re.IGNORECASE if args["ignore_case"] else 0)
        except re.error as exc:
            raise ToolError(f"grep: invalid regular expression {pattern!r}: {exc}") from None
        target = resolve_path(ctx, args["path"], for_write=False)
        shown = display_path(ctx, target)
        if not target.exists():
            raise ToolError(f"grep: no such file or directory: {shown}")
        search = _Search(
            workspace_root(ctx), regex, args["glob"], args["max_matches"], shown_from=base_dir(ctx)
        )
        await _in_thread(lambda stop: search.run(target, stop))
        if not search.lines:
            body = f"No matches for {pattern!r} in {shown}"
        else:
            body = "\n".join(search.lines)
        notes = []
        if search.limited:
            notes.append(
                f"stopped at {args['max_matches']} matches; narrow the pattern or path, "
                "or raise max_matches"
            )
        if search.skipped_large:
            notes.append(
                f"{search.skipped_large} files over {_GREP_MAX_FILE_BYTES // (1024 * 1024)} MiB "
                "were not searched"
            )
        if notes:
            body += "".join(f"\n[{note}]" for note in notes)
        files = len(search.files)
        return ToolResult(
            content=body,
            display=f"grep: {len(search.lines)} matches in {files} file{'s' if files != 1 else ''}",
        )


class _Search:
    """One grep walk, accumulating matches until the limit."""

    def __init__(
        self,
        root: Path,
        regex: re.Pattern[str],
        include: str | None,
        limit: int,
        *,
        shown_from: Path,
    ) -> None:
        self.root, self.regex, self.include, self.limit = root, regex, include, limit
        self.shown_from = shown_from
        """Matches name their files relative to it (where the user's cells run)."""
        self.lines: list[str] = []
        self.files: set[str] = set()
        self.limited = False
        self.skipped_large = 0

    def run(self, target: Path, stop: threading.Event) -> None:
        if target.is_file():
            self._file(target, target.name, check_include=False)
            return
        for dirpath, dirnames, filenames in os.walk(target):
            dirnames[:] = sorted(d for d in dirnames if d not in PROTECTED_DIRS)
            for name in sorted(filenames):
                if stop.is_set() or self.limited:
                    return
                full = Path(dirpath, name)
                self._file(full, full.relative_to(target).as_posix(), check_include=True)
            if self.limited:
                return

    def _file(self, full: Path, rel_to_target: str, *, check_include: bool) -> None:
        if (
            check_include
            and self.include
            and not (
                fnmatch.fnmatchcase(full.name, self.include)
                or fnmatch.fnmatchcase(rel_to_target, self.include)
            )
        ):
            return
        if full.is_symlink() and not _inside(self.root, full):
            return
        try:
            if not full.is_file():
                return
            if full.stat().st_size > _GREP_MAX_FILE_BYTES:
                self.skipped_large += 1
                return
            with full.open("rb") as f:
                if looks_binary(f.read(8192)):
                    return
                f.seek(0)
                rel = os.path.relpath(full, self.shown_from).replace(os.sep, "/")
                for lineno, raw in enumerate(f, start=1):
                    text = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if not self.regex.search(text):
                        continue
                    if len(self.lines) >= self.limit:  # one more exists: say we stopped
                        self.limited = True
                        return
                    if len(text) > _GREP_MAX_LINE_CHARS:
                        text = text[:_GREP_MAX_LINE_CHARS] + " …"
                    self.lines.append(f"{rel}:{lineno}: {text}")
                    self.files.add(rel)
        except OSError:
            return  # unreadable files are skipped like binary ones
