"""A rewind trusts what it remembers of a file only while the file is provably untouched: a
rewrite of the same size (even with its modification time set back) is still a change, and a
note taken in the same clock tick as the file's last write is never trusted (git's racy rule).
Real files and, for the rewind, a real store and frames."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.frames.undo import undo_rewind
from logician_kernel.snapshots.stat_memory import RACY_NS, StatMemory
from logician_kernel.workspace.open_thread import OpenThread

SHA = "a" * 40


def _wait_clock_past(ns: int) -> None:
    """Wait until the wall clock is past `ns` (a condition on the clock, not a fixed sleep)."""
    deadline = time.monotonic() + 10
    while time.time_ns() <= ns:
        assert time.monotonic() < deadline, "the clock did not move"
        time.sleep(0.01)


def test_a_note_older_than_the_files_last_write_is_recalled(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("first")
    st = os.lstat(f)
    memory = StatMemory()
    memory.note(
        "a.txt", st, max(st.st_mtime_ns, st.st_ctime_ns) + 2 * RACY_NS, "100644", SHA, stored=True
    )
    assert memory.recall("a.txt", os.lstat(f)) == ("100644", SHA)
    assert memory.recall("a.txt", os.lstat(f), stored=True) == ("100644", SHA)


def test_a_note_taken_in_the_same_tick_as_the_write_is_never_trusted(tmp_path: Path) -> None:
    """The look at the file came right after its write: a second write of the same size in
    that tick would leave every stat field as it was, so the note is not trusted."""
    f = tmp_path / "a.txt"
    looked_at = time.time_ns()
    f.write_text("first")
    st = os.lstat(f)
    memory = StatMemory()
    memory.note("a.txt", st, looked_at, "100644", SHA, stored=True)
    assert memory.recall("a.txt", st) is None


def test_a_same_size_rewrite_with_its_mtime_set_back_is_not_recalled(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("first")
    st = os.lstat(f)
    memory = StatMemory()
    memory.note(
        "a.txt", st, max(st.st_mtime_ns, st.st_ctime_ns) + 2 * RACY_NS, "100644", SHA, stored=True
    )
    _wait_clock_past(st.st_ctime_ns + 20_000_000)  # a later tick for the other program
    with open(f, "r+b") as fh:  # rewritten in place: same inode, same size
        fh.write(b"FIRST")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # its modification time put back
    now = os.lstat(f)
    assert (now.st_ino, now.st_size, now.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    assert memory.recall("a.txt", now) is None


def test_only_blobs_written_to_the_store_answer_a_store(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("first")
    st = os.lstat(f)
    memory = StatMemory()
    memory.note("a.txt", st, st.st_ctime_ns + 2 * RACY_NS, "100644", SHA, stored=False)
    assert memory.recall("a.txt", st) == ("100644", SHA)
    assert memory.recall("a.txt", st, stored=True) is None


def test_the_memory_is_bounded(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x")
    st = os.lstat(f)
    memory = StatMemory(limit=3)
    for i in range(10):
        memory.note(f"p{i}", st, st.st_ctime_ns + 2 * RACY_NS, "100644", SHA, stored=True)
    assert len(memory) == 3
    assert memory.recall("p0", st) is None
    assert memory.recall("p9", st) is not None


def test_a_rewind_calls_a_same_size_rewrite_with_the_same_mtime_a_conflict(
    tmp_path: Path,
) -> None:
    """Another program rewrites a file the cell wrote, same size, and sets its modification
    time back to the cell's: the rewind's plan still sees the change and leaves it alone."""
    ws = tmp_path / "ws"
    ws.mkdir()
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "memory"}, max_file_bytes=100_000)
    try:
        cp = session.checkpoints
        assert cp is not None and cp.snapshotter is not None
        frame_id = cp.open_frame(execution_count=None, cell_id=None, code="cell")
        for i in range(80):  # enough for the in-process snapshot of many paths
            (ws / f"f{i}.txt").write_text(f"cell's {i:03d}\n")
        cp.close_frame("ok")
        target = ws / "f7.txt"
        st = os.lstat(target)
        _wait_clock_past(max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS)
        # Read once more: the note is now older than the file's last write, so trusted.
        before = cp.snapshotter.hash_path("f7.txt")
        assert cp.snapshotter._inc.seen.recall("f7.txt", os.lstat(target)) is not None
        plan = frame_rewind.plan_rewind(cp, frame_id)
        assert not plan.conflicts and len(plan.restore) == 80

        with open(target, "r+b") as fh:  # same inode, same size, other bytes
            fh.write(b"OTHER'")
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.lstat(target).st_mtime_ns == st.st_mtime_ns
        assert cp.snapshotter.hash_path("f7.txt") != before
        plan = frame_rewind.plan_rewind(cp, frame_id)
        assert [c.path for c in plan.conflicts] == ["f7.txt"]
        assert "changed since frame" in plan.conflicts[0].detail
        assert len(plan.restore) == 79
    finally:
        session.close()


def test_an_undo_brings_back_files_whose_pre_images_the_rewind_did_not_read_again(
    tmp_path: Path,
) -> None:
    """Files untouched since a preview read them are not read again by the rewind (their
    blobs, which the frame stored, are reused as its pre-images): the undo still puts every
    byte back."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "d").mkdir()
    for i in range(80):
        (ws / "d" / f"f{i}.txt").write_text(f"first {i}\n")
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "memory"}, max_file_bytes=100_000)
    try:
        cp = session.checkpoints
        assert cp is not None and cp.snapshotter is not None
        frame_id = cp.open_frame(execution_count=None, cell_id=None, code="cell")
        for i in range(80):
            (ws / "d" / f"f{i}.txt").write_text(f"second version {i}\n")
        cp.close_frame("ok")
        newest = max(
            max(st.st_mtime_ns, st.st_ctime_ns) for st in map(os.lstat, (ws / "d").iterdir())
        )
        _wait_clock_past(newest + RACY_NS)
        seen = cp.snapshotter._inc.seen
        frame_rewind.plan_rewind(cp, frame_id)  # the preview reads each file once
        assert all(
            seen.recall(f"d/f{i}.txt", os.lstat(ws / "d" / f"f{i}.txt"), stored=True)
            for i in range(80)
        )
        frame_rewind.rewind(cp, frame_id)
        assert (ws / "d" / "f7.txt").read_text() == "first 7\n"
        undo_rewind(cp, None)
        assert all(
            (ws / "d" / f"f{i}.txt").read_text() == f"second version {i}\n" for i in range(80)
        )
    finally:
        session.close()


