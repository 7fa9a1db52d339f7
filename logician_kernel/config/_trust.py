"""Workspace trust: which workspaces may apply their `.logician/config.toml`.

Trust is recorded in the user config dir (`trusted_workspaces.json`), never in the workspace
itself - a project cannot vouch for itself. Recording trust is an explicit user action and
uses the same locked, atomic write as persisted settings.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

from ._atomic import atomic_update

__all__ = ["TRUST_FILE", "read_trusted", "is_trusted", "record_trust", "trust_key"]

TRUST_FILE = "trusted_workspaces.json"


def trust_key(workspace: Path) -> str:
    return str(Path(workspace).expanduser().resolve())


def read_trusted(user_dir: Path) -> tuple[frozenset[str], str | None]:
    """The trusted workspace roots, and a problem if the record is unreadable."""
    path = Path(user_dir) / TRUST_FILE
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return frozenset(), None
    except (OSError, UnicodeDecodeError) as exc:
        return frozenset(), f"{path}: cannot read the trust record ({exc}); no workspace is trusted"
    try:
        record = json.loads(raw)
        workspaces = record["workspaces"]
        if not isinstance(workspaces, Mapping):
            raise TypeError("'workspaces' is not an object")
        return frozenset(str(k) for k in workspaces), None
    except (ValueError, KeyError, TypeError) as exc:
        return frozenset(), f"{path}: the trust record is damaged ({exc}); no workspace is trusted"


def is_trusted(workspace: Path, user_dir: Path) -> bool:
    trusted, _ = read_trusted(user_dir)
    return trust_key(workspace) in trusted


def record_trust(workspace: Path, user_dir: Path, *, trusted: bool = True) -> Path:
    """Add (or remove) `workspace` in the trust record; returns the record's path."""
    path = Path(user_dir) / TRUST_FILE
    key = trust_key(workspace)

    def patch(old: str | None) -> str:
        record: dict[str, object] = {"version": 1, "workspaces": {}}
        if old:
            try:
                loaded = json.loads(old)
                if isinstance(loaded, dict) and isinstance(loaded.get("workspaces"), dict):
                    record = loaded
            except ValueError:
                pass  # a damaged record is rewritten; it granted no trust anyway
        workspaces = dict(record["workspaces"])  # type: ignore[call-overload]
        if trusted:
            workspaces[key] = {"trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        else:
            workspaces.pop(key, None)
        record["workspaces"] = workspaces
        return json.dumps(record, indent=2, sort_keys=True) + "\n"

    atomic_update(path, patch)
    return path
