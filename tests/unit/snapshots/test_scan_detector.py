"""The stat-scan change detector, the `auto` choice between it and inotify, and a frame's diff
when changes come from the scan (type changes included)."""

from __future__ import annotations

import errno
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.snapshots import scan_detector
from logician_kernel.snapshots.change_detection import (
    AutoDetector,
    filesystem_type,
    is_remote,
    make_detector,
)
from logician_kernel.snapshots.scan_detector import ScanDetector
from logician_kernel.snapshots.watcher import WorkspaceWatcher
from logician_kernel.workspace.open_thread import OpenThread


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("keep")
    (ws / "sub").mkdir()
    (ws / "sub" / "old.txt").write_text("old")
    (ws / ".git").mkdir()
    (ws / ".logician").mkdir()
    return ws


@pytest.fixture(params=["listing", "reusing"])
def scan(root: Path, request: pytest.FixtureRequest) -> ScanDetector:
    # "reusing": with a stamp (the file system's clock) unchanged directories are not listed
    # again, only their known files stat-ed; every answer must be the same.
    stamp = root / ".logician" / "scan-stamp" if request.param == "reusing" else None
    _tick()
    d = ScanDetector(root, stamp=stamp)
    assert d.start() and d.watching
    assert d.drain() == set()
    return d


def test_created_modified_chmod_renamed_deleted(root: Path, scan: ScanDetector) -> None:
    (root / "a.txt").write_text("1")
    assert scan.drain() == {"a.txt"}
    with open(root / "sub" / "old.txt", "a") as f:
        f.write("more")
    assert scan.drain() == {"sub/old.txt"}
    os.chmod(root / "keep.txt", 0o755)
    assert scan.drain() == {"keep.txt"}
    os.rename(root / "a.txt", root / "sub" / "b.txt")
    assert scan.drain() == {"a.txt", "sub/b.txt"}
    (root / "sub" / "b.txt").unlink()
    assert scan.drain() == {"sub/b.txt"}
    assert scan.drain() == set()


def test_same_size_rewrite_with_the_old_mtime_is_still_seen(root: Path, scan: ScanDetector) -> None:
    before = os.stat(root / "keep.txt")
    (root / "keep.txt").write_text("KEEP")
    os.utime(root / "keep.txt", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert scan.drain() == {"keep.txt"}  # ctime moved even though size and mtime did not


def test_type_changes_and_deleted_directories_are_reported_per_file(
    root: Path, scan: ScanDetector
) -> None:
    (root / "keep.txt").unlink()
    (root / "keep.txt").mkdir()
    (root / "keep.txt" / "inner").write_text("i")
    assert scan.drain() == {"keep.txt", "keep.txt/inner"}
    (root / "keep.txt" / "inner").unlink()
    (root / "keep.txt").rmdir()
    (root / "keep.txt").symlink_to("sub")
    assert scan.drain() == {"keep.txt", "keep.txt/inner"}
    for name in ("x", "y"):
        (root / "sub" / name).write_text(name)
    scan.drain()
    (root / "sub" / "x").unlink()
    (root / "sub" / "y").unlink()
    (root / "sub" / "old.txt").unlink()
    (root / "sub").rmdir()
    assert scan.drain() == {"sub/x", "sub/y", "sub/old.txt"}


def test_excluded_top_level_names_and_symlinked_directories_are_not_entered(
    root: Path, scan: ScanDetector, tmp_path: Path
) -> None:
    (root / ".git" / "index").write_text("x")
    (root / ".logician" / "t.jsonl").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    assert scan.drain() == {"link"}
    (outside / "f").write_text("f")
    assert scan.drain() == set()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_an_unreadable_directory_is_reported_whole_on_every_drain(
    root: Path, scan: ScanDetector
) -> None:
    os.chmod(root / "sub", 0)
    try:
        assert scan.drain() == {"sub/", "sub/old.txt"}
        assert scan.drain() == {"sub/"}
    finally:
        os.chmod(root / "sub", 0o755)


def test_a_vanished_root_asks_for_a_full_scan(root: Path, scan: ScanDetector) -> None:
    root.rename(root.with_name("gone"))
    assert scan.drain() is None
    assert not scan.watching


def test_mount_table_decides_auto(tmp_path: Path) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "40 22 0:50 / /home rw - nfs4 server:/home rw\n"
        "41 40 0:51 / /home/me/data\\040set rw - fuse.sshfs me@host: rw\n"
        "42 22 0:52 / /scratch rw - tmpfs tmpfs rw\n"
    )
    assert filesystem_type(Path("/home/me/nb"), table) == "nfs4"
    assert filesystem_type(Path("/home/me/data set/x"), table) == "fuse.sshfs"
    assert filesystem_type(Path("/homely"), table) == "ext4"
    assert filesystem_type(Path("/scratch"), table) == "tmpfs"
    assert filesystem_type(Path("/x"), tmp_path / "missing") is None
    assert [is_remote(t) for t in ("nfs4", "fuse.sshfs", "overlay", "cifs", "ext4", None)] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")
