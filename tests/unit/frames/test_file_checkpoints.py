"""Frames and rewind on the Jupyter-free core, driven directly (the fast tier)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.frames.file_checkpoints import RewindError
from logician_kernel.frames.frame_rewind import RewindIncomplete
from logician_kernel.ledger.rewind_state import pending_plan
from logician_kernel.ledger.thread_ledger import ProjectionItem, read_entries
from logician_kernel.workspace.open_thread import OpenThread, thread_id_for


@pytest.fixture
def session(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("keep")
    s = OpenThread.open(ws, env={"LOGICIAN_THREAD": "unit"}, max_file_bytes=1000)
    assert s.checkpoints is not None
    # Frames in steady state: those opened during the first snapshot are test_first_snapshot_wait's.
    s.checkpoints.wait_for_first_snapshot()
    yield s
    s.close()


def frame(session: OpenThread, action, outcome: str = "ok"):
    cp = session.checkpoints
    assert cp is not None
    cp.open_frame(execution_count=None, cell_id=None, code="cell")
    action(session.workspace)
    return cp.close_frame(outcome)


def test_only_the_first_pre_state_in_a_frame_counts_and_rewind_restores_it(session) -> None:
    def cell(ws: Path) -> None:
        (ws / "keep.txt").write_text("second")
        (ws / "keep.txt").write_text("third")

    closed = frame(session, cell)
    assert [c.action for c in closed.changes] == ["modified"]
    frame_rewind.rewind(session.checkpoints, closed.frame)
    assert (session.workspace / "keep.txt").read_text() == "keep"


def test_an_outside_edit_between_two_frames_is_a_conflict(session) -> None:
    frame(session, lambda ws: (ws / "keep.txt").write_text("by frame 1"))
    (session.workspace / "keep.txt").write_text("by the editor")
    frame(session, lambda ws: (ws / "keep.txt").write_text("by frame 2"))
    plan = frame_rewind.plan_rewind(session.checkpoints, 1)
    assert [c.path for c in plan.conflicts] == ["keep.txt"]
    assert "between frame 1 and frame 2" in plan.conflicts[0].detail
    frame_rewind.rewind(session.checkpoints, 1, force=True)
    assert (session.workspace / "keep.txt").read_text() == "keep"


def test_a_file_that_vanished_since_the_frame_is_reported_and_force_recreates_it(session) -> None:
    closed = frame(session, lambda ws: (ws / "keep.txt").write_text("changed"))
    (session.workspace / "keep.txt").unlink()
    item = frame_rewind.rewind(session.checkpoints, closed.frame)
    assert [(p.path, p.action) for p in item.paths] == [("keep.txt", "conflict")]
    assert not (session.workspace / "keep.txt").exists()
    closed = frame(session, lambda ws: (ws / "new.txt").write_text("n"))
    (session.workspace / "new.txt").unlink()
    item = frame_rewind.rewind(session.checkpoints, closed.frame, force=True)
    assert item.paths[0].action == "deleted" and "already gone" in item.paths[0].detail


def test_a_missing_pre_image_fails_that_file_only(session) -> None:
    def cell(ws: Path) -> None:
        (ws / "keep.txt").write_text("changed")
        (ws / "other.txt").write_text("o")

    closed = frame(session, cell)
    sha = next(c.before.sha for c in closed.changes if c.path == "keep.txt")
    (session.workspace / ".logician/git/objects" / sha[:2] / sha[2:]).unlink()
    # A failed path keeps the rewind pending (issue 28): recorded, the frame still active.
    with pytest.raises(RewindIncomplete) as incomplete:
        frame_rewind.rewind(session.checkpoints, closed.frame)
    assert [p.path for p in incomplete.value.entry.failed] == ["keep.txt"]
    assert [(p.path, p.action) for p in incomplete.value.entry.results] == [
        ("other.txt", "deleted")
    ]
    assert session.checkpoints.frames()[closed.frame].status == "active"
    record = pending_plan(session.checkpoints.ledger)
    assert record is not None
    item = frame_rewind.complete(session.checkpoints, record, skip_failed=True)
    actions = {p.path: p.action for p in item.paths}
    assert actions == {"keep.txt": "failed", "other.txt": "deleted"}
    assert "given up with --skip-failed" in item.paths[0].detail
    assert session.checkpoints.frames()[closed.frame].status == "rewound"


def test_symlinks_and_the_executable_bit_round_trip(session) -> None:
    ws = session.workspace
    (ws / "tool.sh").write_text("#!/bin/sh\n")
    os.symlink("keep.txt", ws / "link")

    def cell(w: Path) -> None:
        os.chmod(w / "tool.sh", 0o755)
        (w / "link").unlink()
        os.symlink("elsewhere", w / "link")

    closed = frame(session, cell)
    frame_rewind.rewind(session.checkpoints, closed.frame)
    assert os.readlink(ws / "link") == "keep.txt"
    assert not os.stat(ws / "tool.sh").st_mode & 0o111


def test_a_small_file_that_grows_past_the_cap_can_still_be_rewound(session) -> None:
    closed = frame(session, lambda ws: (ws / "keep.txt").write_text("x" * 5000))
    (change,) = closed.changes
    assert change.before.kind == "blob" and change.after.kind == "uncaptured"
    frame_rewind.rewind(session.checkpoints, closed.frame)
    assert (session.workspace / "keep.txt").read_text() == "keep"


def test_a_large_file_created_by_a_frame_is_skipped_with_its_reason(session) -> None:
    closed = frame(session, lambda ws: (ws / "big.bin").write_bytes(b"b" * 5000))
    assert [(s.path, s.reason) for s in closed.skipped] == [("big.bin", "too-large")]
    item = frame_rewind.rewind(session.checkpoints, closed.frame)
    assert item.paths[0].action == "skipped" and "size limit" in item.paths[0].detail
    assert (session.workspace / "big.bin").exists()


def test_rewind_is_an_appended_projection_item_and_history_is_kept(session) -> None:
    closed = frame(session, lambda ws: (ws / "a.txt").write_text("a"))
    before = read_entries(session.ledger.path)
    frame_rewind.rewind(session.checkpoints, closed.frame)
    after = read_entries(session.ledger.path)
    assert after[: len(before)] == before
    assert isinstance(after[-1], ProjectionItem) and after[-1].reason == "rewind"
    assert after[-1].frames == [closed.frame]


def test_target_resolution_errors_are_specific(session) -> None:
    cp = session.checkpoints
    with pytest.raises(RewindError, match="no frame of this notebook is recorded yet"):
        frame_rewind.resolve_target(cp, "--last")
    frame(session, lambda ws: None)
    with pytest.raises(RewindError, match=r"there is no frame 5 \(frames are 1..1\)"):
        frame_rewind.resolve_target(cp, "5")
    with pytest.raises(RewindError, match="'x' is not a frame id"):
        frame_rewind.resolve_target(cp, "x")


def test_capture_failure_is_recorded_and_the_frame_still_closes(session) -> None:
    frame(session, lambda ws: (ws / "a.txt").write_text("0"))  # a frame on the in-process path
    objects = session.workspace / ".logician/git/objects"
    objects.rename(objects.with_name("objects-away"))
    objects.write_bytes(b"not a directory")  # no object can be stored any more
    closed = frame(session, lambda ws: (ws / "a.txt").write_text("a"))
    assert closed.capture_error and "cannot store a.txt" in closed.capture_error
    assert closed.outcome == "ok"


def test_the_user_git_repository_is_never_written(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "f.txt").write_text("f")
    subprocess.run(["git", "add", "f.txt"], cwd=ws, check=True)
    index = (ws / ".git/index").read_bytes()
    s = OpenThread.open(ws, env={"LOGICIAN_THREAD": "g"})
    try:
        closed = frame(s, lambda w: (w / "f.txt").write_text("g"))
        frame_rewind.rewind(s.checkpoints, closed.frame)
    finally:
        s.close()
    assert (ws / ".git/index").read_bytes() == index
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True
    )
    assert status.stdout == "A  f.txt\n"


def test_thread_ids_are_stable_per_notebook_path() -> None:
    a, stable = thread_id_for({"JPY_SESSION_NAME": "/home/u/proj/analysis.ipynb"})
    b, _ = thread_id_for({"JPY_SESSION_NAME": "/home/u/other/analysis.ipynb"})
    assert stable and a.startswith("analysis-") and a != b
    assert a == thread_id_for({"JPY_SESSION_NAME": "/home/u/proj/analysis.ipynb"})[0]
    fresh, stable = thread_id_for({})
    assert not stable and fresh != thread_id_for({})[0]


def test_a_fifo_a_cell_makes_is_reported_and_the_rest_of_the_frame_is_captured(session) -> None:
    def cell(ws: Path) -> None:
        os.mkfifo(ws / "pipe")
        (ws / "keep.txt").write_text("changed")

    closed = frame(session, cell)
    assert closed.capture_error is None
    assert [(s.path, s.reason) for s in closed.skipped] == [("pipe", "not-a-file")]
    frame_rewind.rewind(session.checkpoints, closed.frame)
    assert (session.workspace / "keep.txt").read_text() == "keep"


def test_frames_written_without_the_index_agree_with_the_next_full_scan(session) -> None:
    ws = session.workspace
    closed = [
        frame(session, lambda ws: (ws / "d" / "e").mkdir(parents=True)),
        frame(session, lambda ws: (ws / "d" / "e" / "f.txt").write_text("f")),
        frame(session, lambda ws: (ws / "keep.txt").write_text("keep 2")),
        frame(session, lambda ws: os.symlink("keep.txt", ws / "link")),
    ]
    assert [c.path for c in closed[1].changes] == ["d/e/f.txt"]
    # A new .gitignore makes the next snapshot a full scan through git's (lagging) index:
    # its tree must equal what the in-process frames built, so only the new file shows.
    last = frame(session, lambda ws: (ws / ".gitignore").write_text("*.log\n"))
    assert [(c.path, c.action) for c in last.changes] == [(".gitignore", "created")]
    for c in reversed(closed):
        frame_rewind.rewind(session.checkpoints, c.frame)
    assert (ws / "keep.txt").read_text() == "keep" and not (ws / "link").is_symlink()
    assert not (ws / "d" / "e" / "f.txt").exists()


def test_a_captured_file_stays_captured_when_an_ignore_rule_later_matches_it(session) -> None:
    # As in git: a tracked file is not ignored. Frames between full scans never write the
    # private index, so this holds only if the next full scan catches the index up first.
    ws = session.workspace
    frame(session, lambda ws: (ws / "run.log").write_text("one"))
    frame(session, lambda ws: (ws / ".gitignore").write_text("*.log\n"))
    closed = frame(session, lambda ws: (ws / "run.log").write_text("two"))
    assert [(c.path, c.action) for c in closed.changes] == [("run.log", "modified")]
    frame_rewind.rewind(session.checkpoints, closed.frame)
    assert (ws / "run.log").read_text() == "one"
