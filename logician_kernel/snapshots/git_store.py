"""The private store's git: setting it up, running plumbing commands in it, reading objects.

Owns how git is invoked on `<workspace>/.logician/git`: `--git-dir` at our store, the
workspace as work tree, a private `GIT_INDEX_FILE`, literal pathspecs, no prompts, no
optional locks; the store's configuration (owner-only files, no hooks, no filters, no gc, a
split index); and reading the objects a rewind, a diff or a tree update needs: loose ones
in this process (git_trees.read_loose), the rest through one long-lived `cat-file --batch`
(object_reader.py) instead of a process per object - each checked against its
id either way, since git's reader does not check and the store may hold planted bytes.
What a snapshot is lives in git_snapshot.py.

Must never: run a porcelain command that touches the user's index or work tree, or let a
user's `GIT_DIR`/`GIT_INDEX_FILE` from the environment redirect a command, or run git on a
store it has not checked (store_config.py: the environment and the files git reads as
configuration; state_trust.py: whose store it is), nor on one replaced since.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from ..durable.private import private_dir, write_private
from ._fs import join_z, split_z
from ._user_repo import seed_from_user_repo, user_git_dir, user_objects_dir
from .git_trees import DamagedObject, matches_id, read_loose
from .large_files import SQLITE_JOURNALS
from .locks import IndexGuard
from .object_reader import BrokenReader, ObjectReader
from .state_trust import UntrustedStateError, check_store
from .store_config import ATTRIBUTES, CONFIG_TEMPLATE, isolated_env, replace_private, sanitize_store
from .store_repair import repair_notice, repair_store


class SnapshotError(RuntimeError):
    """A git command failed or the store is unusable; the message names the command."""


class GitStore:
    """Git commands and object reads on one private store, through one private index."""

    def __init__(self, workspace: Path, store: Path, index_name: str) -> None:
        self.workspace, self.store = Path(workspace), Path(store)
        # One index per thread: two kernels on one workspace never wait on each other's
        # index lock (objects are shared; git writes them atomically).
        self.index = self.store / index_name
        # No inherited GIT_* variable, no config file but the store's own (ours, see ensure).
        self.env = isolated_env(os.environ)
        self.env.update(
            GIT_INDEX_FILE=str(self.index),
            GIT_LITERAL_PATHSPECS="1",
            GIT_OPTIONAL_LOCKS="0",
        )
        self.base = ["git", f"--git-dir={self.store}", f"--work-tree={self.workspace}"]
        # Other kernels on this workspace share the index: writes take turns (see locks.py).
        self.guard = IndexGuard(self.index)
        self._reader: ObjectReader | None = None  # started by the first packed object's read
        # The store this kernel checked and configured (device, inode): git never runs on a
        # directory put in its place since (another account swapping `.logician/`).
        self._pinned: tuple[int, int] | None = None
        self.notice: str | None = None
        """What `store_repair` repaired, said once (`GitSnapshotter.take_notice`)."""

    def verify(self) -> None:
        """Raise `SnapshotError` if the store is not the directory `ensure` checked."""
        if self._pinned is None:
            return
        try:
            st = os.lstat(self.store)
            same = (st.st_dev, st.st_ino) == self._pinned
        except OSError:
            same = False  # vanished: the state guard recreates it (`ensure` pins it again)
        if not same:
            raise SnapshotError(
                f"{self.store} vanished or was replaced since this kernel checked it; not "
                "used until it is checked again"
            )

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        cwd: Path | None = None,
        base: bool = True,
        _repaired: bool = False,
    ) -> bytes:
        """A git command's stdout; a failure is a `SnapshotError` naming the command."""
        cmd = [*self.base, *args] if base else ["git", *args]
        self.verify()
        try:
            proc = subprocess.run(
                cmd,
                input=stdin,
                capture_output=True,
                cwd=cwd or self.workspace,
                env=self.env,
                check=False,
            )
        except OSError as exc:
            raise SnapshotError(f"cannot run git: {exc}") from exc
        if proc.returncode != 0 and base and not _repaired and self._repair():
            return self.run(*args, stdin=stdin, cwd=cwd, base=base, _repaired=True)  # once
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            raise SnapshotError(f"git {args[0]} failed: {err[-1] if err else proc.returncode}")
        return proc.stdout

    # -- setup -----------------------------------------------------------------------------

    def ensure(self, extra_ignores: Iterable[str]) -> None:
        """Check the private store is ours and make every file git reads as configuration
        ours again (on every open: a shipped store's are data); create it the first time;
        refresh our excludes from the workspace's own."""
        self._pinned = None
        try:
            check_store(self.store, self.store.parent)
        except UntrustedStateError as exc:
            raise SnapshotError(str(exc)) from None
        self._repair()  # a cloned or half-killed store opens as a repository again
        created = not (self.store / "HEAD").exists()
        if created:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            if self.store.is_dir():  # a store without HEAD: `init` would read its config
                sanitize_store(self.store, None)
            self.run(  # owner-only files (the store holds workspace content), no sample hooks
                "init",
                "--quiet",
                "--bare",
                "--shared=0600",
                "--template=",
                str(self.store),
                cwd=self.store.parent,
                base=False,
            )
            replace_private(self.store / "config", CONFIG_TEMPLATE.encode())
            private_dir(self.store / "info")
            write_private(self.store / "info" / "attributes", ATTRIBUTES.encode())
        else:
            private_dir(self.store / "info")
            sanitize_store(self.store, user_objects_dir(self.workspace))
        st = os.lstat(self.store)
        self._pinned = (st.st_dev, st.st_ino)
        if created:
            self._seed_from_user_repo()
        self.write_excludes(extra_ignores)

    def _repair(self) -> bool:
        """Repair the store's skeleton and stale locks (store_repair.py); whether it did."""
        try:
            done = repair_store(self.store)
        except OSError:
            return False  # cannot repair (read-only, not ours): git's own error says why
        if done:
            self.notice = repair_notice(self.store, done)
        return bool(done)

    def write_excludes(self, extra_ignores: Iterable[str]) -> None:
        lines = ["/.logician/", *SQLITE_JOURNALS]
        user_exclude = user_git_dir(self.workspace)
        if user_exclude is not None and (user_exclude / "info" / "exclude").is_file():
            lines.append((user_exclude / "info" / "exclude").read_text(errors="replace"))
        lines.extend(extra_ignores)
        text = "\n".join(lines) + "\n"
        target = self.store / "info" / "exclude"
        if not target.is_file() or target.read_text(errors="replace") != text:
            write_private(target, text.encode())

    def _seed_from_user_repo(self) -> None:
        """Start from a copy of the user's index (see `seed_from_user_repo`)."""
        try:
            seed_from_user_repo(self.workspace, self.store, self.index)
            if self.index.is_file():
                self.run("ls-files", "--stage", "--", ".gitignore")  # parses the index fully
        except SnapshotError:
            self.index.unlink(missing_ok=True)
            (self.store / "objects" / "info" / "alternates").unlink(missing_ok=True)

    # -- ignore rules ----------------------------------------------------------------------

    def check_ignore_env(self) -> dict[str, str]:
        return {
            k: v for k, v in self.env.items() if k != "GIT_LITERAL_PATHSPECS"
        }  # unsupported there

    def check_ignore(self, paths: list[str]) -> set[str]:
        """Which of `paths` the ignore rules exclude, from a one-shot `check-ignore`."""
        # check-ignore exits 1 when nothing is ignored; only a failure to run is an error.
        self.verify()
        proc = subprocess.run(
            [*self.base, "check-ignore", "-z", "--stdin"],
            input=join_z(paths),
            capture_output=True,
            cwd=self.workspace,
            env=self.check_ignore_env(),
        )
        if proc.returncode not in (0, 1):
            raise SnapshotError(f"git check-ignore failed: {proc.stderr.decode(errors='replace')}")
        return {p.decode("utf-8", "surrogateescape") for p in split_z(proc.stdout)}

    # -- objects ---------------------------------------------------------------------------

    def read_object(self, sha: str) -> tuple[str, bytes]:
        """(kind, content) of one object, loose, packed or in the user's store (alternates),
        checked against its id: whatever stands in the store may have been planted there,
        and git's reader does not check (a rewind would write it into the user's file)."""
        self.verify()
        try:
            loose = read_loose(os.path.join(self.store, "objects"), sha)
        except DamagedObject:
            loose = None  # git may hold a sound copy too (a pack, alternates); checked below
        return loose if loose is not None else self._read_checked(sha)

    def read_not_loose(self, sha: str) -> tuple[str, bytes]:
        """(kind, content) of an object that is not loose (packed, or in the user's store),
        through git's reader, checked against its id as `read_object`'s are."""
        self.verify()
        return self._read_checked(sha)

    def _read_checked(self, sha: str) -> tuple[str, bytes]:
        """git's answer for `sha`, refused unless it hashes to `sha` (the store verified)."""
        kind, data = self._read_from_git(sha)
        if not matches_id(sha, kind, data):
            raise SnapshotError(
                f"file version {sha[:12]} in {self.store} does not match its id (planted or "
                "damaged); not used"
            )
        return kind, data

    def _read_from_git(self, sha: str) -> tuple[str, bytes]:
        for attempt in (1, 2):
            if self._reader is None:
                self.verify()
                self._reader = ObjectReader(str(self.store), self.env)
            try:
                got = self._reader.read(sha)
            except ValueError as exc:  # not an id: never sent to git
                raise SnapshotError(f"cannot read {sha[:12]!r} from {self.store}: {exc}") from None
            except BrokenReader as exc:  # the reader died: a fresh one once
                self._reader = None
                if attempt == 2:
                    raise SnapshotError(f"cannot read {sha[:12]} from {self.store}: {exc}") from exc
                continue
            if got is None:
                raise SnapshotError(f"file version {sha[:12]} is missing from {self.store}")
            return got
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
