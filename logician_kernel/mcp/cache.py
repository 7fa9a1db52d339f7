"""The tool lists of MCP servers, cached by a hash of each server's configuration.

A restarted kernel offers a server's last known tools at once, marked stale, while the server
connects again; a changed configuration (another command, URL, filter) has another hash and
starts with nothing. The files are `.logician/mcp/tools-<hash>.json` (0600). Header and
environment *references* (`env:VAR`) are part of the hash; no secret value ever is.

Must never: raise (a cache that cannot be read or written is only a slower start).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..config import McpServerSettings
from ..durable import private_dir, write_private
from ..durable.state_dir import state_path


def config_hash(settings: McpServerSettings) -> str:
    """A stable hash of everything that decides which tools a server offers."""
    data = settings.model_dump(
        mode="json", exclude={"connect_timeout_seconds", "call_timeout_seconds", "enabled"}
    )
    encoded = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:24]


def _path(workspace: Path, digest: str) -> Path:
    return state_path(workspace) / "mcp" / f"tools-{digest}.json"


def load(workspace: Path, digest: str) -> list[dict[str, Any]]:
    """The cached tools (`name`, `description`, `input_schema`, `read_only`), or []."""
    try:
        data = json.loads(_path(workspace, digest).read_text(encoding="utf-8"))
        tools = data["tools"]
        return [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def store(workspace: Path, digest: str, tools: list[dict[str, Any]]) -> None:
    path = _path(workspace, digest)
    try:
        private_dir(path.parent)
        tmp = path.with_suffix(".tmp")
        write_private(tmp, json.dumps({"tools": tools}).encode())
        tmp.replace(path)
    except OSError:
        pass
