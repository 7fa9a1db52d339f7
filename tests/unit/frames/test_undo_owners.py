"""A root kernel's undo gives files back to their owners: the rewind plan records the owner,
group and mode of each file it deletes or replaces, and the undo restores them (the owner
through `fchown` on the new file's descriptor, never by name). Needs root to chown; the
record itself is checked everywhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logician_kernel.frames import frame_rewind
from logician_kernel.frames.undo import undo_rewind
from logician_kernel.ledger.thread_ledger import RewindPlanned, RewindStep
from logician_kernel.types.path_states import PathState
from logician_kernel.workspace.open_thread import OpenThread

THEIRS = (4242, 4343)
"""An owner and group that are not root's (no such account is needed to own a file)."""

root_only = pytest.mark.skipif(
    os.geteuid() != 0, reason="giving a file to another owner needs root (chown)"
)


def _frame(session: OpenThread, action) -> int:
    cp = session.checkpoints
    assert cp is not None
    frame_id = cp.open_frame(execution_count=None, cell_id=None, code="cell")
    action(session.workspace)
    cp.close_frame("ok")
    return frame_id


def _owner(path: Path) -> tuple[int, int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid, st.st_mode & 0o7777


@root_only
def test_undo_recreates_a_deleted_file_with_its_owner_group_and_mode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shared.txt").write_text("theirs\n")
    os.chown(ws / "shared.txt", *THEIRS)
    (ws / "shared.txt").chmod(0o640)
    session = OpenThread.open(ws, env={"LOGICIAN_THREAD": "owners"}, max_file_bytes=100_000)
    try:

        def cell(w: Path) -> None:
            # A file the cell makes and hands to someone else (a deploy step), and an edit
            # of a file someone else owns (written in place: its inode and owner stay).
            (w / "made.txt").write_text("made\n")
            os.chown(w / "made.txt", *THEIRS)
            (w / "made.txt").chmod(0o604)
            (w / "link").symlink_to("made.txt")
            os.lchown(w / "link", *THEIRS)
            with open(w / "shared.txt", "a") as fh:
                fh.write("cell\n")

        target = _frame(session, cell)
        before = {p: _owner(ws / p) for p in ("made.txt", "link", "shared.txt")}
        frame_rewind.rewind(session.checkpoints, target, force=True, include_external=True)
        assert not (ws / "made.txt").exists() and not os.path.lexists(ws / "link")
        # The rewind's replacement of a file keeps its owner (it was there to ask).
        assert _owner(ws / "shared.txt") == (*THEIRS, 0o640)
        assert (ws / "shared.txt").read_text() == "theirs\n"
        plan = next(e for e in session.checkpoints.ledger.entries if isinstance(e, RewindPlanned))
        recorded = {s.path: (s.uid, s.gid) for s in plan.steps}
        assert recorded == {p: THEIRS for p in ("made.txt", "link", "shared.txt")}

        undo_rewind(session.checkpoints, None)
        # Recreated files are theirs again, not root's, with the mode they had.
        assert {p: _owner(ws / p) for p in before} == before
        assert (ws / "made.txt").read_text() == "made\n"
        assert os.readlink(ws / "link") == "made.txt"
        assert (ws / "shared.txt").read_text() == "theirs\ncell\n"
    finally:
        session.close()


def test_a_plan_recorded_before_owners_were_kept_still_reads_and_means_no_owner() -> None:
    old = {
        "path": "a.txt",
        "target": {"kind": "absent"},
        "current": {"kind": "blob", "mode": "100644", "sha": "0" * 40, "perms": 0o600},
    }
    step = RewindStep.model_validate(old)
    assert step.uid is None and step.gid is None
    assert step.current == PathState.blob("100644", "0" * 40).model_copy(update={"perms": 0o600})
