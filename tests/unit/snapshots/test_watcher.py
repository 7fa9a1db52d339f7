"""The inotify change tracker: what drain() reports, when it gives up (None), and recovery."""

from __future__ import annotations

import errno
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from logician_kernel.snapshots import watcher as watcher_mod
from logician_kernel.snapshots.watcher import WorkspaceWatcher

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")


def open_fds() -> int:
    """This process's inotify descriptors. Only those: in the whole suite another test's
    thread may open a file or a socket meanwhile (a count of every descriptor once read one
    more in CI), which says nothing about the watcher."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # closed meanwhile (or the listing's own descriptor)
        count += target == "anon_inode:inotify"
    return count


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("keep")
    (ws / "sub").mkdir()
    (ws / "sub" / "old.txt").write_text("old")
    return ws


@pytest.fixture
def w(root: Path) -> Iterator[WorkspaceWatcher]:
    fds = open_fds()
    with WorkspaceWatcher(root) as watcher:
        assert watcher.start()
        assert watcher.watching
        assert watcher.drain() == set()
        yield watcher
    assert not watcher.watching
    assert open_fds() == fds, "the inotify descriptor leaked"


def test_file_create_modify_chmod_rename_delete(root: Path, w: WorkspaceWatcher) -> None:
    (root / "a.txt").write_text("1")
    assert w.drain() == {"a.txt"}
    with open(root / "sub" / "old.txt", "a") as f:
        f.write("more")
    assert w.drain() == {"sub/old.txt"}
    os.chmod(root / "keep.txt", 0o755)  # content unchanged, mode changed: git cares
    assert w.drain() == {"keep.txt"}
    os.rename(root / "a.txt", root / "sub" / "b.txt")
    assert w.drain() == {"a.txt", "sub/b.txt"}
    (root / "sub" / "b.txt").unlink()
    assert w.drain() == {"sub/b.txt"}
    assert w.drain() == set()


def test_second_drain_without_activity_is_empty(root: Path, w: WorkspaceWatcher) -> None:
    (root / "keep.txt").read_text()  # reads are not changes
    os.listdir(root / "sub")
    assert w.drain() == set()
    assert w.drain() == set()


def test_new_nested_tree_is_reported_file_by_file(root: Path, w: WorkspaceWatcher) -> None:
    os.makedirs(root / "n" / "a" / "b")
    (root / "n" / "top.txt").write_text("t")
    (root / "n" / "a" / "b" / "deep.txt").write_text("d")
    (root / "n" / "a" / "empty").mkdir()
    os.symlink("top.txt", root / "n" / "link")
    assert w.drain() == {"n/top.txt", "n/a/b/deep.txt", "n/link"}
    # ...and the new directories are watched from now on.
    (root / "n" / "a" / "b" / "deep.txt").write_text("changed")
    (root / "n" / "a" / "empty" / "x").write_text("x")
    assert w.drain() == {"n/a/b/deep.txt", "n/a/empty/x"}


def test_rmtree_reports_the_directory_with_a_trailing_slash(
    root: Path, w: WorkspaceWatcher
) -> None:
    os.makedirs(root / "sub" / "inner")
    (root / "sub" / "inner" / "f").write_text("f")
    w.drain()
    shutil.rmtree(root / "sub")
    changed = w.drain()
    assert changed is not None
    assert "sub/" in changed
    assert all(p == "sub/" or p.startswith("sub/") for p in changed), changed
    (root / "sub").mkdir()  # same name again: watched afresh
    (root / "sub" / "again").write_text("a")
    assert w.drain() == {"sub/again"}


def test_directory_rename_inside_workspace(root: Path, w: WorkspaceWatcher) -> None:
    (root / "sub" / "deeper").mkdir()
    (root / "sub" / "deeper" / "d.txt").write_text("d")
    w.drain()
    os.rename(root / "sub", root / "moved")
    assert w.drain() == {"sub/", "moved/old.txt", "moved/deeper/d.txt"}
    # Watches now carry the new names, not the stale ones.
    (root / "moved" / "deeper" / "d.txt").write_text("again")
    (root / "moved" / "new.txt").write_text("n")
    assert w.drain() == {"moved/deeper/d.txt", "moved/new.txt"}


def test_directory_moved_out_and_in(tmp_path: Path, root: Path, w: WorkspaceWatcher) -> None:
    outside = tmp_path / "outside"
    os.rename(root / "sub", outside)
    assert w.drain() == {"sub/"}
    (outside / "old.txt").write_text("no longer ours")
    assert w.drain() == set()
    os.rename(outside, root / "back")
    assert w.drain() == {"back/old.txt"}
    (root / "back" / "old.txt").write_text("ours again")
    assert w.drain() == {"back/old.txt"}


def test_excluded_top_level_directories_are_never_reported(root: Path, w: WorkspaceWatcher) -> None:
    os.makedirs(root / ".git" / "objects")
    (root / ".git" / "index").write_text("i")
    (root / ".logician").mkdir()
    (root / ".logician" / "journal").write_text("j")
    assert w.drain() == set()
    (root / ".git" / "index").write_text("again")
    (root / ".git" / "objects" / "ab").write_text("o")
    shutil.rmtree(root / ".logician")
    assert w.drain() == set()
    # Only top-level names are excluded: a nested repository is still part of the workspace.
    os.makedirs(root / "sub" / ".git")
    (root / "sub" / ".git" / "HEAD").write_text("h")
    assert w.drain() == {"sub/.git/HEAD"}


def test_excluded_directories_are_not_watched_from_the_start(root: Path) -> None:
    os.makedirs(root / ".git" / "objects")
    with WorkspaceWatcher(root) as w:
        assert w.start()
        assert not any(p.startswith(".git") for p in w._wds)
        (root / ".git" / "objects" / "x").write_text("x")
        assert w.drain() == set()


def test_changes_by_a_subprocess_are_seen(root: Path, w: WorkspaceWatcher) -> None:
    subprocess.run(["sh", "-c", "echo hi > f && echo more >> sub/old.txt"], cwd=root, check=True)
    assert w.drain() == {"f", "sub/old.txt"}


def test_non_utf8_names_round_trip(root: Path, w: WorkspaceWatcher) -> None:
    name = os.fsencode(root) + b"/caf\xe9.txt"
    with open(name, "wb") as f:
        f.write(b"x")
    changed = w.drain()
    assert changed is not None and len(changed) == 1
    (path,) = changed
    assert os.fsencode(path) == b"caf\xe9.txt"
    assert (root / path).exists()


def test_symlinked_directories_are_not_followed(
    tmp_path: Path, root: Path, w: WorkspaceWatcher
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    os.symlink(target, root / "link")
    assert w.drain() == {"link"}  # the link itself is a path git records
    (target / "inside").write_text("x")
    assert w.drain() == set()


def test_real_queue_overflow_gives_none_then_recovers(root: Path, w: WorkspaceWatcher) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 200_000:
        pytest.skip(f"max_queued_events={limit}: too many events to overflow cheaply")
    a, b = root / "keep.txt", root / "sub" / "old.txt"
    # Alternate two files: the kernel merges only identical consecutive events.
    for i in range(limit // 2 + 10):
        os.utime(a, (i, i))
        os.utime(b, (i, i))
    assert w.drain() is None
    assert w.watching
    (root / "sub" / "after.txt").write_text("a")
    assert w.drain() == {"sub/after.txt"}


def test_injected_overflow_gives_none_then_recovers(
    root: Path, w: WorkspaceWatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    overflow = struct.pack("iIII", -1, watcher_mod.IN_Q_OVERFLOW, 0, 0)
    monkeypatch.setattr(w, "_read_events", lambda: iter([overflow]))
    assert w.drain() is None
    monkeypatch.undo()
    assert w.watching
    (root / "keep.txt").write_text("k")
    assert w.drain() == {"keep.txt"}


def test_start_fails_and_releases_everything_when_watches_cannot_be_added(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fds = open_fds()
    real = WorkspaceWatcher._add_watch
    calls = []

    def add_watch(self: WorkspaceWatcher, path: bytes, mask: int) -> int:
        calls.append(path)
        if len(calls) > 1:  # the root works, the first subdirectory hits the limit
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, path, mask)

    monkeypatch.setattr(WorkspaceWatcher, "_add_watch", add_watch)
    with WorkspaceWatcher(root) as w:
        assert w.start() is False
        assert not w.watching
        assert w.drain() is None
        assert open_fds() == fds
        monkeypatch.undo()
        assert w.start()  # a later explicit start() can succeed
        (root / "sub" / "x").write_text("x")
        assert w.drain() == {"sub/x"}
    assert open_fds() == fds


def test_start_without_inotify_returns_false(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watcher_mod, "_inotify", lambda: None)
    w = WorkspaceWatcher(root)
    assert w.start() is False
    assert w.drain() is None
    w.close()


def test_new_directory_that_cannot_be_watched_gives_none_then_recovers(
    root: Path, w: WorkspaceWatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = WorkspaceWatcher._add_watch
    failures = []

    def add_watch(self: WorkspaceWatcher, path: bytes, mask: int) -> int:
        if path.endswith(b"/new") and not failures:
            failures.append(path)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, path, mask)

    monkeypatch.setattr(WorkspaceWatcher, "_add_watch", add_watch)
    (root / "new").mkdir()
    (root / "new" / "f").write_text("f")
    assert w.drain() is None
    assert failures
    assert w.watching  # the rebuild watched everything, including new/
    (root / "new" / "g").write_text("g")
    assert w.drain() == {"new/g"}


def test_rebuild_that_fails_keeps_answering_none(
    root: Path, w: WorkspaceWatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    def add_watch(self: WorkspaceWatcher, path: bytes, mask: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(WorkspaceWatcher, "_add_watch", add_watch)
    (root / "new").mkdir()
    assert w.drain() is None
    assert not w.watching
    (root / "keep.txt").write_text("k")
    assert w.drain() is None
    assert w.drain() is None


def test_unreadable_directory_is_reported_as_blind_on_every_drain(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = WorkspaceWatcher._add_watch

    def add_watch(self: WorkspaceWatcher, path: bytes, mask: int) -> int:
        if path.endswith(b"/sub"):
            raise OSError(errno.EACCES, "Permission denied")
        return real(self, path, mask)

    monkeypatch.setattr(WorkspaceWatcher, "_add_watch", add_watch)
    with WorkspaceWatcher(root) as w:
        assert w.start()
        assert w.drain() == {"sub/"}
        (root / "keep.txt").write_text("k")
        assert w.drain() == {"sub/", "keep.txt"}
        monkeypatch.undo()
        os.chmod(root / "sub", 0o755)  # IN_ATTRIB on the directory: try to watch it again
        assert w.drain() == {"sub/old.txt"}
        (root / "sub" / "old.txt").write_text("o")
        assert w.drain() == {"sub/old.txt"}


def test_workspace_root_deleted_gives_none(root: Path) -> None:
    with WorkspaceWatcher(root) as w:
        assert w.start()
        shutil.rmtree(root)
        assert w.drain() is None
        assert not w.watching  # nothing left to rebuild on
        assert w.drain() is None


def test_lifecycle(root: Path) -> None:
    fds = open_fds()
    w = WorkspaceWatcher(root)
    assert not w.watching
    assert w.drain() is None  # never started
    assert w.start()
    assert w.start()  # restart: the old descriptor is released, not leaked
    assert open_fds() == fds + 1
    w.close()
    w.close()
    assert not w.watching
    assert w.drain() is None
    assert open_fds() == fds


def test_watcher_dropped_without_close_releases_its_descriptor(root: Path) -> None:
    fds = open_fds()
    w = WorkspaceWatcher(root)
    assert w.start()
    del w
    import gc

    gc.collect()
    assert open_fds() == fds


def test_relative_root_is_pinned_at_construction(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root.parent)
    with WorkspaceWatcher(Path(root.name)) as w:
        assert w.start()
        monkeypatch.chdir("/")
        (root / "sub" / "r").write_text("r")
        (root / "d").mkdir()
        (root / "d" / "e").write_text("e")
        assert w.drain() == {"sub/r", "d/e"}
