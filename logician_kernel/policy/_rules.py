"""Permission rules: the grammar `tool` / `tool(pattern)` / `*`, and how a pattern matches.

Pure functions over strings; `permissions.py` decides with them.

- `bash(...)` and `python(...)` match the whole command (code) with `*` wildcards: `*`
  matches any text (newlines too), and a pattern ending in ` *` also matches the bare words
  before it, so `bash(pytest *)` matches `pytest` and `pytest -q` but not `pytester`, while
  `bash(git status*)` is a plain prefix. Without any `*` the match is exact.
- File tools match a path by glob: `*` and `?` stay within one path segment, `**` spans
  segments, `src/**` also matches `src` itself. A relative pattern without a `/` matches the
  file name at any depth (`edit(*.md)`), as in `.gitignore`; with a `/` it is anchored at the
  workspace root. An absolute pattern (`/etc/**`, `~/.ssh/**`) matches the absolute path,
  which is how a deny rule can name files outside the workspace.
- `*` alone, or `tool` without a pattern, matches every call of that tool (of any tool).
- `mcp(pattern)` matches MCP tools (`server__tool`) by name glob (`mcp(files__*)`); a bare
  `mcp` matches every MCP tool; a rule naming `files__search` itself works too.

An allow rule on `bash` matches only a plain command (see `_shell.py`: no environment
assignment, expansion, redirection, chain, subshell or dangerous option) and matches it word
by word after bash's quote removal: a `*` inside a word stays within that word, a `*` word
matches any number of words, so `bash(git status *)` never allows `git status; rm -rf ~` nor
`GIT_DIR=x git status`. Deny and ask rules match when the whole command or any one segment
(split at `;`, `&&`, `||`, `|`, `&`, newlines, leading assignments dropped) matches: the
naive split can only make a deny easier. Deny rules on commands are a guard rail, not a
sandbox.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import shlex
from dataclasses import dataclass

COMMAND_ARGUMENTS: dict[str, str] = {"bash": "command", "python": "code", "notebook_run": "source"}
"""Tools whose rules match a command-like argument, and that argument's name (`notebook_run`:
a `notebook_edit` that runs the cell it writes, decided as running that source; `gate.py`)."""

PATH_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "read": ("path",),
    "write": ("path",),
    "edit": ("path",),
    "ls": ("path",),
    "glob": ("path",),
    "grep": ("path",),
}
"""Tools whose rules match workspace paths, and the arguments holding them."""

PATH_DEFAULTS: dict[str, str] = {"ls": ".", "glob": ".", "grep": "."}
"""The path a tool works on when the argument is left out."""

_RULE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)(?:\((.*)\))?$", re.DOTALL)
_SAFE_REDIRECTS = re.compile(r"\d*>&\d+|&>\s*/dev/null|\d*>>?\s*/dev/null")
_SEPARATORS = re.compile(r"&&|\|\||[;|&\n]")
_ENV_PREFIX = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")


@dataclass(frozen=True)
class Rule:
    """One parsed rule."""

    text: str
    """The rule as written, e.g. `bash(git status*)`."""
    tool: str
    """The tool it names; `*` for every tool."""
    pattern: str | None
    """The argument pattern, or None for every call of the tool."""

    def names(self, tool_name: str) -> bool:
        if self.tool == MCP_RULE:
            return is_mcp_tool(tool_name) and (
                self.pattern is None or fnmatch.fnmatchcase(tool_name, self.pattern)
            )
        return self.tool == "*" or self.tool == tool_name


MCP_RULE = "mcp"
"""The rule name that matches MCP tools by their namespaced name."""


def is_mcp_tool(tool_name: str) -> bool:
    """MCP tools are namespaced `server__tool`; none of ours has `__` in its name."""
    return "__" in tool_name


def parse_rule(text: str) -> Rule:
    """Parse `tool`, `tool(pattern)` or `*`; raise `ValueError` saying what is expected."""
    if not isinstance(text, str):
        raise ValueError(f"a permission rule must be a string, not {type(text).__name__}")
    stripped = text.strip()
    if stripped == "*":
        return Rule(text=stripped, tool="*", pattern=None)
    match = _RULE.match(stripped)
    if match is None:
        raise ValueError(
            f"invalid permission rule {text!r}: expected `tool`, `tool(pattern)` or `*`, "
            "e.g. `bash(git status*)`, `write(src/**)`, `read`"
        )
    tool, pattern = match.group(1), match.group(2)
    if pattern is not None and not pattern.strip():
        raise ValueError(f"invalid permission rule {text!r}: the pattern in () is empty")
    return Rule(text=stripped, tool=tool, pattern=pattern.strip() if pattern else None)


# -- commands ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _command_regex(pattern: str) -> re.Pattern[str]:
    optional_tail = pattern.endswith(" *")
    body = pattern[:-2].rstrip() if optional_tail else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    if optional_tail:
        regex += r"(?:\s.*)?"
    return re.compile(regex, re.DOTALL)


def command_matches(pattern: str, command: str) -> bool:
    """Whether the whole (stripped) `command` matches the wildcard `pattern`."""
    return _command_regex(pattern.strip()).fullmatch(command.strip()) is not None


def command_segments(command: str) -> list[str]:
    """The simple commands of a command line, leading `VAR=value` assignments dropped."""
    cleaned = _SAFE_REDIRECTS.sub(" ", command)
    segments = []
    for part in _SEPARATORS.split(cleaned):
        part = _ENV_PREFIX.sub("", part.strip())
        if part:
            segments.append(part)
    return segments


_WORD_SEPARATOR = "\x1f"


@functools.lru_cache(maxsize=512)
def _words_regex(pattern: str) -> re.Pattern[str] | None:
    try:
        tokens = shlex.split(pattern, posix=True)
    except ValueError:
        return None
    parts: list[str] = []
    for index, token in enumerate(tokens):
        if token == "*" and index == 0:
            parts.append(f"[^{_WORD_SEPARATOR}]*(?:{_WORD_SEPARATOR}[^{_WORD_SEPARATOR}]*)*")
            continue
        if token == "*":
            # `*` as a word: any further words (or none), never part of a word before it.
            parts.append(f"(?:{_WORD_SEPARATOR}[^{_WORD_SEPARATOR}]*)*")
            continue
        inner = f"[^{_WORD_SEPARATOR}]*".join(re.escape(piece) for piece in token.split("*"))
        parts.append(inner if index == 0 else _WORD_SEPARATOR + inner)
    if tokens and tokens[-1] != "*" and tokens[-1].endswith("*"):
        # The older prefix form `git status*` keeps matching `git status --short`.
        parts.append(f"(?:{_WORD_SEPARATOR}[^{_WORD_SEPARATOR}]*)*")
    return re.compile("".join(parts), re.DOTALL) if parts else None


def words_match(pattern: str, words: tuple[str, ...]) -> bool:
    """Whether a plain command's `words` match a bash rule `pattern`, word by word."""
    if not words or any(_WORD_SEPARATOR in word for word in words):
        return False
    regex = _words_regex(pattern.strip())
    return regex is not None and regex.fullmatch(_WORD_SEPARATOR.join(words)) is not None


# -- paths -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            inner = pattern[i + 1 : end]
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def is_absolute_pattern(pattern: str) -> bool:
    return pattern.startswith(("/", "~"))


def path_matches(pattern: str, relative: str | None, absolute: str) -> bool:
    """Whether a path matches a glob `pattern`: a relative pattern against the
    workspace-relative POSIX path (None when the path is outside the workspace), an absolute
    one against the absolute POSIX path."""
    pattern = pattern.strip()
    if is_absolute_pattern(pattern):
        if pattern.startswith("~"):
            from pathlib import Path

            pattern = Path(pattern).expanduser().as_posix()
        return _glob_regex(pattern.rstrip("/") or "/").fullmatch(absolute) is not None
    if relative is None:
        return False
    if pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/") or "**"
    regex = _glob_regex(pattern)
    if "/" not in pattern:
        name = relative.rsplit("/", 1)[-1]
        return regex.fullmatch(name) is not None or regex.fullmatch(relative) is not None
    return regex.fullmatch(relative) is not None


def any_pattern(pattern: str) -> bool:
    """Whether a pattern matches anything at all (`*`, `**`), for tools without a matched
    argument."""
    return pattern.strip() in ("*", "**")
