"""What a bash command line will run, as far as an allow rule needs to know.

An allow rule may match only a *plain* command: one simple command whose words the shell
takes literally. `plain_command` reads the line the way bash would (quotes, escapes) and
either returns its words or the reason it is not plain: an environment assignment, an
expansion (`$`, `${}`, backquotes, `$()`, braces, a leading `~`), a redirection, a chain
(`;`, `&&`, `||`, `|`, `&`, newlines), a subshell, or a known dangerous option of the program
(`git -c`, `--output`, `--upload-pack`, ...). File readers (`cat`, `head`, `grep`, ...) are
plain only when every path they name stays inside the workspace; they may not use globs.

The scan is ours, not a parser's guess: we walk the characters with bash's quoting rules so
that `git commit -m "a; b"` is one word, while `$` and backquotes are seen inside double
quotes (where bash expands them). `shlex` (POSIX mode) then splits the words. Anything we do
not understand is not plain: the only cost of a mistake here is an extra question.

Pure functions, no I/O beyond resolving a reader's paths (symlinks must be followed).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_CONTROL = {
    ";": "a `;` chain", "&": "a `&` chain or background job", "|": "a pipe or `||` chain",
    "<": "a redirection", ">": "a redirection", "(": "a subshell", ")": "a subshell",
    "\n": "a second line", "\r": "a second line",
}  # fmt: skip
"""Unquoted characters that end a simple command or redirect it, and what they mean."""

_EXPANSIONS = {"$": "an expansion (`$`)", "`": "a command substitution (backquotes)"}
"""Characters bash expands even inside double quotes."""

_UNQUOTED_EXPANSIONS = {
    "{": "a brace expansion", "}": "a brace expansion", "*": "a glob", "?": "a glob",
    "[": "a glob",
}  # fmt: skip
"""Unquoted characters bash expands outside quotes (globs matter only to readers, below)."""

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

DANGEROUS_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "git": (
        "-c", "-C", "--config-env", "--exec-path", "--git-dir", "--work-tree", "--namespace",
        "--super-prefix", "--output", "--output-directory", "-o", "--upload-pack",
        "--receive-pack", "--exec", "--ext-diff", "--no-index", "--upload-archive",
        "--template", "--separate-git-dir", "--open-files-in-pager", "-O",
    ),
    "npm": ("--script-shell", "--prefix", "--userconfig", "--globalconfig", "--node-options"),
    "npx": ("--script-shell", "--prefix", "--userconfig", "--globalconfig", "--node-options"),
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls"),
    "rg": ("--pre", "--pre-glob"),
    "sort": ("-o", "--output", "--compress-program"),
    "tar": ("--to-command", "--use-compress-program", "-I", "--checkpoint-action"),
}  # fmt: skip
"""Options that make a program run another program, write outside its arguments or read
another repository. `-x` matches `-x`, `-xVALUE`; `--long` matches `--long` and
`--long=VALUE`."""

RUNNERS = frozenset(
    "env sudo doas su exec eval command builtin xargs nohup nice timeout time stdbuf setsid "
    "chroot unshare nsenter watch script strace ltrace bash sh zsh dash fish ksh csh".split()
)
"""Programs whose arguments are another command: never plain, whatever a rule says."""

FILE_READERS = frozenset(
    "cat head tail less more grep egrep fgrep rg wc nl od xxd hexdump strings file stat tac "
    "diff cmp md5sum sha1sum sha256sum base64 sort uniq cut column".split()
)
"""Programs that read the files named in their arguments: paths must stay in the workspace."""

_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg"})


@dataclass(frozen=True)
class ShellCheck:
    """A command line, read as bash would: its words, or why no allow rule may match it."""

    words: tuple[str, ...] = ()
    """The simple command's words after quote removal; empty when `problem` is set."""
    problem: str | None = None
    """Why the line is not a plain command, e.g. `an environment assignment (GIT_DIR=..)`."""

    @property
    def plain(self) -> bool:
        return self.problem is None

    @property
    def text(self) -> str:
        """The words joined back with single spaces, as rule patterns are written."""
        return " ".join(self.words)


def _scan(command: str) -> str | None:
    """The first unquoted shell feature that makes `command` not a simple literal command."""
    quote: str | None = None
    i, n = 0, len(command)
    at_word_start = True
    while i < n:
        c = command[i]
        if quote == "'":
            if c == "'":
                quote = None
        elif c == "\\":
            if i + 1 < n and command[i + 1] in "\n\r":
                return "a line continuation"
            i += 2
            at_word_start = False
            continue
        elif c in _EXPANSIONS:
            return _EXPANSIONS[c]
        elif quote == '"':
            if c == '"':
                quote = None
        elif c in "'\"":
            quote = c
        elif c in _CONTROL:
            return _CONTROL[c]
        elif c in "{}":
            return _UNQUOTED_EXPANSIONS[c]
        elif c == "~" and at_word_start:
            return "a home directory expansion (`~`)"
        elif c == "#" and at_word_start:
            return "a comment"
        at_word_start = c in " \t" and quote is None
        i += 1
    if quote is not None:
        return "an unterminated quote"
    return None


