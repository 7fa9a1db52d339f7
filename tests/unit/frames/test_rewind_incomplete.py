"""A rewind or undo is done only when every path is (issue 28), on the Jupyter-free core with
real git and real files: a path that cannot be restored (a directory with a file stands in
its way) keeps the rewind pending; the retry touches exactly the failed paths; skipping is on
purpose and named; the state survives a reopen (the ledger checkpoint's folds included)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_undo_rewind import frame as run_frame

from logician_kernel.frames import frame_rewind
from logician_kernel.frames.frame_rewind import RewindError, RewindIncomplete
from logician_kernel.frames.undo import undo_rewind
from logician_kernel.ledger.rewind_state import pending_plan
from logician_kernel.workspace.open_thread import OpenThread

ENV = {"LOGICIAN_THREAD": "incomplete"}


def _open(ws: Path) -> OpenThread:
    return OpenThread.open(ws, env=ENV, max_file_bytes=100_000)


def _block(path: Path) -> None:
    """A directory with a file where a rewind must delete a file: that path fails."""
    path.unlink()
    path.mkdir()
    (path / "inside").write_text("x")


def _unblock(path: Path) -> None:
    (path / "inside").unlink()
    path.rmdir()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.txt").write_text("keep")
    return root


def test_a_failed_path_keeps_the_rewind_pending_and_the_retry_touches_only_it(ws: Path) -> None:
    session = _open(ws)
    cp = session.checkpoints
    assert cp is not None
    frame = run_frame(
        session, lambda w: ((w / "new.txt").write_text("n"), (w / "keep.txt").write_text("changed"))
    )
    _block(ws / "keep.txt")  # the rewind must write keep.txt back: it cannot
    with pytest.raises(RewindIncomplete) as caught:
        frame_rewind.rewind(cp, frame, force=True)
    assert "rewind incomplete: 1 path(s) failed" in str(caught.value)
    assert [p.path for p in caught.value.entry.failed] == ["keep.txt"]
    assert not (ws / "new.txt").exists()  # the rest was restored
    assert cp.frames()[frame].status == "active"
    assert cp.frames()[frame].incomplete == "rewind incomplete: 1 path(s) failed"
    # Hostile: a new rewind or an undo while it is pending: refused, saying why.
    with pytest.raises(RewindError, match="is incomplete"):
        frame_rewind.rewind(cp, frame)
    with pytest.raises(RewindError, match="is incomplete"):
        undo_rewind(cp, None)
    (ws / "new.txt").write_text("the user's own, made meanwhile")  # done: never retried
    session.close()

    session = _open(ws)  # the pending state is durable
    cp = session.checkpoints
    assert cp is not None
    assert "is incomplete" in " ".join(session.notices)
    record = pending_plan(cp.ledger)
    assert record is not None
    with pytest.raises(RewindIncomplete):  # still blocked: still pending
        frame_rewind.complete(cp, record, resume=True, force=True)
    _unblock(ws / "keep.txt")
    item = frame_rewind.complete(cp, record, resume=True, force=True)
    assert (ws / "keep.txt").read_text() == "keep"
    assert (ws / "new.txt").read_text() == "the user's own, made meanwhile"
    assert cp.frames()[frame].status == "rewound" and cp.frames()[frame].incomplete is None
    assert {p.path: p.action for p in item.paths} == {"keep.txt": "recreated", "new.txt": "deleted"}
    session.close()


def test_an_undo_that_fails_a_path_is_incomplete_until_retried(ws: Path) -> None:
    session = _open(ws)
    cp = session.checkpoints
    assert cp is not None
    frame = run_frame(session, lambda w: (w / "keep.txt").write_text("changed"))
    frame_rewind.rewind(cp, frame)
    assert (ws / "keep.txt").read_text() == "keep"
    # The undo must write keep.txt back; a directory with a file stands there now.
    (ws / "keep.txt").unlink()
    (ws / "keep.txt").mkdir()
    (ws / "keep.txt" / "inside").write_text("x")
    with pytest.raises(RewindError, match="changed since the rewind"):
        undo_rewind(cp, None)  # exact or not at all: refused, nothing changed
    with pytest.raises(RewindError, match="no undo is incomplete"):
        undo_rewind(cp, None, skip_failed=True)
    with pytest.raises(RewindIncomplete) as caught:
        undo_rewind(cp, None, force=True)
    assert "undo incomplete: 1 path(s) failed" in str(caught.value)
    assert cp.frames()[frame].status == "rewound"
    assert cp.frames()[frame].incomplete == "undo incomplete: 1 path(s) failed"
    (ws / "keep.txt" / "inside").unlink()
    (ws / "keep.txt").rmdir()
    item = undo_rewind(cp, None, force=True)
    assert (ws / "keep.txt").read_text() == "changed"
    assert item.undoes is not None and cp.frames()[frame].status == "active"
    assert cp.frames()[frame].incomplete is None
    # Nothing left to skip: refused by name.
    with pytest.raises(RewindError, match="already undone"):
        undo_rewind(cp, None, skip_failed=True)
    session.close()