def test_a_note_answers_for_looks_since_a_clock_reading_only(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("first")
    memory = StatMemory()
    before = StatMemory.clock()
    st = os.lstat(f)
    memory.note("a.txt", st, before, "100644", SHA, stored=True)
    assert memory.looked_since("a.txt", before) == (
        st.st_ino,
        st.st_dev,
        st.st_size,
        st.st_mode,
        st.st_mtime_ns,
        st.st_ctime_ns,
    )
    assert memory.looked_since("a.txt", before + 1) is None  # an older look: not this one
    assert memory.looked_since("b.txt", before) is None


def test_a_frames_close_looks_at_each_file_it_stores_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The close's snapshot reads each changed file by the `lstat` it sorted it with, and the
    attribution's question about a later write is asked of what that look found: one `lstat`
    per file in all (a cell writing 5,000 files paid three)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "looks"}, max_file_bytes=100_000)
    looks: dict[str, int] = {}
    real_lstat = os.lstat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        name = os.fspath(path)
        if isinstance(name, str) and name.startswith(str(ws / "d") + "/"):
            looks[name] = looks.get(name, 0) + 1
        return real_lstat(path, *args, **kwargs)

    try:
        cp = session.checkpoints
        assert cp is not None and cp.snapshotter is not None
        cp.open_frame(execution_count=None, cell_id=None, code="cell")
        (ws / "d").mkdir()
        for i in range(80):  # enough for the in-process snapshot of many paths
            (ws / "d" / f"f{i}.txt").write_text(f"cell's {i:03d}\n")
        monkeypatch.setattr(os, "lstat", counting)
        closed = cp.close_frame("ok")
        monkeypatch.undo()
        assert closed is not None
        changes = {c.path: c for c in closed.changes}
        assert len(changes) == 80
        assert all(c.by == "cell" and c.outside_write == "" for c in changes.values())
        assert len(looks) == 80 and set(looks.values()) == {1}
    finally:
        session.close()


@pytest.mark.parametrize("settled", [False, True], ids=["just-written", "settled"])
def test_a_rewind_looks_at_each_path_once_and_its_undo_is_still_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: bool
) -> None:
    """The plan record's pre-images are stored by the plan's own look at each path (one look
    a path, not two), and the undo still brings back every byte the rewind replaced. Whether
    the close's notes of the files are racy (written within 100 ms of its look: the plan
    hashes them) or settled (the plan trusts them, `remembers`): at load, a close that comes
    later than 100 ms after the writes is the second case."""
    from logician_kernel.snapshots import beneath

    ws = tmp_path / "ws"
    ws.mkdir()
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "looks"}, max_file_bytes=100_000)
    try:
        cp = session.checkpoints
        assert cp is not None
        cp.open_frame(execution_count=None, cell_id=None, code="first")
        for i in range(80):
            (ws / f"f{i}.txt").write_text(f"first {i}\n")
        cp.close_frame("ok")
        frame_id = cp.open_frame(execution_count=None, cell_id=None, code="second")
        for i in range(80):
            (ws / f"f{i}.txt").write_text(f"second version {i}\n")
        if settled:  # the close looks at them once its notes can be trusted
            newest = max((ws / f"f{i}.txt").stat().st_ctime_ns for i in range(80))
            while time.time_ns() <= newest + 2 * RACY_NS:
                time.sleep(0.01)
        cp.close_frame("ok")
        looks: dict[str, int] = {}
        real_look = beneath.Beneath.look

        def counting(self: Any, path: str) -> Any:
            looks[path] = looks.get(path, 0) + 1
            return real_look(self, path)

        monkeypatch.setattr(beneath.Beneath, "look", counting)
        frame_rewind.rewind(cp, frame_id)
        monkeypatch.undo()
        assert len(looks) == 80 and set(looks.values()) == {1}
        assert (ws / "f7.txt").read_text() == "first 7\n"
        undo_rewind(cp, None)
        assert all((ws / f"f{i}.txt").read_text() == f"second version {i}\n" for i in range(80))
    finally:
        session.close()


