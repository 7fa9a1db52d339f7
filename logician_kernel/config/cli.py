"""`logician config ...` and `logician trust`: argparse wiring around `commands`.

Each subcommand prints its result and returns an exit code; a configuration error prints one
line to stderr and returns 2. Notices about the loaded layers go to stderr so that stdout
stays machine-readable (`config show --json`, `config schema`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from . import commands
from ._effective import EffectiveConfig, load_effective_config
from ._errors import ConfigError
from ._keys import command_line_value

__all__ = ["add_config_subcommands"]


def _load(start: Path | None = None) -> EffectiveConfig:
    return load_effective_config(start or Path.cwd(), env=os.environ)


def _notices(cfg: EffectiveConfig) -> None:
    for notice in cfg.notices:
        print(f"logician: note: {notice}", file=sys.stderr)


def _fail(error: ConfigError) -> int:
    print(f"logician: error: {'; '.join(error.problems)}", file=sys.stderr)
    return 2


def _show(args: argparse.Namespace) -> int:
    cfg = _load()
    if not args.json:
        print(commands.config_show(cfg))
        return 0
    print(commands.config_show(cfg, as_json=True))
    _notices(cfg)
    return 0


def _get(args: argparse.Namespace) -> int:
    cfg = _load()
    _notices(cfg)
    print(commands.config_get(cfg, args.key))
    return 0


def _set(args: argparse.Namespace) -> int:
    cfg = _load()
    _notices(cfg)
    value = command_line_value(" ".join(args.value))  # `[a, b]` unquoted arrives as 2 words
    _, message = commands.config_set(cfg, args.key, value, persist=args.persist)
    print(message)
    return 0


def _unset(args: argparse.Namespace) -> int:
    cfg = _load()
    _notices(cfg)
    _, message = commands.config_unset(cfg, args.key, persist=args.persist)
    print(message)
    return 0


def _schema(args: argparse.Namespace) -> int:
    print(commands.config_schema())
    return 0


def _trust(args: argparse.Namespace) -> int:
    start = Path(args.dir).expanduser().resolve() if args.dir else Path.cwd()
    if not start.is_dir():
        raise ConfigError(f"{args.dir}: not a directory")
    cfg = _load(start)
    print(commands.trust(cfg.workspace, user_dir=cfg.user_dir, allow=args.allow or ()))
    return 0


def _guarded(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return int(func(args))
        except ConfigError as error:
            return _fail(error)

    run.__name__ = func.__name__
    return run


def add_config_subcommands(subparsers: Any) -> None:
    """Register `config {show,get,set,unset,schema}` and `trust [DIR]` on `subparsers`
    (from `ArgumentParser.add_subparsers()`). Each parser sets `func(args) -> exit code`."""
    config = subparsers.add_parser(
        "config",
        help="inspect and change configuration",
        description="Inspect and change the layered configuration "
        "(defaults < user file < trusted project file < LOGICIAN_* env < session).",
    )
    sub = config.add_subparsers(dest="config_command", metavar="COMMAND", required=True)

    show = sub.add_parser("show", help="every effective value and the layer that set it")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(func=_guarded(_show))

    get = sub.add_parser("get", help="one value (or a section) and the layer that set it")
    get.add_argument("key", metavar="KEY", help="dotted key, e.g. model.name")
    get.set_defaults(func=_guarded(_get))

    persist_help = "file to write: user (default) or project (<workspace>/.logician/config.toml)"
    set_ = sub.add_parser(
        "set",
        help="write one key to a config file",
        description="Write exactly one key, atomically, preserving the rest of the file. "
        'VALUE is a TOML literal (5, true, ["a"], "text"), JSON, or a bare string; '
        "everything after KEY is the value.",
    )
    set_.add_argument("key", metavar="KEY", help="dotted key, e.g. model.name")
    set_.add_argument("value", metavar="VALUE", nargs="+", help="new value")
    set_.add_argument("--persist", choices=("user", "project"), default="user", help=persist_help)
    set_.set_defaults(func=_guarded(_set))

    unset = sub.add_parser("unset", help="remove one key from a config file")
    unset.add_argument("key", metavar="KEY", help="dotted key, e.g. model.name")
    unset.add_argument("--persist", choices=("user", "project"), default="user", help=persist_help)
    unset.set_defaults(func=_guarded(_unset))

    schema = sub.add_parser("schema", help="the JSON Schema of config files, for editors")
    schema.set_defaults(func=_guarded(_schema))

    trust = subparsers.add_parser(
        "trust",
        help="trust a workspace so its .logician/config.toml applies",
        description="Record DIR's workspace (the git work tree containing it, or DIR) as "
        "trusted in the user config dir, for its project file as it is now: a later change "
        "asks again. Fields that can take the kernel over (model.base_url, "
        "permissions.mode, ...) apply only with --allow KEY, for the value they have now.",
    )
    trust.add_argument("dir", metavar="DIR", nargs="?", help="workspace directory (default: .)")
    trust.add_argument(
        "--allow",
        metavar="KEY",
        action="append",
        help="also apply the project's current value of this gated field (repeatable)",
    )
    trust.set_defaults(func=_guarded(_trust))
