"""The user's stored API keys: `<user config dir>/credentials.json`, mode 0600.

*Connect a model* (the lab sidebar) stores a key here under a name, and the profile it writes
to the user config file names it in `model.key_name`; the key itself never enters a config
file, the workspace, the ledger, the audit log, the notebook or the Lab's settings. The file
lives in the user config dir (platformdirs, or `$LOGICIAN_CONFIG_DIR`), never inside the
workspace: a store that would land there is refused. Why a file and not the OS keyring:
docs/connect-a-model.md.

A write is `_atomic.atomic_update(private=True)`: under `<file>.lock`, re-read, a 0600 temp
file opened `O_EXCL | O_NOFOLLOW`, fsync, rename over the file, fsync of the directory; a
writer that dies before the rename leaves the old file. A symlink at the file's path (or its temp
path) is refused, never followed: another account's link could otherwise receive the key or
feed one. Reading never raises for a bad file: the problem is said instead.

Must never: print, log or return a key except to `EffectiveConfig.api_key`; follow a symlink.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ._atomic import atomic_update
from ._errors import ConfigError

__all__ = [
    "CREDENTIALS_FILE",
    "KEY_NAME",
    "credentials_path",
    "masked_key",
    "read_stored_keys",
    "store_key",
]

CREDENTIALS_FILE = "credentials.json"
KEY_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
"""A stored key's name (`model.key_name`): letters, digits, `_`, `.`, `-`."""
_LOCK_TIMEOUT = 10.0
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def credentials_path(user_dir: Path) -> Path:
    return Path(user_dir) / CREDENTIALS_FILE


def masked_key(key: str) -> str:
    """How a stored key is shown: its prefix and last four characters (`sk-…abcd`); a short
    key is shown as `****` alone."""
    if len(key) < 12:
        return "****"
    prefix = key[: key.index("-") + 1] if "-" in key[:8] else ""
    return f"{prefix}…{key[-4:]}"


def read_stored_keys(user_dir: Path) -> tuple[dict[str, str], str | None]:
    """The stored keys by name, and what is wrong with the file (None when all is well or it
    does not exist). Never raises, never follows a symlink."""
    path = credentials_path(user_dir)
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        why = "it is a symlink" if path.is_symlink() else exc.strerror
        return {}, f"stored keys: {path} was not read ({why}); connect the model again"
    try:
        with os.fdopen(fd, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, ValueError) as exc:
        return {}, f"stored keys: {path} is not a credentials file ({type(exc).__name__})"
    return _parse(path, text)


def _parse(path: Path, text: str | None) -> tuple[dict[str, str], str | None]:
    """The keys in a credentials file's text (None: no file yet), and what is wrong with it."""
    if text is None:
        return {}, None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return {}, f"stored keys: {path} is not a credentials file ({type(exc).__name__})"
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, dict):
        return {}, f"stored keys: {path} holds no `keys` object"
    return {str(k): v for k, v in keys.items() if isinstance(v, str) and v}, None


def store_key(user_dir: Path, name: str, key: str, *, workspace: Path) -> Path:
    """Store `key` under `name` (replacing one of that name); returns the file. Raises
    ConfigError naming the problem (a bad name, a file inside the workspace, a symlink)."""
    if not KEY_NAME.match(name):
        raise ConfigError(f"name: {name!r} is not a key name (letters, digits, _ . -)")
    if not key or any(c.isspace() for c in key):
        raise ConfigError("api_key: a key is one word without spaces")
    path = credentials_path(user_dir)
    directory = Path(os.path.realpath(path.parent))
    if _inside(directory, Path(os.path.realpath(workspace))):
        raise ConfigError(
            f"the credentials file {path} would be inside the workspace {workspace}; keys are "
            "never stored there (set LOGICIAN_CONFIG_DIR to a directory outside it)"
        )

    def patch(old: str | None) -> str:
        keys, problem = _parse(path, old)
        if problem:
            raise ConfigError(f"{problem}; not modified")
        keys[name] = key
        return json.dumps({"version": 1, "keys": keys}, indent=2, sort_keys=True)

    atomic_update(directory / path.name, patch, lock_timeout=_LOCK_TIMEOUT, private=True)
    return directory / path.name


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
