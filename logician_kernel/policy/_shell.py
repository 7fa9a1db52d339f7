"""What a bash command line will run, as far as an allow rule needs to know.

An allow rule may match only a *plain* command: one simple command whose words the shell
takes literally. `plain_command` reads the line the way bash would (quotes, escapes) and
either returns its words or the reason it is not plain: an environment assignment, an
expansion (`$`, `${}`, backquotes, `$()`, braces, a leading `~`), a redirection, a chain
(`;`, `&&`, `||`, `|`, `&`, newlines), a subshell, a dangerous option of the program however
the program would read it (`git -c`, `--upload-p` for `--upload-pack`, `-nO` for `-O`: see
`_options.py`), or a script that runs or writes (`sed 'e …'`, `awk 'BEGIN{system(…)}'`: see
`_scripts.py`). File readers (`cat`, `head`, `grep`, `sed`, `awk`, ...) are plain only when
every path they name stays inside the workspace; they may not use globs. Copiers (`rsync`,
`scp`) are plain only with local operands inside the workspace.

The scan is ours, not a parser's guess: we walk the characters with bash's quoting rules so
that `git commit -m "a; b"` is one word, while `$` and backquotes are seen inside double
quotes (where bash expands them). `shlex` (POSIX mode) then splits the words. Anything we do
not understand is not plain: the only cost of a mistake here is an extra question.

Pure functions, no I/O beyond resolving a reader's paths (symlinks must be followed).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from ._options import long_name, option_problem, program_name

_CONTROL = {
    ";": "a `;` chain",
    "&": "a `&` chain or background job",
    "|": "a pipe or `||` chain",
    "<": "a redirection",
    ">": "a redirection",
    "(": "a subshell",
    ")": "a subshell",
    "\n": "a second line",
    "\r": "a second line",
}
"""Unquoted characters that end a simple command or redirect it, and what they mean."""

_EXPANSIONS = {"$": "an expansion (`$`)", "`": "a command substitution (backquotes)"}
"""Characters bash expands even inside double quotes."""

_UNQUOTED_EXPANSIONS = {
    "{": "a brace expansion",
    "}": "a brace expansion",
    "*": "a glob",
    "?": "a glob",
    "[": "a glob",
}
"""Unquoted characters bash expands outside quotes (globs matter only to readers, below)."""

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

RUNNERS = frozenset(
    "env sudo doas su exec eval command builtin xargs nohup nice timeout time stdbuf setsid "
    "chroot unshare nsenter watch script strace ltrace bash sh zsh dash fish ksh csh "
    "source . enable flock parallel ionice chrt taskset prlimit systemd-run runuser sg "
    "pkexec busybox sshpass unbuffer entr ssh-agent dbus-run-session xvfb-run setpriv capsh "
    "torsocks proxychains proxychains4 valgrind gdb tmux screen at batch crontab fakeroot "
    "bwrap firejail chronic ifne eatmydata faketime perf hyperfine watchexec nocache "
    "catchsegv toybox pwsh powershell".split()
)
"""Programs whose arguments are another command: never plain, whatever a rule says."""

FILE_READERS = frozenset(
    "cat head tail less more grep egrep fgrep rg wc nl od xxd hexdump strings file stat tac "
    "diff cmp md5sum sha1sum sha256sum base64 sort uniq cut column sed gsed awk gawk mawk "
    "nawk".split()
)
"""Programs that read the files named in their arguments: paths must stay in the workspace."""

COPIERS = frozenset({"rsync", "scp", "tar", "gtar", "bsdtar"})
"""Programs that copy between their operands (tar: the archive and its members): every
operand must stay in the workspace, and a remote operand (`host:path`) is not plain (it runs
ssh or rsh)."""

_PATTERN_FIRST = frozenset("grep egrep fgrep rg sed gsed awk gawk mawk nawk".split())
"""Readers whose first operand is a pattern or a script, not a file, unless an option gives
it."""

_PATTERN_OPTIONS = ("regexp", "file", "files", "expression", "source", "exec", "include")
"""Long options (read by any prefix, as getopt_long does) that give the pattern or script, so
that the first operand is a file; `-e` and `-f` in a short bundle do the same."""

_INLINE_PATTERN_OPTIONS = ("regexp", "expression", "source")
"""Of those, the ones whose value (the next word) is the pattern itself, not a file."""

_FLAGS = {
    "grep": frozenset("iIvwxcLlnHhoqsrRFEGPzZUabTy"),
    "rg": frozenset("iIvwxcLlnHhoqsSuUFzaNpb0."),
    "sed": frozenset("nrEsuz"),
    "awk": frozenset("bcChLMNOPrSstV"),
}
"""Short options of the pattern-first readers that take no value. A letter not listed may
take one (and eat an `e` after it), so a bundle holding one never hides its next word."""


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


def _gives_pattern(word: str) -> bool:
    name = long_name(word)
    if name is not None:
        return bool(name) and any(option.startswith(name) for option in _PATTERN_OPTIONS)
    return word.startswith("-") and ("e" in word[1:] or "f" in word[1:])


def _pattern_letter(program: str, bundle: str) -> int:
    """The index of `-e` in a short bundle when it gives a pattern (every letter before it is
    a flag that takes no value, so `e` is not some option's value); else -1."""
    flags = _FLAGS.get(program_name(program))
    end = bundle.find("e", 1)
    if flags is None or end < 0 or any(letter not in flags for letter in bundle[1:end]):
        return -1
    return end


def _named_paths(program: str, args: tuple[str, ...]) -> list[str]:
    """The arguments of a file reader that may name a file (option values included: after
    `=`, and every tail of a short bundle before a pattern letter, since `-if/etc/x` is
    `-i -f /etc/x`); a pattern given by `-e P`, `--regexp P` or as the first operand is not."""
    names: list[str] = []
    skip_pattern = program in _PATTERN_FIRST and not any(_gives_pattern(a) for a in args)
    pattern_next = False
    for arg in args:
        if pattern_next:
            pattern_next = False
            continue
        name = long_name(arg)
        if name is not None:
            if "=" in arg:
                names.append(arg.split("=", 1)[1])
            else:
                pattern_next = bool(name) and any(
                    option.startswith(name) for option in _INLINE_PATTERN_OPTIONS
                )
            continue
        if arg.startswith("-") and arg != "-":
            end = _pattern_letter(program, arg)
            names += [arg[k:] for k in range(2, len(arg) if end < 0 else end + 1)]
            pattern_next = end == len(arg) - 1
            continue
        if skip_pattern:
            skip_pattern = False
            continue
        names.append(arg)
    return names


def _remote(operand: str) -> bool:
    """`host:path` (rsync, scp), as opposed to a local `dir/a:b`."""
    colon = operand.find(":")
    return colon > 0 and ("/" not in operand[:colon])


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


def _path_problem(
    program: str,
    args: tuple[str, ...],
    command: str,
    workspace: Path | None,
    cwd: Path | None = None,
) -> str | None:
    """Why a reader, a copier or git names a path outside the workspace (symlinks followed),
    or a remote one; None when every path it names stays inside."""
    kind = program
    if program in COPIERS:
        for operand in args:
            if not operand.startswith("-") and _remote(operand):
                return f"a remote operand of `{program}` (`{operand}`)"
        verb = "would copy to or from"
    elif program in FILE_READERS:
        if workspace is None:
            return f"`{program}` reads files, and no workspace is known"
        if _has_unquoted_glob(command):
            return f"a glob in the arguments of the file reader `{program}`"
        verb = "would read"
    elif program == "git":
        # `git diff /etc/x README.md` is `git diff --no-index`: git reads a path outside its
        # tree without being told to, and `-F`, `--contents`, a remote path do the same.
        while args and args[0].startswith("-"):
            args = args[1:]  # git's own options: `_options.py` allowed only harmless ones
        kind = "grep" if args[:1] == ("grep",) else "git"
        args, verb = args[1:], "would reach"
    else:
        return None
    if workspace is None:
        return f"`{program}` names files, and no workspace is known"
    for name in _named_paths(kind, args):
        if name.startswith("~") or _outside(name, workspace, cwd or workspace):
            return f"`{program}` {verb} `{name}`, outside the workspace"
    return None


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
    problem = option_problem(program, words[1:]) or _path_problem(
        program, words[1:], command, workspace, cwd
    )
    if problem is not None:
        return ShellCheck(problem=problem)
    return ShellCheck(words=words)


def narrowest_command_pattern(
    command: str, workspace: Path, *, cwd: Path | None = None
) -> str | None:
    """The rule pattern an *Always allow* on `command` proposes: exactly the command, as
    bash reads its words. Never a wildcard: `git grep *` would admit options the call did not
    have (`--open-files-in-pager`, however abbreviated). None when no rule could allow the
    command (not plain) or it holds a `*`, which a pattern would read as a wildcard."""
    check = plain_command(command, workspace, cwd=cwd)
    if not check.plain or any("*" in word for word in check.words):
        return None
    return shlex.join(check.words)
