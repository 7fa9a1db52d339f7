"""`read`, `write` and `edit`: the file tools.

`write` and `edit` are `restorable`: each calls `ctx.capture(path)` before touching the file,
so the current frame holds the pre-state and a rewind can restore it. If capture fails,
nothing is written. Text is UTF-8; binary files are refused rather than mangled.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from pathlib import Path
from typing import Any, ClassVar

from ._base import Recovery, Tool, ToolContext, ToolError, ToolResult, format_size
from ._paths import display_path, looks_binary, relative, resolve_path, sniff

_DEFAULT_READ_LINES = 2000
_MAX_LINE_CHARS = 2000
_LINE_READ_BYTES = 64 * 1024
# Room for the footer that says how to continue, within the output bound.
_FOOTER_RESERVE = 200


def _existing_file(tool: str, target: Path, shown: str) -> None:
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        raise ToolError(f"{tool}: no such file: {shown}") from None
    except OSError as exc:
        raise ToolError(f"{tool}: cannot open {shown}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise ToolError(f"{tool}: {shown} is a directory; use ls to list it")
    if not stat.S_ISREG(mode):
        raise _special_refusal(tool, shown)


def _write_regular(tool: str, target: Path, shown: str, data: bytes) -> None:
    """Replace the content of `target`, refusing anything but a plain regular file.

    Opened non-blocking and without following a last symlink, so a FIFO put in our way
    answers at once (ENXIO, or a check of the opened file) instead of hanging the kernel;
    a file with more than one hard link is refused, since another link may be outside the
    workspace and the write would change it there. Nothing is truncated before the checks.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o666)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ELOOP, errno.EOPNOTSUPP):
            raise _special_refusal(tool, shown) from None
        raise ToolError(f"{tool}: cannot write {shown}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _special_refusal(tool, shown)
        if info.st_nlink > 1:
            raise ToolError(
                f"{tool}: {shown} has {info.st_nlink} hard links, and another of them may be "
                f"outside the workspace; {tool} refuses to change it through a link (make it "
                "a separate copy first, e.g. `cp --remove-destination`)"
            )
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise ToolError(f"{tool}: cannot write {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _special_refusal(tool: str, shown: str) -> ToolError:
    return ToolError(
        f"{tool}: {shown} is not a regular file (a FIFO, socket, device or symlink); "
        f"{tool} only writes regular files"
    )


def _binary_refusal(tool: str, shown: str) -> ToolError:
    return ToolError(
        f"{tool}: {shown} looks like a binary file (it contains NUL bytes); "
        f"{tool} only handles text files"
    )


class ReadTool(Tool):
    name: ClassVar[str] = "read"
    description: ClassVar[str] = (
        "Read a text file in the workspace. Returns numbered lines (like `cat -n`). "
        "Use offset (1-based line number) and limit to read a part of a long file. "
        "Binary files are refused."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "default": 1,
                "description": "First line to read, 1-based.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "default": _DEFAULT_READ_LINES,
                "description": "How many lines to read at most.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "pure"
    read_only: ClassVar[bool] = True

    def _describe(self, arguments: dict[str, Any]) -> str:
        text = f"read {arguments.get('path', '')}"
        offset, limit = arguments.get("offset"), arguments.get("limit")
        if isinstance(offset, int) and isinstance(limit, int):
            return f"{text} (lines {offset}-{offset + limit - 1})"
        if isinstance(offset, int):
            return f"{text} (from line {offset})"
        if isinstance(limit, int):
            return f"{text} (first {limit} lines)"
        return text

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx, args["path"], for_write=False)
        shown = display_path(ctx, target)
        _existing_file("read", target, shown)
        budget = max(ctx.max_output_bytes - _FOOTER_RESERVE, 0)
        try:
            return await asyncio.to_thread(
                _read_numbered, target, shown, args["offset"], args["limit"], budget
            )
        except OSError as exc:
            raise ToolError(f"read: cannot read {shown}: {exc.strerror or exc}") from None


def _iter_lines(f: Any) -> Any:
    """Lines as (first bytes, full length); a huge line is never held in memory whole."""
    while True:
        line = f.readline(_LINE_READ_BYTES)
        if not line:
            return
        length = len(line)
        while not line.endswith(b"\n"):
            more = f.readline(_LINE_READ_BYTES)
            if not more:
                break
            length += len(more)
            if more.endswith(b"\n"):
                break
        yield line, length


def _read_numbered(target: Path, shown: str, offset: int, limit: int, budget: int) -> ToolResult:
    if looks_binary(sniff(target)):
        raise _binary_refusal("read", shown)
    out: list[str] = []
    used = 0
    total = 0
    last_shown = offset - 1
    full = True  # stays true while every wanted line fits the byte budget
    with target.open("rb") as f:
        for total, (raw, length) in enumerate(_iter_lines(f), start=1):
            if total < offset or total >= offset + limit or not full:
                continue
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            if len(text) > _MAX_LINE_CHARS or length > len(raw):
                text = text[:_MAX_LINE_CHARS] + f" … [line truncated; it has {length:,} bytes]"
            line = f"{total:>6}\t{text}"
            size = len(line.encode("utf-8")) + 1
            if used + size > budget and out:
                full = False
                continue
            out.append(line)
            used += size
            last_shown = total
    if total == 0:
        return ToolResult(content=f"({shown} is empty)", display=f"read {shown} (empty)")
    if offset > total:
        raise ToolError(
            f"read: offset {offset} is past the end of {shown}, which has {total} lines"
        )
    body = "\n".join(out)
    display = f"read {shown} (lines {offset}-{last_shown} of {total})"
    if last_shown < total:
        why = "" if full else f" (output bound of {format_size(budget)} reached)"
        body += (
            f"\n[showing lines {offset}-{last_shown} of {total}{why}; "
            f"call read with offset={last_shown + 1} to continue]"
        )
    return ToolResult(content=body, display=display)


class WriteTool(Tool):
    name: ClassVar[str] = "write"
    description: ClassVar[str] = (
        "Write a text file in the workspace, replacing it if it exists. Parent directories "
        "are created. Prefer edit for changing part of an existing file."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "content": {"type": "string", "description": "The whole new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "restorable"
    read_only: ClassVar[bool] = False

    def _describe(self, arguments: dict[str, Any]) -> str:
        content = arguments.get("content")
        size = (
            f" ({format_size(len(content.encode('utf-8', 'replace')))})"
            if isinstance(content, str)
            else ""
        )
        return f"write {arguments.get('path', '')}{size}"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx, args["path"], for_write=True)
        shown, key = display_path(ctx, target), relative(ctx, target)
        if target.is_dir():
            raise ToolError(f"write: {shown} is a directory")
        try:
            existing = target.lstat()
        except OSError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise _special_refusal("write", shown)  # before capture: never read a FIFO
        data = args["content"].encode("utf-8", "replace")
        existed = existing is not None
        _capture(ctx, "write", key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"write: cannot write {shown}: {exc.strerror or exc}") from None
        _write_regular("write", target, shown, data)
        size = format_size(len(data))
        return ToolResult(
            content=f"{'Overwrote' if existed else 'Created'} {shown} ({len(data):,} bytes).",
            display=f"wrote {size} to {shown}",
            changed_paths=(key,),
        )


class EditTool(Tool):
    name: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Replace an exact string in a text file. old_string must occur exactly once (include "
        "surrounding lines to make it unique), unless replace_all is true. Whitespace and "
        "indentation must match exactly."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace every occurrence instead of exactly one.",
            },
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    recovery: ClassVar[Recovery] = "restorable"
    read_only: ClassVar[bool] = False

    def _describe(self, arguments: dict[str, Any]) -> str:
        every = " (every occurrence)" if arguments.get("replace_all") is True else ""
        return f"edit {arguments.get('path', '')}{every}"

    async def _execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        old, new = args["old_string"], args["new_string"]
        target = resolve_path(ctx, args["path"], for_write=True)
        shown, key = display_path(ctx, target), relative(ctx, target)
        if old == "":
            raise ToolError("edit: old_string is empty; use write to create or replace a file")
        if old == new:
            raise ToolError("edit: old_string and new_string are identical; nothing to change")
        _existing_file("edit", target, shown)
        try:
            data = target.read_bytes()
        except OSError as exc:
            raise ToolError(f"edit: cannot read {shown}: {exc.strerror or exc}") from None
        if looks_binary(data):
            raise _binary_refusal("edit", shown)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(
                f"edit: {shown} is not valid UTF-8 text; edit refuses to re-encode it"
            ) from None
        count = text.count(old)
        if count == 0:
            raise ToolError(
                f"edit: old_string was not found in {shown}; it must match the file exactly, "
                "whitespace and indentation included (read the file to check)"
            )
        if count > 1 and not args["replace_all"]:
            raise ToolError(
                f"edit: old_string occurs {count} times in {shown}; include more surrounding "
                "text to make it unique, or set replace_all to true"
            )
        line = text.count("\n", 0, text.index(old)) + 1
        updated = text.replace(old, new) if args["replace_all"] else text.replace(old, new, 1)
        _capture(ctx, "edit", key)
        _write_regular("edit", target, shown, updated.encode("utf-8"))
        what = f"{count} occurrences" if count > 1 else "1 occurrence"
        return ToolResult(
            content=f"Replaced {what} in {shown} (first at line {line}).",
            display=f"edited {shown} ({what.replace('occurrence', 'replacement')})",
            changed_paths=(key,),
        )


def _capture(ctx: ToolContext, tool: str, key: str) -> None:
    """Record the workspace-relative `key`'s pre-state; nothing is written when it fails."""
    try:
        ctx.checkpoint(key)
    except Exception as exc:
        raise ToolError(
            f"{tool}: could not checkpoint {key} before writing it ({exc}); nothing was written"
        ) from None
