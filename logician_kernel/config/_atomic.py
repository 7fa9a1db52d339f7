"""Atomic single-field updates of configuration files.

The only code in `config/` that writes. An update takes `<file>.lock`, re-reads the file
under the lock (so concurrent writers of different keys never lose each other's), patches one
key with tomlkit (comments, ordering and formatting of everything else survive byte for byte),
writes a temp file in the same directory, fsyncs it, renames it over the file and fsyncs the
directory. A writer that dies before the rename leaves the old file intact.

`private=True` (the stored keys, `_credentials.py`) changes three things: a symlink (or
anything but a regular file) at the file's or the temp file's path is refused, never followed;
the temp file is created `O_EXCL | O_NOFOLLOW`; and the file is 0600 whatever the umask.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from ..durable import durable_fsync, durable_replace, durable_write, fsync_dir
from ._errors import ConfigError
from ._keys import KeyPath, format_key
from ._schema import SCHEMA_FILE

if TYPE_CHECKING:
    from tomlkit.toml_document import TOMLDocument

__all__ = ["atomic_update", "patch_toml", "DELETE", "before_replace_hook", "LOCK_TIMEOUT"]

LOCK_TIMEOUT = 10.0
DELETE: Any = object()
"""Value meaning 'remove this key' for `patch_toml`."""

before_replace_hook: Callable[[Path], None] | None = None
"""Test hook: called with the fsynced temp file just before the rename (e.g. to kill the
writer there). Production code never sets it."""

_NEW_FILE_HEADER = (
    "# Logician configuration. Documented example: examples/config.toml;\n"
    "# JSON Schema for editors: the #:schema line above (`logician config schema` prints it).\n"
)


def atomic_update(
    path: Path,
    patch: Callable[[str | None], str],
    *,
    before_replace: Callable[[Path], None] | None = None,
    lock_timeout: float | None = None,
    private: bool = False,
) -> str:
    """Replace `path`'s text with `patch(old_text_or_None)` atomically; returns the new text.

    `patch` runs under the lock and may raise to abort the update before anything is written.
    A symlinked file is updated at its target, so dotfile managers keep working, unless
    `private` (then it is refused: see the module docstring).
    """
    if private:
        target = Path(os.path.realpath(path.parent)) / path.name
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    else:
        target = Path(os.path.realpath(path))
        target.parent.mkdir(parents=True, exist_ok=True)
    # A new file under the kernel's state directory is the user's alone, like the rest of it.
    new_mode = 0o600 if private or ".logician" in target.parts else 0o644
    lock = FileLock(
        str(target) + ".lock",
        timeout=LOCK_TIMEOUT if lock_timeout is None else lock_timeout,
        mode=new_mode,
    )
    try:
        lock.acquire()
    except Timeout:
        raise ConfigError(
            f"{path}: another process is updating it (lock {lock.lock_file} held)"
        ) from None
    try:
        if private:
            _refuse_link(target)
        try:
            old_bytes: bytes | None = _read(target, follow=not private)
        except FileNotFoundError:
            old_bytes = None
        try:
            old = None if old_bytes is None else old_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not UTF-8 text; not modified") from None
        new = patch(old)
        if new == old:
            return new
        if private:
            mode = 0o600
        else:
            mode = (target.stat().st_mode & 0o777) if old_bytes is not None else new_mode
        temp = target.with_name(f".{target.name}.tmp")
        # A fixed temp name is safe under the lock, and a writer killed mid-way leaves at
        # most one stale temp file, which the next writer truncates (or, private, removes).
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        if private:
            _refuse_link(temp)
            try:
                temp.unlink()
            except FileNotFoundError:
                pass
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        fd = os.open(temp, flags, mode)
        try:
            if private:
                os.fchmod(fd, 0o600)  # whatever the umask
            data = new.encode("utf-8")
            while data:  # a full disk may take part of it: the rest raises
                data = data[durable_write(fd, data) :]
            durable_fsync(fd)
        finally:
            os.close(fd)
        hook = before_replace or before_replace_hook
        if hook is not None:
            hook(temp)
        durable_replace(temp, target)
        fsync_dir(target.parent)
        return new
    finally:
        lock.release()


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _read(path: Path, *, follow: bool) -> bytes:
    fd = os.open(path, os.O_RDONLY | (0 if follow else _NOFOLLOW))
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _refuse_link(path: Path) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode) or not stat.S_ISREG(mode):
        raise ConfigError(
            f"{path} is a symlink or not a regular file; a key is never written through it "
            "(remove it and connect again)"
        )


def _insert(container: Any, key: str, value: Any) -> None:
    """Add `key` after the container's last key, not after its trailing comments and blank
    lines (they usually introduce the next table)."""
    from tomlkit.container import Container
    from tomlkit.items import Table

    if isinstance(value, (Table, dict)):
        container[key] = value  # tomlkit places a sub-table after its parent's keys itself
        return
    body = getattr(container, "body", None)
    if body is None and isinstance(container, Table):
        body = container.value.body
        container = container.value
    if isinstance(container, Container) and body:
        keyed = [
            i for i, (k, item) in enumerate(body) if k is not None and not isinstance(item, Table)
        ]
        trailing = keyed and keyed[-1] + 1 < len(body)
        if trailing and not any(isinstance(item, Table) for _, item in body):
            container._insert_at(keyed[-1] + 1, key, value)
            return
    container[key] = value


def patch_toml(text: str | TOMLDocument | None, path: KeyPath, value: Any) -> str:
    """`text` (or an already parsed document, which is modified) with exactly the key at
    `path` set to `value` (or removed, for DELETE).

    Raises ConfigError when a parent of `path` is not a table; tomlkit's ParseError when
    `text` is not TOML.
    """
    import tomlkit  # loaded by the first write, not by every start (_sources.parse_layer)
    from tomlkit.toml_document import TOMLDocument

    fresh = text is None or (isinstance(text, str) and not text.strip())
    if isinstance(text, TOMLDocument):
        doc = text
    elif fresh:
        # taplo reads a `#:schema` directive only as the document's first line, written
        # exactly so (tomlkit's own comments would be `# :schema`).
        doc = tomlkit.parse(f"#:schema {SCHEMA_FILE.as_uri()}\n{_NEW_FILE_HEADER}\n")
    else:
        doc = tomlkit.parse(text) if text else tomlkit.document()
    node: Any = doc
    for depth, part in enumerate(path[:-1]):
        child = node.get(part)
        if child is None:
            if value is DELETE:
                return doc.as_string()
            child = tomlkit.table()
            if node is doc:
                doc.add(part, child)
            else:
                _insert(node, part, child)
            child = node[part]
        elif not isinstance(child, dict):
            where = format_key(path[: depth + 1])
            raise ConfigError(f"{where} is not a table in the file; cannot set {format_key(path)}")
        node = child
    last = path[-1]
    if value is DELETE:
        if last in node:
            del node[last]
    elif last in node:
        node[last] = value  # tomlkit keeps the key's trailing comment and spacing
    elif node is doc:
        doc.add(last, value)
    else:
        _insert(node, last, value)
    return doc.as_string()
