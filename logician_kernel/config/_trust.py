"""Workspace trust: which workspaces may apply their `.logician/config.toml`, bound to content.

Trust is recorded in the user config dir (`trusted_workspaces.json`), never in the workspace
itself - a project cannot vouch for itself. Recording trust is an explicit user action and
uses the same locked, atomic write as persisted settings.

Trust is bound to what the user reviewed: the SHA-256 of the project file and the identity
(device, inode) of the workspace folder. A changed file, or another folder at the same path,
is not trusted until the user trusts it again. Fields that can take the kernel over (see
`_gated.py`) need more: the user allows *that field with that value*, recorded as a digest
of the value beside the workspace's entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import atomic_update

__all__ = [
    "TRUST_FILE",
    "TrustEntry",
    "read_trusted",
    "is_trusted",
    "record_trust",
    "trust_key",
    "value_digest",
    "content_digest",
    "folder_id",
]

TRUST_FILE = "trusted_workspaces.json"
ANY_CONTENT = "*"
"""A digest that matches any project file: only for an in-memory check, never recorded."""


def trust_key(workspace: Path) -> str:
    return str(Path(workspace).expanduser().resolve())


def content_digest(text: str | None) -> str | None:
    """The SHA-256 of a project file's text; None for a missing file."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def value_digest(value: Any) -> str:
    """A digest of one setting's value, as a project file states it."""
    canonical = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def folder_id(workspace: Path) -> str | None:
    """The identity of the folder at `workspace` (device and inode), or None if absent."""
    try:
        info = os.stat(workspace)
    except OSError:
        return None
    return f"{info.st_dev}:{info.st_ino}"


@dataclass(frozen=True)
class TrustEntry:
    """What the user reviewed when trusting one workspace."""

    project_sha256: str | None = None
    """The digest of the project file then; None when it did not exist, `*` for any (only in
    memory, while a `config set --persist project` is checked)."""
    folder: str | None = None
    """The folder's device:inode then; None in a record older than this check."""
    allowed: Mapping[str, str] = field(default_factory=dict)
    """Gated fields the user allowed: dotted key -> `value_digest` of the allowed value."""
    bound: bool = True
    """False for an entry recorded before trust was bound to content (it must be renewed)."""

    def problem(self, workspace: Path, project_text: str | None) -> str | None:
        """Why this trust no longer covers the workspace as it is now, or None."""
        if not self.bound:
            return "it was trusted before trust was bound to the project file's content"
        current = folder_id(workspace)
        if self.folder is not None and current is not None and current != self.folder:
            return "a different folder now stands at that path"
        if (
            self.project_sha256 != ANY_CONTENT
            and content_digest(project_text) != self.project_sha256
        ):
            return "the project file changed since you trusted it"
        return None

    def allows(self, key: str, value: Any) -> bool:
        return self.allowed.get(key) == value_digest(value)


TrustRecord = Mapping[str, TrustEntry]


def _entry(raw: Any) -> TrustEntry:
    if not isinstance(raw, Mapping) or "project_sha256" not in raw:
        return TrustEntry(bound=False)
    allowed = raw.get("allowed")
    return TrustEntry(
        project_sha256=raw.get("project_sha256"),
        folder=raw.get("folder"),
        allowed={str(k): str(v) for k, v in allowed.items()}
        if isinstance(allowed, Mapping)
        else {},
    )


def read_trusted(user_dir: Path) -> tuple[TrustRecord, str | None]:
    """The trust entries by workspace root, and a problem if the record is unreadable."""
    path = Path(user_dir) / TRUST_FILE
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"{path}: cannot read the trust record ({exc}); no workspace is trusted"
    try:
        record = json.loads(raw)
        workspaces = record["workspaces"]
        if not isinstance(workspaces, Mapping):
            raise TypeError("'workspaces' is not an object")
        return {str(k): _entry(v) for k, v in workspaces.items()}, None
    except (ValueError, KeyError, TypeError) as exc:
        return {}, f"{path}: the trust record is damaged ({exc}); no workspace is trusted"


def _project_text(workspace: Path) -> str | None:
    try:
        return (Path(workspace) / ".logician" / "config.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def is_trusted(workspace: Path, user_dir: Path) -> bool:
    """Whether the workspace is trusted for its project file as it is now."""
    trusted, _ = read_trusted(user_dir)
    entry = trusted.get(trust_key(workspace))
    return entry is not None and entry.problem(Path(workspace), _project_text(workspace)) is None


def record_trust(
    workspace: Path,
    user_dir: Path,
    *,
    trusted: bool = True,
    allow: Mapping[str, Any] | None = None,
    forget: Iterable[str] = (),
) -> Path:
    """Trust `workspace` for its project file as it is now (or withdraw trust); `allow`
    records gated fields with their values, `forget` drops allowed fields. Returns the
    record's path."""
    path = Path(user_dir) / TRUST_FILE
    key = trust_key(workspace)
    text = _project_text(Path(key))

    def patch(old: str | None) -> str:
        record: dict[str, Any] = {"version": 2, "workspaces": {}}
        if old:
            try:
                loaded = json.loads(old)
                if isinstance(loaded, dict) and isinstance(loaded.get("workspaces"), dict):
                    record = loaded
            except ValueError:
                pass  # a damaged record is rewritten; it granted no trust anyway
        record["version"] = 2
        workspaces = dict(record["workspaces"])
        if trusted:
            previous = workspaces.get(key) if isinstance(workspaces.get(key), dict) else {}
            allowed = dict(previous.get("allowed") or {}) if isinstance(previous, dict) else {}
            for name in forget:
                allowed.pop(name, None)
            for name, value in (allow or {}).items():
                allowed[name] = value_digest(value)
            workspaces[key] = {
                "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "project_sha256": content_digest(text),
                "folder": folder_id(Path(key)),
                "allowed": dict(sorted(allowed.items())),
            }
        else:
            workspaces.pop(key, None)
        record["workspaces"] = workspaces
        return json.dumps(record, indent=2, sort_keys=True) + "\n"

    atomic_update(path, patch)
    return path