def _has_unquoted_glob(command: str) -> bool:
    quote: str | None = None
    i = 0
    while i < len(command):
        c = command[i]
        if quote is None and c == "\\":
            i += 2
            continue
        if quote is None and c in "'\"":
            quote = c
        elif quote is not None and c == quote:
            quote = None
        elif quote is None and c in "*?[":
            return True
        i += 1
    return False


def _option_hit(program: str, word: str) -> str | None:
    for option in DANGEROUS_OPTIONS.get(program, ()):
        if option.startswith("--"):
            if word == option or word.startswith(option + "="):
                return option
        elif word.startswith(option) and not word.startswith("--"):
            return option
    return None


def _named_paths(program: str, args: tuple[str, ...]) -> list[str]:
    """The arguments of a file reader that may name a file (option values included)."""
    names: list[str] = []
    skip_pattern = program in _PATTERN_FIRST and not any(
        a in ("-e", "-f", "--file", "--regexp") or a.startswith(("--regexp=", "--file="))
        for a in args
    )
    for arg in args:
        if arg.startswith("-") and arg != "-":
            if "=" in arg:
                names.append(arg.split("=", 1)[1])
            elif not arg.startswith("--") and len(arg) > 2 and "/" in arg:
                names.append(arg[2:])
            continue
        if skip_pattern:
            skip_pattern = False
            continue
        names.append(arg)
    return names


def _outside(name: str, workspace: Path, cwd: Path) -> bool:
    if not name or name == "-":
        return False
    candidate = Path(name)
    if candidate.is_absolute():
        return True
    try:
        resolved = (cwd / candidate).resolve()
    except (OSError, RuntimeError):
        return True
    return not (resolved == workspace or resolved.is_relative_to(workspace))


def plain_command(
    command: str, workspace: Path | None = None, *, cwd: Path | None = None
) -> ShellCheck:
    """Read `command` as bash would; see the module docstring for what is plain.

    `workspace` (resolved) bounds what a file reader may name; without it a file reader is
    never plain, since its paths cannot be checked. `cwd` (resolved, inside the workspace;
    default: the workspace) is where the command runs: relative paths resolve there."""
    if not isinstance(command, str) or not command.strip():
        return ShellCheck(problem="an empty command")
    if "\0" in command:
        return ShellCheck(problem="a NUL byte")
    leading = _ASSIGNMENT.match(command.lstrip())
    if leading is not None:  # named first: it is what the reader of the reason looks for
        name = leading.group(0).rstrip("+=").split("[", 1)[0]
        return ShellCheck(problem=f"an environment assignment ({name}=…)")
    problem = _scan(command)
    if problem is not None:
        return ShellCheck(problem=problem)
    try:
        words = tuple(shlex.split(command, comments=False, posix=True))
    except ValueError as exc:
        return ShellCheck(problem=f"unreadable quoting ({exc})")
    if not words:
        return ShellCheck(problem="an empty command")
    if _ASSIGNMENT.match(words[0]):
        return ShellCheck(problem=f"an environment assignment ({words[0].split('=', 1)[0]}=…)")
    program = words[0].rsplit("/", 1)[-1]
    if program in RUNNERS and len(words) > 1:  # bare `env`, `time` only print
        return ShellCheck(problem=f"`{program}` runs another command")
    for word in words[1:]:
        option = _option_hit(program, word)
        if option is not None:
            return ShellCheck(problem=f"the option `{option}` of `{program}`")
    if program in FILE_READERS:
        if workspace is None:
            return ShellCheck(problem=f"`{program}` reads files, and no workspace is known")
        if _has_unquoted_glob(command):
            return ShellCheck(problem=f"a glob in the arguments of the file reader `{program}`")
        for name in _named_paths(program, words[1:]):
            if name.startswith("~") or _outside(name, workspace, cwd or workspace):
                return ShellCheck(problem=f"`{program}` would read `{name}`, outside the workspace")
    return ShellCheck(words=words)


def is_reader(words: tuple[str, ...]) -> bool:
    return bool(words) and words[0].rsplit("/", 1)[-1] in FILE_READERS


SUBCOMMAND_PROGRAMS = frozenset(
    "git npm npx pnpm yarn uv pip pip3 poetry cargo go docker kubectl make conda mamba "
    "gh jupyter dotnet mvn gradle brew apt apt-get".split()
)
"""Programs whose second word is a subcommand: *Always allow* proposes `git status *`."""


def narrowest_command_pattern(
    command: str, workspace: Path, *, cwd: Path | None = None
) -> str | None:
    """The narrowest pattern an *Always allow* on `command` proposes: the program and its
    subcommand for `SUBCOMMAND_PROGRAMS`, else the exact command; None when no rule could
    allow it (not plain) or it holds a `*`, which a pattern would read as a wildcard."""
    check = plain_command(command, workspace, cwd=cwd)
    if not check.plain or any("*" in word for word in check.words):
        return None
    words = check.words
    if (
        len(words) > 1
        and words[0] in SUBCOMMAND_PROGRAMS
        and not words[1].startswith("-")
        and not is_reader(words)
    ):
        return f"{words[0]} {words[1]} *"
    return shlex.join(words)
