"""Repair of the private git store's skeleton, so capture never stays broken by it.

Git will not open a repository whose `refs/` or `objects/` directories or `HEAD` are missing
("not a git repository"): exactly what `git clone` of a committed `.logician/` leaves, as git
keeps no empty directory (`refs/heads`, `refs/tags`, `objects/info`, `objects/pack`). A lock
file left by a git killed mid-command (`HEAD.lock`, `config.lock`, a ref's lock) makes every
later write of that file fail. A kernel killed while writing a pack leaves its half under a
temporary name (`objects/pack/pack-<id>.pack.<machine>-<pid>.<random>.tmp`, never a valid
name: git ignores it), as large as the blobs of a whole frame. `repair_store` puts the
skeleton back and removes such locks and temporaries when no process holds them; it runs
when the store is opened and again when a git command on it fails.

Must never: touch an object, a ref or the index, create a store where there is none (that is
`GitStore.ensure`'s job), or remove a lock or a temporary a running process holds: a
temporary written on this machine goes only once its process is gone, one written elsewhere
(a shared folder) or by an older version only once it is `STALE_TEMP_SECONDS` old.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from ..durable.lease import pid_alive
from ..durable.private import private_dir, write_private
from .git_trees import MACHINE_TAG
from .locks import _open_locally

SKELETON = ("refs/heads", "refs/tags", "objects/info", "objects/pack")
"""The directories `git init` makes and a clone drops when they are empty."""
HEAD = b"ref: refs/heads/main\n"
"""What a missing or unreadable `HEAD` is rewritten to (the store keeps no branch: any
symbolic ref makes it a repository again)."""
LOCKS = ("HEAD.lock", "config.lock", "packed-refs.lock", "shallow.lock")
"""Lock files of the store's own files; a ref's lock (`refs/**/*.lock`) is looked for too.
The private index's lock is `locks.IndexGuard`'s (cleared under its flock)."""
LOCK_GRACE_SECONDS = 2.0
"""A lock younger than this is left alone even when no process here holds it: git holds one
for the length of one small write, possibly from another machine on shared storage."""
STALE_TEMP_SECONDS = 3600.0
"""A temporary whose writer cannot be asked (another machine, or a name without one) is
removed once untouched this long: no pack write of a frame takes an hour."""
_TEMP = re.compile(r"^pack-[0-9a-f]+\.(?:pack|idx)\.(?:([0-9a-f]{8})-)?(\d+)\.[0-9a-f]+\.tmp$")
_VALID_HEAD = re.compile(rb"^(ref: refs/\S+|[0-9a-f]{40}|[0-9a-f]{64})\s*$")


def repair_store(store: Path, *, now: float | None = None) -> list[str]:
    """Put back what git needs to open `store`; what was repaired (empty when nothing was,
    or when there is no store to repair)."""
    if not store.is_dir() or not any((store / n).exists() for n in ("HEAD", "config", "objects")):
        return []  # no store (or not one to guess at): `ensure` creates one
    done: list[str] = []
    missing = [sub for sub in SKELETON if not (store / sub).is_dir()]
    for sub in missing:
        private_dir(store / sub)
    if missing:
        done.append(
            f"recreated its empty directories {', '.join(missing)} (a copy such as "
            "`git clone` drops empty directories)"
        )
    head = store / "HEAD"
    try:
        valid = head.is_file() and _VALID_HEAD.match(head.read_bytes()[:200]) is not None
    except OSError:
        valid = False
    if not valid:
        if head.is_symlink():
            head.unlink()  # never write through a link planted in the store
        write_private(head, HEAD)
        done.append("rewrote its missing or unreadable HEAD")
    now = time.time() if now is None else now
    done.extend(_clear_stale_locks(store, now))
    done.extend(_clear_half_packs(store, now))
    return done


def _clear_half_packs(store: Path, now: float) -> list[str]:
    pack_dir = store / "objects" / "pack"
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return []
    removed, freed = 0, 0
    for name in names:
        found = _TEMP.match(name)
        if found is None:
            continue
        temp = pack_dir / name
        try:
            st = temp.lstat()
        except OSError:
            continue
        if found.group(1) == MACHINE_TAG:
            if pid_alive(int(found.group(2))):
                continue  # its writer (or a process reusing its id) may still write it
        elif now - st.st_mtime < STALE_TEMP_SECONDS:
            continue
        if _open_locally(temp):
            continue
        try:
            temp.unlink()
        except OSError:
            continue
        removed, freed = removed + 1, freed + st.st_size
    if not removed:
        return []
    return [
        f"removed {removed} half-written pack file{'s' if removed > 1 else ''} "
        f"({freed:,} bytes) left by a kernel stopped mid-write"
    ]


def _clear_stale_locks(store: Path, now: float) -> list[str]:
    candidates = [store / name for name in LOCKS]
    refs = store / "refs"
    if refs.is_dir():
        candidates += [
            Path(d, f) for d, _, files in os.walk(refs) for f in files if f.endswith(".lock")
        ]
    removed = []
    for lock in candidates:
        try:
            age = now - lock.lstat().st_mtime
        except OSError:
            continue
        if age < LOCK_GRACE_SECONDS or _open_locally(lock):
            continue
        try:
            lock.unlink()
        except OSError:
            continue  # git then names the lock in its own error
        removed.append(f"removed the stale lock {lock.relative_to(store)}")
    return removed


def repair_notice(store: Path, done: list[str]) -> str:
    """The one-time notice for the user."""
    return (
        f"Logician: the snapshot store {store} was repaired: {'; '.join(done)}. "
        "Frames are captured again."
    )
