"""Names of MCP tools as the model sees them: `server__tool`, unique, and valid everywhere.

OpenAI function names allow only letters, digits, `_` and `-`, at most 64 characters; the
Anthropic API is stricter in nothing that matters here. A server's tool name is cleaned to
that alphabet, prefixed with the server's name and `__` (built-in tool names never contain
`__`, so an MCP tool can never shadow one of ours), cut to fit, and de-duplicated with a
`_2`, `_3`, ... suffix in a fixed order (servers by name, tools in listing order), so the
same configuration always yields the same names. Two tools a server lists under one name both
survive (`dup`, `dup_2`): names are assigned per listed tool, never keyed by the server's own
name. A server listing more than `mcp.max_tools_per_server` tools is cut to that many, in
listing order, with a notice naming the server and the count (`cut`). Pure functions.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

MAX_NAME = 64
"""The longest function name a model API accepts."""

SEPARATOR = "__"
"""Between the server's name and the tool's."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def is_mcp_name(name: str) -> bool:
    """Whether a tool name is an MCP tool's (ours never contain the separator)."""
    return SEPARATOR in name


def offered(name: str, allowed: Sequence[str] | None, excluded: Sequence[str]) -> bool:
    """Whether a server's tool `name` (unprefixed) passes its allow- and exclude-globs."""
    if allowed is not None and not any(fnmatch.fnmatchcase(name, p) for p in allowed):
        return False
    return not any(fnmatch.fnmatchcase(name, p) for p in excluded)


def namespaced(server: str, tool: str, taken: set[str]) -> str:
    """The model-facing name of `server`'s `tool`, not in `taken` (which it is added to)."""
    cleaned = _UNSAFE.sub("_", tool) or "tool"
    base = f"{server}{SEPARATOR}{cleaned}"[:MAX_NAME]
    name, n = base, 1
    while name in taken:
        n += 1
        suffix = f"_{n}"
        name = base[: MAX_NAME - len(suffix)] + suffix
    taken.add(name)
    return name


def assign(servers: Iterable[tuple[str, Sequence[str]]]) -> dict[str, list[str]]:
    """Model-facing names for every server's tools, in its listing order (one per listed
    tool, duplicates included), servers taken in name order."""
    taken: set[str] = set()
    names: dict[str, list[str]] = {}
    for server, tools in sorted(servers, key=lambda item: item[0]):
        names[server] = [namespaced(server, tool, taken) for tool in tools]
    return names


def cut(server: str, tools: Sequence[T], limit: int) -> tuple[list[T], str | None]:
    """The first `limit` of a server's `tools`, and a notice naming the server and the count
    when it listed more (None otherwise)."""
    if len(tools) <= limit:
        return list(tools), None
    return list(tools[:limit]), (
        f"the MCP server {server!r} lists {len(tools)} tools; only the first {limit} are "
        f"offered (mcp.max_tools_per_server = {limit})"
    )
