"""The dangerous-option table: by program, the options that make it run another program,
write or read outside its arguments, or reach another repository (data only; `_options.py`
reads a command's words against it the way each program parses them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Options:
    """What is dangerous in one program's arguments."""

    long: tuple[str, ...] = ()
    """Long options without `--`, each read by any prefix: `--opt`, `--op=v`, `--o v`."""
    short: str = ""
    """Short option letters, found anywhere in a `-abc` bundle."""
    words: tuple[str, ...] = ()
    """Single-dash long options (find's `-exec`), matched as the start of a word."""
    exact_safe: frozenset[str] = field(default_factory=frozenset)
    """Complete, harmless long options that are prefixes of a dangerous one (`checkpoint`)."""
    first_bundle: bool = False
    """The first argument is a bundle of short options even without a dash (tar)."""
    underscores: bool = False
    """`_` and `-` are one in option names (npm's nopt)."""

    def __add__(self, other: Options) -> Options:
        return Options(
            long=self.long + other.long,
            short=self.short + other.short,
            words=self.words + other.words,
            exact_safe=self.exact_safe | other.exact_safe,
            first_bundle=self.first_bundle or other.first_bundle,
            underscores=self.underscores or other.underscores,
        )


_NPM = Options(
    long=(
        "script-shell",
        "prefix",
        "userconfig",
        "globalconfig",
        "node-options",
        "call",
        "git",
        "editor",
        "browser",
        "viewer",
        "shell",
        "init-module",
        "node-gyp",
        "onload-script",
    ),
    short="c",
    underscores=True,
)

OPTION_TABLE: Mapping[str, Options] = {
    "git": Options(
        long=(
            "config-env",
            "config",
            "exec-path",
            "git-dir",
            "work-tree",
            "namespace",
            "super-prefix",
            "output",
            "output-directory",
            "upload-pack",
            "receive-pack",
            "exec",
            "ext-diff",
            "no-index",
            "upload-archive",
            "template",
            "separate-git-dir",
            "open-files-in-pager",
            "extcmd",
        ),
        short="cCoO",
    ),
    "npm": _NPM,
    "npx": _NPM,
    "find": Options(
        words=("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls"),
    ),
    "rg": Options(long=("pre", "pre-glob", "hostname-bin")),
    "sort": Options(long=("output", "compress-program", "temporary-directory"), short="oT"),
    "tar": Options(
        long=(
            "to-command",
            "use-compress-program",
            "checkpoint-action",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
            "absolute-names",
            "directory",
            "index-file",
            "volno-file",
            "listed-incremental",
            "files-from",
            "dereference",
            "keep-directory-symlink",
        ),
        short="IFCPgTh",
        exact_safe=frozenset({"checkpoint"}),
        first_bundle=True,
    ),
    "curl": Options(
        long=(
            "output",
            "output-dir",
            "config",
            "upload-file",
            "dump-header",
            "cookie-jar",
            "trace",
            "trace-ascii",
            "stderr",
            "libcurl",
            "engine",
            "hsts",
            "alt-svc",
            "etag-save",
            "etag-compare",
            "netrc-file",
            "form",
            "form-string",
            "variable",
            "data-urlencode",
            "create-dirs",
            "unix-socket",
            "abstract-unix-socket",
            "ssl-sessions",
        ),
        short="oKTDcF",
    ),
    "rsync": Options(
        long=(
            "rsh",
            "rsync-path",
            "remote-option",
            "log-file",
            "write-batch",
            "only-write-batch",
            "read-batch",
            "backup-dir",
            "temp-dir",
            "partial-dir",
            "compare-dest",
            "copy-dest",
            "link-dest",
            "config",
            "daemon",
            "password-file",
            "early-input",
            "files-from",
            "server",
            "sender",
            "copy-links",
            "copy-unsafe-links",
            "copy-dirlinks",
            "keep-dirlinks",
        ),
        short="eMTLkK",
    ),
    "ssh": Options(short="oFEIS"),
    "scp": Options(short="oFSJ"),
    "sftp": Options(short="oFSDb"),
    "sed": Options(long=("in-place", "file"), short="if"),
    "awk": Options(
        long=(
            "file",
            "exec",
            "include",
            "load",
            "pretty-print",
            "profile",
            "dump-variables",
            "debug",
        ),
        short="fEilopdDW",
    ),
    "python": Options(short="cWX"),
    "node": Options(
        long=(
            "eval",
            "print",
            "require",
            "import",
            "loader",
            "experimental-loader",
            "inspect",
            "inspect-brk",
            "inspect-port",
            "env-file",
            "run",
            "openssl-config",
        ),
        short="epr",
    ),
    "perl": Options(short="eEMmidIx"),
    "ruby": Options(short="erIixCd"),
    "fd": Options(long=("exec", "exec-batch"), short="xX"),
    "make": Options(long=("eval", "file", "makefile", "directory", "include-dir"), short="EfCI"),
    "go": Options(
        long=("exec", "toolexec", "overlay", "vettool", "w", "modfile", "C"),
        words=("-exec", "-toolexec", "-overlay", "-vettool", "-w", "-modfile", "-C"),
    ),
    "cargo": Options(long=("config", "manifest-path", "target-dir", "root"), short="ZC"),
    "pytest": Options(
        long=(
            "basetemp",
            "rootdir",
            "confcutdir",
            "override-ini",
            "junit-xml",
            "junitxml",
            "result-log",
            "log-file",
            "debug",
            "pastebin",
            "pdbcls",
            "config-file",
            "plugins",
        ),
        short="pco",
    ),
    "kubectl": Options(long=("kubeconfig",)),
    "helm": Options(long=("kubeconfig", "post-renderer", "repository-config")),
    "lua": Options(short="el"),
    "luajit": Options(short="elj"),
    "php": Options(long=("define", "php-ini"), short="rBRFEdcz"),
    "julia": Options(long=("eval", "print", "load"), short="eEL"),
    "Rscript": Options(short="e"),
    "bun": Options(long=("eval", "print", "preload", "require"), short="epr"),
    "expect": Options(short="cf"),
    "wget": Options(
        long=(
            "output-document",
            "output-file",
            "append-output",
            "directory-prefix",
            "input-file",
            "use-askpass",
            "execute",
            "config",
            "post-file",
            "body-file",
            "load-cookies",
            "save-cookies",
            "warc-file",
            "rejected-log",
        ),
        short="OoaPie",
    ),
    "zip": Options(long=("unzip-command", "temp-path", "logfile-path"), short="Tb"),
    "unzip": Options(short="d:"),
    "hg": Options(long=("config", "repository", "cwd", "debugger"), short="R"),
    "man": Options(long=("pager", "html", "preprocessor", "config-file"), short="PHpC"),
}
"""Options that make a program run another program, write or read outside its arguments, or
reach another repository, by program (see `program_name` for the spellings of a program)."""

