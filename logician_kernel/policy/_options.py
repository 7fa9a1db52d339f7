"""The dangerous-option table, and how a command's words are read against it: the way the
program itself parses them.

A wildcard allow rule (`bash(git grep *)`) admits any further words, so the rule engine must
find the words that make the program run another program, write or read outside its
arguments, or talk to another repository. Programs read options their own way:

- getopt_long, argp, git's parse-options and npm's nopt take any unambiguous *prefix* of a
  long option: `--open` is git grep's `--open-files-in-pager`, `--upload-p` is
  `--upload-pack`, and `git ls-remote --u` is one letter, since `ls-remote` has no other
  `--u…` option. The value follows `=` or comes in the next word.
- Short options bundle in one word, and one taking a value eats the rest of the word
  (`-nOvim` is `-n -O vim`). tar's first word is a bundle even without a dash
  (`tar xIf prog a.tar`).

So a word is read as a dangerous long option when its name (before `=`) is *any* non-empty
prefix of it. Which prefixes are unambiguous depends on the program's version and the
subcommand; an ambiguous one is refused by the program itself, so over-reading costs at most a
question, while under-reading runs code. The one exception is a complete option of the program
that is itself a prefix of a dangerous one (tar's `--checkpoint`, of `--checkpoint-action`):
every parser takes an exact match first. A dangerous short letter is found anywhere in a
bundle, even where it would be a value: again only a question.

Why a deny list read by prefix, and not an allow list of each program's safe options for
wildcard rules: reading by prefix holds for every version's option set without knowing it,
while an allow list would need each program's whole vocabulary per version and subcommand
(and would make most everyday commands ask). The cost is that the table must name every
dangerous option; it errs wide, and programs whose purpose is to run another command are never
plain at all (`RUNNERS` in `_shell.py`).

Pure functions over words. Must never: read an option more narrowly than its program would.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._option_table import (
    _ALIASES,
    _PYTHON,
    GIT_CONFIG_READS,
    GIT_RUNNERS,
    GIT_RUNS_A_COMMAND,
    GIT_SAFE_BEFORE_SUBCOMMAND,
    GIT_SUBCOMMAND_OPTIONS,
    OPTION_TABLE,
    Options,
)
from ._scripts import SCRIPT_CHECKS


def program_name(word: str) -> str:
    """The table's name for the program `word` runs (`/usr/bin/python3.12` is `python`)."""
    name = word.rsplit("/", 1)[-1]
    if _PYTHON.fullmatch(name):
        return "python"
    return _ALIASES.get(name, name)


def long_name(word: str) -> str | None:
    """The option name of a `--name[=value]` word; None for other words and for `--`."""
    if not word.startswith("--") or word == "--":
        return None
    return word[2:].split("=", 1)[0]


def word_hit(options: Options, word: str) -> tuple[str, str] | None:
    """(the dangerous option `word` is read as, e.g. `--upload-pack` or `-O`; how it was
    written, without its value, e.g. `--upload-p` or `-nO`), or None."""
    name = long_name(word)
    if name is not None:
        key = name.replace("_", "-") if options.underscores else name
        if key in options.exact_safe:
            return None
        if key in options.long:
            return "--" + key, "--" + name
        for option in options.long:
            if option.startswith(key):
                return "--" + option, "--" + name
        return None
    for single in options.words:
        if word.startswith(single):
            return single, single
    if word.startswith("-") and not word.startswith("--"):
        for index, letter in enumerate(word[1:], start=1):
            if letter in options.short:
                return "-" + letter, word[: index + 1]
    return None


def _described(program: str, hit: tuple[str, str]) -> str:
    option, written = hit
    spelled = f" (written `{written}`)" if written != option else ""
    return f"the option `{option}` of `{program}`{spelled}"


def _git_problem(args: Sequence[str]) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        word = args[index]
        if word not in GIT_SAFE_BEFORE_SUBCOMMAND:
            hit = word_hit(OPTION_TABLE["git"], word)
            if hit is None:
                written = word.split("=", 1)[0]
                hit = (written, written)
            return _described("git", hit) + " before the subcommand"
        index += 1
    if index == len(args):
        return None
    subcommand, rest = args[index], args[index + 1 :]
    if subcommand in GIT_RUNNERS:
        return f"`git {subcommand}`, which runs other programs"
    if subcommand == "config" and not GIT_CONFIG_READS.intersection(rest):
        return "`git config` setting a value (git runs commands named in its settings)"
    runs = GIT_RUNS_A_COMMAND.get(subcommand)
    if runs is not None and runs in rest:
        return f"`git {subcommand} {runs}`, which runs a command"
    options = OPTION_TABLE["git"] + GIT_SUBCOMMAND_OPTIONS.get(subcommand, Options())
    for word in rest:
        hit = word_hit(options, word)
        if hit is not None:
            return _described("git", hit)
    return None


def _python_module(args: Sequence[str]) -> tuple[str, Sequence[str]] | None:
    """(the module of `python -m MOD ARGS…`, its ARGS), with `-m` where python reads it: in a
    bundle (`-Im mod`, `-mmod`), before the first operand (a script)."""
    for index, word in enumerate(args):
        if not word.startswith("-") or word.startswith("--"):
            return None
        at = word.find("m", 1)
        if at > 0:
            if word[at + 1 :]:
                return word[at + 1 :], args[index + 1 :]
            if index + 1 < len(args):
                return args[index + 1], args[index + 2 :]
            return None
    return None


def option_problem(word: str, args: Sequence[str]) -> str | None:
    """Why the arguments `args` of the program `word` make a command unsafe to allow by rule
    (a dangerous option, however it is spelled, or a script that runs or writes), or None."""
    program = program_name(word)
    if program == "git":
        return _git_problem(args)
    module = _python_module(args) if program == "python" else None
    if module is not None:
        # `python -m pytest --basetemp=/`: after the module, its own options (python's own
        # `-c`, `-W`, `-X` before it are still read below).
        problem = option_problem(*module)
        if problem is not None:
            return problem
    options = OPTION_TABLE.get(program)
    if options is not None:
        words = list(args)
        if options.first_bundle and words and not words[0].startswith("-"):
            words[0] = "-" + words[0]
        for arg in words:
            hit = word_hit(options, arg)
            if hit is not None:
                return _described(program, hit)
    check = SCRIPT_CHECKS.get(program)
    return check(tuple(args)) if check is not None else None