def test_inotify_never_skips_a_drain(root: Path) -> None:
    auto = AutoDetector(root, (".git", ".logician"))
    assert auto.start() and not auto.defer() and auto.early is None
    auto.close()


def test_make_detector_follows_the_setting(root: Path) -> None:
    assert isinstance(make_detector("scan", root, ()), ScanDetector)
    assert isinstance(make_detector("inotify", root, ()), WorkspaceWatcher)
    # The test machine's temporary directory is a local disk: auto starts on inotify.
    assert is_remote(filesystem_type(root)) or isinstance(
        make_detector("auto", root, ()), AutoDetector
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")
def test_auto_switches_to_the_scan_when_inotify_watches_run_out(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auto = AutoDetector(root, (".git", ".logician"))
    assert auto.start() and auto.kind == "inotify"
    assert auto.drain() == set()

    def exhausted(self: WorkspaceWatcher, path: bytes, mask: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(WorkspaceWatcher, "_add_watch", exhausted)
    (root / "new").mkdir()  # watching it fails; so does the rebuild
    assert auto.drain() is None  # this interval: a full scan
    assert auto.kind == "scan" and auto.watching
    assert auto.notice is not None and "max_user_watches" in auto.notice
    (root / "new" / "f").write_text("f")
    assert auto.drain() == {"new/f"}  # precise again, from the scan
    # ... and, being a scan now, it reads the workspace once for back-to-back cells too.
    (root / "between.txt").write_text("b")
    _tick()
    assert auto.defer()
    _tick()
    (root / "new" / "g").write_text("g")
    assert auto.drain() == {"between.txt", "new/g"} and auto.early == {"between.txt"}
    auto.close()


def test_frames_from_the_scan_capture_type_changes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "p").write_text("was a file")
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("in a dir")
    s = OpenThread.open(ws, env={"LOGICIAN_THREAD": "unit"}, change_detection="scan")
    try:
        cp = s.checkpoints
        assert cp is not None and cp.snapshotter is not None
        cp.open_frame(execution_count=1, cell_id=None, code="cell")
        (ws / "p").unlink()
        (ws / "p").mkdir()
        (ws / "p" / "q").write_text("now inside")
        (ws / "d" / "f").unlink()
        (ws / "d").rmdir()
        (ws / "d").write_text("now a file")
        closed = cp.close_frame("ok")
        assert closed is not None and not closed.capture_error
        assert {(c.path, c.action) for c in closed.changes} == {
            ("p", "deleted"),
            ("p/q", "created"),
            ("d/f", "deleted"),
            ("d", "created"),
        }
        # Where a file became a directory the pre-image is known, so the path is still
        # judged (not a crash) when a later rewind looks at it.
        assert cp.snapshotter.hash_path("d/f").kind == "absent"
    finally:
        s.close()


# -- one drain per frame: the opening drain skipped when the previous one is fresh -----------


def _tick() -> None:
    # File times come from the kernel's coarse clock (one tick is 1-10 ms): make "before"
    # and "after" the stamp distinguishable.
    time.sleep(0.03)


@pytest.fixture
def stamped(root: Path) -> ScanDetector:
    d = ScanDetector(root, stamp=root / ".logician" / "scan-stamp")
    assert d.start() and d.drain() == set()
    return d


def test_a_skipped_drain_sorts_changes_into_before_and_after_the_stamp(
    root: Path, stamped: ScanDetector
) -> None:
    (root / "between.txt").write_text("saved by an editor between cells")
    (root / "sub" / "old.txt").unlink()
    _tick()
    assert stamped.defer() and stamped.early is None
    assert not stamped.defer()  # one skipped drain at a time
    _tick()
    (root / "keep.txt").write_text("written by the cell")
    (root / "cell.txt").write_text("created by the cell")
    assert stamped.drain() == {"between.txt", "sub/old.txt", "keep.txt", "cell.txt"}
    assert stamped.early == {"between.txt", "sub/old.txt"}
    assert (root / ".logician" / "scan-stamp").stat().st_mode & 0o777 == 0o600
    assert stamped.drain() == set() and stamped.early is None  # only after a skipped drain


def test_a_deletion_in_a_directory_the_cell_also_changed_counts_as_the_cells(
    root: Path, stamped: ScanDetector
) -> None:
    (root / "sub" / "old.txt").unlink()  # before the stamp, but its directory ...
    _tick()
    assert stamped.defer()
    _tick()
    (root / "sub" / "new.txt").write_text("x")  # ... changes again during the cell
    assert stamped.drain() == {"sub/old.txt", "sub/new.txt"}
    assert stamped.early == set()  # unsure which: the cell's (it is rewound, never lost)


def test_no_skipped_drain_when_the_previous_one_is_stale_or_there_is_no_stamp(
    root: Path, stamped: ScanDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not ScanDetector(root).defer()  # not started
    plain = ScanDetector(root)
    assert plain.start() and not plain.defer()  # no stamp file configured
    monkeypatch.setattr(scan_detector, "FRESH_S", 0.0)
    _tick()
    assert not stamped.defer()
    (root / ".logician" / "scan-stamp").unlink(missing_ok=True)  # walks read the clock too
    (root / ".logician").rmdir()
    monkeypatch.setattr(scan_detector, "FRESH_S", 60.0)
    assert not stamped.defer()  # the stamp cannot be written: drain as usual


def test_one_drain_frames_keep_between_cell_changes_out_of_the_cell(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("v1")
    (ws / "data.txt").write_text("d1")
    (ws / "old.txt").write_text("o1")
    s = OpenThread.open(ws, env={"LOGICIAN_THREAD": "unit"}, change_detection="scan")
    try:
        cp = s.checkpoints
        assert cp is not None and cp.snapshotter is not None
        cp.open_frame(execution_count=1, cell_id=None, code="first")
        first = cp.close_frame("ok")
        assert first is not None and first.start_tree is None
        # Between the cells an editor saves notes.txt and removes old.txt ...
        (ws / "notes.txt").write_text("v2 from the editor")
        (ws / "old.txt").unlink()
        _tick()
        frame = cp.open_frame(execution_count=2, cell_id=None, code="second")
        _tick()
        (ws / "data.txt").write_text("d2 from the cell")  # ... and the cell writes data.txt
        closed = cp.close_frame("ok")
        assert closed is not None and not closed.capture_error
        assert [(c.path, c.action) for c in closed.changes] == [("data.txt", "modified")]
        assert closed.start_tree is not None and cp.frames()[frame].pre_tree == closed.start_tree
        frame_rewind.rewind(cp, frame)
        assert (ws / "data.txt").read_text() == "d1"
        assert (ws / "notes.txt").read_text() == "v2 from the editor"  # not the cell's to undo
        assert not (ws / "old.txt").exists()
    finally:
        s.close()


def test_no_skipped_drain_on_a_file_system_with_coarse_times(
    root: Path, stamped: ScanDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_stat = os.stat

    def whole_seconds(path: object, *args: object, **kwargs: object) -> object:
        st = real_stat(path, *args, **kwargs)  # type: ignore[call-overload]
        if str(path).endswith("scan-stamp"):  # as FAT or a FUSE file system would answer
            return SimpleNamespace(st_ctime_ns=st.st_ctime_ns // 10**9 * 10**9, st_dev=st.st_dev)
        return st

    monkeypatch.setattr(scan_detector.os, "stat", whole_seconds)
    assert not stamped.defer()
    (root / "keep.txt").write_text("changed")
    assert stamped.drain() == {"keep.txt"} and stamped.early is None


def test_new_ignore_rules_between_back_to_back_cells(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("k")
    s = OpenThread.open(ws, env={"LOGICIAN_THREAD": "unit"}, change_detection="scan")
    try:
        cp = s.checkpoints
        assert cp is not None
        cp.open_frame(execution_count=1, cell_id=None, code="first")
        cp.close_frame("ok")
        (ws / ".gitignore").write_text("*.tmp\n")  # saved between the cells, with a file
        (ws / "scratch.tmp").write_text("t")  # the new rule ignores
        _tick()
        cp.open_frame(execution_count=2, cell_id=None, code="second")
        _tick()
        (ws / "out.txt").write_text("by the cell")
        (ws / "more.tmp").write_text("ignored, by the cell")
        closed = cp.close_frame("ok")
        assert closed is not None and closed.start_tree is not None
        assert [(c.path, c.action) for c in closed.changes] == [("out.txt", "created")]
        assert [(k.path, k.reason) for k in closed.skipped] == [("more.tmp", "ignored")]
    finally:
        s.close()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_walks_close_every_directory_they_open(root: Path, scan: ScanDetector) -> None:
    for i in range(30):
        (root / "sub" / f"d{i}").mkdir()
        (root / "sub" / f"d{i}" / "f").write_text("x")
    fds = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        assert scan.drain() is not None
    (root / "sub" / "d3" / "f").unlink()
    (root / "sub" / "d3").rmdir()  # a directory gone between two walks
    assert scan.drain() == {"sub/d3/f"}
    assert len(os.listdir("/proc/self/fd")) == fds


def test_a_directory_is_listed_again_unless_it_changed_before_the_walk_began(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tick()
    d = ScanDetector(root, stamp=root / ".logician" / "scan-stamp")
    assert d.start()
    listed: list[object] = []
    real = os.scandir

    def counting(fd: int) -> object:
        listed.append(fd)
        return real(fd)

    monkeypatch.setattr(scan_detector.os, "scandir", counting)
    assert d.drain() == set() and listed == []  # nothing changed: known names stat-ed only
    (root / "sub" / "new.txt").write_text("n")
    # The next walk begins within the clock tick of that change (a tie): its listing of sub
    # cannot prove that no entry was added after it, so the walk after lists sub again.
    sub = (root / "sub").stat()
    monkeypatch.setattr(d, "_clock", lambda: (sub.st_ctime_ns, sub.st_dev))
    assert d.drain() == {"sub/new.txt"} and len(listed) == 1
    (root / "sub" / "late.txt").write_text("l")  # same tick: sub's times may not move
    assert d.drain() == {"sub/late.txt"} and len(listed) == 2
    monkeypatch.delattr(d, "_clock")
    _tick()
    assert d.drain() == set() and len(listed) == 3  # listed after a tick: trusted from now
    assert d.drain() == set() and len(listed) == 3
    # Directories on another file system than the stamp's (another clock) are listed on
    # every walk.
    other = ScanDetector(root, stamp=root / ".logician" / "scan-stamp")
    monkeypatch.setattr(other, "_clock", lambda: (sub.st_ctime_ns + 10**12, sub.st_dev + 1))
    assert other.start() and len(listed) == 5  # the root and sub
    assert other.drain() == set() and len(listed) == 7