_ALIASES = {
    "gawk": "awk",
    "mawk": "awk",
    "nawk": "awk",
    "gsed": "sed",
    "gtar": "tar",
    "bsdtar": "tar",
    "fdfind": "fd",
    "nodejs": "node",
    "gmake": "make",
    "egrep": "grep",
    "fgrep": "grep",
    "pnpm": "npm",
    "yarn": "npm",
}
_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*[mw]?")

GIT_SAFE_BEFORE_SUBCOMMAND = frozenset(
    "--no-pager -P -p --paginate --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --bare --version -v --help -h "
    "--no-lazy-fetch --no-advice --html-path --man-path --info-path".split()
)
"""git's own options before the subcommand that are harmless; git reads these by exact
spelling, and every other one (`-c`, `-C`, `--git-dir=`, `--exec-path=`, `--list-cmds=`…)
chooses what runs or where, so it is never plain."""

GIT_SUBCOMMAND_OPTIONS: Mapping[str, Options] = {
    "clone": Options(short="u"),
    "config": Options(
        long=(
            "add",
            "unset",
            "unset-all",
            "replace-all",
            "rename-section",
            "remove-section",
            "edit",
            "file",
            "blob",
        ),
        short="ef",
    ),
    "difftool": Options(long=("extcmd",), short="x"),
    "rebase": Options(long=("exec",), short="x"),
}
"""Short options that are dangerous only in one subcommand (`git status -u` is harmless)."""

GIT_RUNS_A_COMMAND: Mapping[str, str] = {"bisect": "run", "submodule": "foreach"}
"""Subcommands whose word after them runs any command: `git bisect run CMD`."""

GIT_RUNNERS = frozenset({"filter-branch", "send-email", "instaweb", "daemon", "web--browse"})
"""Subcommands that run programs given on their command line or chosen by settings."""

GIT_CONFIG_READS = frozenset(
    "--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool --list -l get "
    "list".split()
)
"""How `git config` only reads; without one of these it sets a setting, and a setting
(`core.fsmonitor`, `core.pager`, `alias.x = !cmd`) is a command that later git calls run."""