def test_a_file_a_restore_wrote_is_known_at_once_and_any_write_after_it_is_not(
    tmp_path: Path,
) -> None:
    """What a restore writes is remembered without the racy wait: its modification time is
    set one nanosecond before the one its write gave it, which no later write can give it.
    A same-size rewrite in place right after (the same clock tick, most likely) is a change."""
    from logician_kernel.snapshots.beneath import Beneath

    (tmp_path / "a.txt").write_text("old bytes")
    memory = StatMemory()
    before = time.time_ns()
    with Beneath(tmp_path) as tree:
        written = tree.write_file("a.txt", b"restored", 0o644)
    assert written is not None
    now = os.lstat(tmp_path / "a.txt")
    assert (now.st_ino, now.st_mtime_ns, now.st_ctime_ns) == (
        written.st_ino,
        written.st_mtime_ns,
        written.st_ctime_ns,
    )
    assert before - 20_000_000 < now.st_mtime_ns <= time.time_ns()  # "now", to make and rsync
    memory.wrote("a.txt", written, "100644", SHA)
    assert memory.recall("a.txt", now) == ("100644", SHA)  # at once: no racy window
    assert memory.looked_since("a.txt", before) is None  # a write of ours, not a look

    with open(tmp_path / "a.txt", "r+b") as fh:  # same inode, same size, other bytes
        fh.write(b"RESTORED")
    later = os.lstat(tmp_path / "a.txt")
    assert (later.st_ino, later.st_size) == (now.st_ino, now.st_size)
    assert memory.recall("a.txt", later) is None


def test_a_rewind_after_a_rewind_reads_none_of_the_files_the_first_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewinding a rewrite, then the creation, right after: the second plan knows the files
    the first rewind wrote without reading them (it read all 80 again), deletes them, and a
    file another program rewrote in place in between (same size, at once) is still left
    alone as a conflict. The undo of the rewind checks the files it restored without a read."""
    from logician_kernel.snapshots import snapshot_objects

    ws = tmp_path / "ws"
    ws.mkdir()
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "wrote"}, max_file_bytes=100_000)
    reads: list[str] = []
    real_read = snapshot_objects.path_state

    def counted(full: Any, *args: Any) -> Any:
        reads.append(os.fspath(full))
        return real_read(full, *args)

    try:
        cp = session.checkpoints
        assert cp is not None
        created = cp.open_frame(execution_count=None, cell_id=None, code="create")
        for i in range(80):
            (ws / f"f{i}.txt").write_text(f"first {i:03d}\n")
        cp.close_frame("ok")
        rewritten = cp.open_frame(execution_count=None, cell_id=None, code="rewrite")
        for i in range(80):
            (ws / f"f{i}.txt").write_text(f"second version {i:03d}\n")
        cp.close_frame("ok")

        monkeypatch.setattr(snapshot_objects, "path_state", counted)
        frame_rewind.rewind(cp, rewritten)
        assert (ws / "f7.txt").read_text() == "first 007\n"
        reads.clear()
        undo_rewind(cp, None)  # checks the 80 restored files, then puts the rewrite back
        assert reads == []
        assert (ws / "f7.txt").read_text() == "second version 007\n"
        frame_rewind.rewind(cp, rewritten)

        with open(ws / "f7.txt", "r+b") as fh:  # another program, right after the rewind
            fh.write(b"FIRST")
        reads.clear()
        plan = frame_rewind.plan_rewind(cp, created)
        assert reads == [os.fspath(ws / "f7.txt")]  # only the one whose identity moved
        assert [c.path for c in plan.conflicts] == ["f7.txt"]
        frame_rewind.rewind(cp, created)
        assert sorted(p.name for p in ws.iterdir() if p.name != ".logician") == ["f7.txt"]
        assert (ws / "f7.txt").read_text() == "FIRST 007\n"
    finally:
        session.close()


def test_a_file_system_that_refuses_to_set_times_still_gets_the_file_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Setting the time only lets the file be remembered: refused, the restore still writes
    the bytes, and nothing is noted (the next plan reads the file)."""
    from logician_kernel.snapshots.beneath import Beneath

    def refused(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(1, "Operation not permitted")

    (tmp_path / "a.txt").write_text("old bytes")
    monkeypatch.setattr(os, "utime", refused)
    with Beneath(tmp_path) as tree:
        written = tree.write_file("a.txt", b"restored", 0o644)
    assert written is None
    assert (tmp_path / "a.txt").read_bytes() == b"restored"
    assert not any(p.name.endswith(".logician-restore") for p in tmp_path.iterdir())
