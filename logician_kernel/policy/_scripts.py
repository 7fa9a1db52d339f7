"""Programs that run a script given in their arguments: whether the script can run a command,
write a file or read one it does not name as an argument.

`sed 'e touch M'`, `sed 's/x/y/w /tmp/out'`, `awk 'BEGIN{system("…")}'`, `curl -d @/etc/passwd`
and `make SHELL=/tmp/evil` pass every option check, yet run or write what no rule meant to
allow. Each check here reads the arguments as the program would and names what it found, or
returns None when the script only reads its input and prints.

The sed reader follows GNU sed's own parser (`compile.c`: addresses, then one command letter;
`s` and `y` split at the delimiter as `match_slash` does, read both with and without bracket
expressions since versions differ; a label ends at a blank or `;`) and admits only the
commands that print, delete, branch or hold (`= d D g G h H l n N p P q Q x z`, `s` and `y`
without the `e` and `w` flags, `b t T :` labels, `{ }`). A script it cannot read is refused.
sed compiles the whole script before it runs any of it, so where our reading is looser than
sed's, sed refuses the script; `test_policy_sed_sandbox.py` holds our reading against GNU
sed's `--sandbox` (which refuses `e`, `r`, `w`) on generated scripts. awk programs are not parsed: a
program holding `system`, a pipe, a redirection, `getline`, `@` (gawk's `@load`, indirect
calls) or `ARGV`/`ARGC` (reading other files) is refused, so a comparison `$1 > 5` asks too.

Pure functions over words. Must never: call a script harmless that it could not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

_SED_PLAIN = frozenset("=dDgGhHlnNpPqQxz")
"""Commands that only print, delete, hold or quit (`l`, `q`, `Q` take an optional number)."""
_SED_LABELS = frozenset("btT:")
_S_FLAGS = frozenset("gpiImM0123456789")
_AWK_DANGERS = ("system", "|", ">", "getline", "@", "ARGV", "ARGC", "/inet")


def _bracket_end(script: str, i: int) -> int:
    """The index after a bracket expression opening at `i` (`[^]a-z[:digit:]]`), or -1."""
    n = len(script)
    j = i + 1
    if j < n and script[j] == "^":
        j += 1
    if j < n and script[j] == "]":
        j += 1
    while j < n and script[j] != "]":
        if script[j] == "[" and j + 1 < n and script[j + 1] in ":=.":
            close = script.find(script[j + 1] + "]", j + 2)
            if close < 0:
                return -1
            j = close + 2
            continue
        j += 1
    return j + 1 if j < n else -1


def _until(script: str, i: int, delim: str, brackets: bool = False) -> int:
    """The index of the next unescaped `delim` from `i`, or -1: as sed's `match_slash`, and
    with `brackets` skipping bracket expressions in a regex (newer GNU sed does: in
    `s/[/]/x/` the slash inside the brackets does not end the regex)."""
    n = len(script)
    while i < n:
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            return i
        if c == "[" and brackets:
            i = _bracket_end(script, i)
            if i < 0:
                return -1
            continue
        i += 1
    return -1


def _one_address(script: str, i: int, brackets: bool) -> int:
    n = len(script)
    if i < n and script[i].isdigit():
        while i < n and script[i].isdigit():
            i += 1
        if i < n and script[i] == "~":
            i += 1
            while i < n and script[i].isdigit():
                i += 1
        return i
    if i < n and script[i] == "$":
        return i + 1
    if i < n and script[i] in "/\\":
        if script[i] == "\\":
            if i + 1 >= n or script[i + 1] in "\n\\":
                return -1
            delim, start = script[i + 1], i + 2
        else:
            delim, start = "/", i + 1
        end = _until(script, start, delim, brackets)
        if end < 0:
            return -1
        i = end + 1
        while i < n and script[i] in "IM":
            i += 1
    return i


def _skip_blanks(script: str, i: int) -> int:
    while i < len(script) and script[i] in " \t":
        i += 1
    return i


def _address(script: str, i: int, brackets: bool) -> int:
    """The index after the address (`1`, `$`, `/re/I`, `1,+3`, `0,/x/`) and any `!`."""
    n = len(script)
    i = _one_address(script, i, brackets)
    if i < 0:
        return -1
    i = _skip_blanks(script, i)
    if i < n and script[i] == ",":
        i = _skip_blanks(script, i + 1)
        if i < n and script[i] in "+~":
            i += 1
            while i < n and script[i].isdigit():
                i += 1
        else:
            i = _one_address(script, i, brackets)
            if i < 0:
                return -1
    i = _skip_blanks(script, i)
    while i < n and script[i] == "!":
        i = _skip_blanks(script, i + 1)
    return i


def sed_script_problem(script: str) -> str | None:
    """What in a sed script runs a command, writes or reads a file, or cannot be read; None
    when it only prints, deletes, substitutes, holds or branches. Read twice, with and without
    bracket expressions in regexes (sed versions differ), and refused if either reading finds
    something."""
    return _sed_read(script, brackets=False) or _sed_read(script, brackets=True)


def _sed_read(script: str, brackets: bool) -> str | None:
    i, n = 0, len(script)
    unreadable = "a sed script that cannot be read as sed would"
    while i < n:
        c = script[i]
        if c in " \t\n;{}":
            i += 1
            continue
        if c == "#":
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        i = _address(script, i, brackets)
        if i < 0:
            return unreadable
        if i >= n:
            return None  # an address with no command: sed refuses the script
        c = script[i]
        if c in "{}":
            continue
        if c in _SED_PLAIN:
            i = _skip_blanks(script, i + 1)
            while i < n and script[i].isdigit():
                i += 1
            continue
        if c in _SED_LABELS:
            # GNU sed ends a label at a blank or `;` and reads a command after it (`:a e id`
            # runs `e`): read the least label, so that whatever follows is read as commands.
            i = _skip_blanks(script, i + 1)
            while i < n and script[i] not in " \t;\n}":
                i += 1
            continue
        if c in "sy":
            if i + 1 >= n or script[i + 1] in "\n\\":
                return unreadable
            delim, i = script[i + 1], i + 2
            for part in range(2):
                end = _until(script, i, delim, brackets and c == "s" and part == 0)
                if end < 0:
                    return unreadable
                i = end + 1
            if c == "s":
                while i < n and script[i] in _S_FLAGS:
                    i += 1
                if i < n and script[i] in "ew":
                    return f"the `{script[i]}` flag of a sed `s` command (it runs or writes)"
            continue
        return f"the sed command `{c}` (only printing, deleting, substituting commands are plain)"
    return None


def _sed_problem(args: tuple[str, ...]) -> str | None:
    """Find sed's scripts as its getopt_long would (`-e S`, `-nS`-style bundles,
    `--expression=S`, `--exp S`; else the first operand) and read each one."""
    scripts: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            operands += args[i + 1 :]
            break
        if word.startswith("--"):
            name = word[2:].split("=", 1)[0]
            takes = name and ("expression".startswith(name) or "line-length".startswith(name))
            if takes and "=" not in word:
                i += 1
                value = args[i] if i < len(args) else ""
            else:
                value = word.split("=", 1)[1] if "=" in word else ""
            if name and "expression".startswith(name):
                scripts.append(value)
        elif word.startswith("-") and len(word) > 1:
            for k, letter in enumerate(word[1:], start=1):
                if letter in "el":
                    value = word[k + 1 :]
                    if not value:
                        i += 1
                        value = args[i] if i < len(args) else ""
                    if letter == "e":
                        scripts.append(value)
                    break
        else:
            operands.append(word)
        i += 1
    if not scripts and operands:
        scripts.append(operands[0])
    for script in scripts:
        problem = sed_script_problem(script)
        if problem is not None:
            return problem
    return None


def _awk_problem(args: tuple[str, ...]) -> str | None:
    for word in args:
        for danger in _AWK_DANGERS:
            if danger in word:
                return f"an awk program that can run, write or read other files (`{danger}`)"
    return None


def _curl_problem(args: tuple[str, ...]) -> str | None:
    for word in args:
        if word.startswith("@") or (word.startswith("-") and "@" in word):
            return "a file curl would read and send (`@…`)"
        if "%output{" in word:
            return "a file curl would write (`%output{…}`)"
        if "file:" in word.lower():
            return "a `file:` URL (curl would read a local file)"
    return None


_MAKE_ASSIGNMENT = re.compile(r"^[^-=][^=]*[:+?!]?=")


def _make_problem(args: tuple[str, ...]) -> str | None:
    for word in args:
        if _MAKE_ASSIGNMENT.match(word):
            return f"a make variable override (`{word.split('=', 1)[0]}=`)"
    return None


def _go_problem(args: tuple[str, ...]) -> str | None:
    for word in args:
        if "extld" in word or "extar" in word:
            return "an external linker or archiver chosen on the command line (`-extld`)"
    return None


SCRIPT_CHECKS: Mapping[str, Callable[[tuple[str, ...]], str | None]] = {
    "sed": _sed_problem,
    "awk": _awk_problem,
    "curl": _curl_problem,
    "make": _make_problem,
    "go": _go_problem,
}
"""Program-specific reading of arguments, after the option table (`_options.py`)."""
