"""The private store's git configuration is ours alone: data found in `.logician/` never
configures the git we run.

Owns two things. The environment every git process on the private store runs with
(`isolated_env`): no system or global config file (`GIT_CONFIG_NOSYSTEM`,
`GIT_CONFIG_GLOBAL=/dev/null`), no system attributes, no replace refs, no inherited `GIT_*`
variable, and every setting that names a program given on git's command-line level
(`GIT_CONFIG_COUNT`), which beats every file git might still read. And the store's own files
that git reads as configuration (`sanitize_store`): `config` rewritten from our template on
every open, atomically (a shipped `.logician/git/config` may `[include]` anything, name an
fsmonitor or a filter driver); `config.worktree` and `commondir` (each makes git read
another config file) removed; `info/attributes` rewritten (ours beat the workspace's
`.gitattributes`, so no `filter=` reaches a driver); `objects/info/alternates`, where there is
one, pointed at the user's own object store again (as we wrote it when seeding), or removed.

Filters cannot be switched off by name on the command line (`filter.<any>.clean`), so they
are closed off twice instead: our attributes unset `filter` for every path, and no config file
that could define a driver is read (system and global are ignored, the store's is ours).

Must never: run git to repair the store (git would read the config we are replacing), follow
a symlink while rewriting (the replaced name is the link itself), or keep a file of the
store that names a program or another place to read configuration from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..durable.private import PRIVATE_FILE

# Every setting git could use to start a program, and the few that decide what it reads.
# /dev/null as hooks path: no hook (post-index-change runs on every index write) is found.
COMMAND_LINE_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("core.gitProxy", ""),
    ("core.attributesFile", os.devnull),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("diff.external", ""),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("uploadpack.packObjectsHook", ""),
)
_ISOLATION = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
CONFIG_TEMPLATE = (
    "# Written by Logician Kernel on every open; edits here are replaced.\n"
    "[core]\n"
    "\trepositoryformatversion = 0\n"
    "\tfilemode = true\n"
    "\tbare = false\n"
    "\tsharedrepository = 0600\n"
    "\tautocrlf = false\n"
    "\tsafecrlf = false\n"
    "\tsymlinks = true\n"
    "\tquotepath = false\n"
    "\tuntrackedCache = true\n"
    "\tfsmonitor = false\n"
    f"\thooksPath = {os.devnull}\n"
    # Each full scan then rewrites a small delta, not the whole (100k-entry) index.
    "\tsplitIndex = true\n"
    "[gc]\n"
    "\tauto = 0\n"
    "[index]\n"
    "\tversion = 4\n"
)
# Our attributes beat .gitattributes: bytes go in and come out exactly as they are on disk.
ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff -merge\n"
# Files in a git directory that make git read configuration from somewhere else.
_REDIRECTS = ("commondir", "config.worktree", "gitdir")


def isolated_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` without any `GIT_*` variable, plus our isolation and command-line settings."""
    env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    env.update(_ISOLATION)
    env["GIT_CONFIG_COUNT"] = str(len(COMMAND_LINE_CONFIG))
    for i, (key, value) in enumerate(COMMAND_LINE_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


def replace_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically: a symlink at `path` is replaced, never followed."""
    tmp = path.with_name(f".{path.name}.logician-new")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read(1 << 16)


def sanitize_store(store: Path, user_objects: Path | None) -> None:
    """Make every file git reads as configuration in `store` ours; `user_objects` is the only
    alternate object store allowed (the user's `.git/objects`, None when there is none)."""
    for name in _REDIRECTS:
        (store / name).unlink(missing_ok=True)
    if _read(store / "config") != CONFIG_TEMPLATE.encode():
        replace_private(store / "config", CONFIG_TEMPLATE.encode())
    info = store / "info"
    if info.is_dir() and not info.is_symlink():
        if _read(info / "attributes") != ATTRIBUTES.encode():
            replace_private(info / "attributes", ATTRIBUTES.encode())
    alternates = store / "objects" / "info" / "alternates"
    if os.path.lexists(alternates):
        if user_objects is None:
            alternates.unlink()
        elif _read(alternates) != f"{user_objects}\n".encode():
            replace_private(alternates, f"{user_objects}\n".encode())
