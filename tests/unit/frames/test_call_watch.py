"""A watched `bash`-like call (frames/call_watch.py) under exact attribution, in-process: its
baseline and paths reach the ledger as it runs, and after the process "dies" the restart
offers it, `rewind --call` puts back exactly its paths (created deleted, modified restored,
deleted re-created) through an undoable plan, and the undo takes that back."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.frames.call_watch import watch
from logician_kernel.frames.undo import undo_rewind
from logician_kernel.ledger.run_store import LedgerRunStore
from logician_kernel.ledger.settle import restorable_calls
from logician_kernel.ledger.thread_ledger import CallWatch, ProjectionItem
from logician_kernel.snapshots.tree_watch import TREE
from logician_kernel.snapshots.write_audit import AUDIT
from logician_kernel.types import ToolCall
from logician_kernel.workspace import rewinds
from logician_kernel.workspace.call_rows import frame_calls
from logician_kernel.workspace.open_thread import OpenThread

ENV = {"LOGICIAN_THREAD": "watch"}
SCRIPT = "echo new > new.txt; echo more >> a.txt; rm gone.txt; echo late > late.txt"


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_bytes(b"a before\n")
    (root / "gone.txt").write_bytes(b"deleted by the call\n")
    (root / "late.txt").write_bytes(b"v1\n")
    yield root


def _die_inside_a_watched_call(ws: Path) -> None:
    s = OpenThread.open(ws, env=ENV)
    assert s.checkpoints is not None and s.ledger is not None
    s.checkpoints.wait_for_first_snapshot()
    s.checkpoints.open_frame(execution_count=1, cell_id=None, code="%%logician")
    if TREE.mode != "fanotify":
        s.checkpoints.close_frame("ok")
        s.close()
        pytest.skip(f"exact attribution (fanotify, root) is not available here: {TREE.label()}")
    # A change earlier in the frame: the call's pre-image of late.txt is v2, not the frame's v1.
    (ws / "late.txt").write_bytes(b"v2\n")
    store = LedgerRunStore(s.ledger, s.checkpoints.current_frame)
    store.record_intent(ToolCall(id="b1", name="bash", arguments={"command": SCRIPT}), "external")
    with watch(s.checkpoints, "b1"):
        subprocess.run(["sh", "-c", SCRIPT], cwd=ws, check=True)
    records = [e for e in s.ledger.entries if isinstance(e, CallWatch)]
    assert records[0].phase == "start" and records[0].baseline is not None
    assert records[-1].phase == "end"
    assert all(r.not_exact == "" for r in records), records
    assert sorted({p for r in records for p in r.paths}) == [
        "a.txt",
        "gone.txt",
        "late.txt",
        "new.txt",
    ]
    # No result, no frame close: the process is gone (what it held goes with it).
    TREE.end()
    AUDIT.end()
    assert s.checkpoints.snapshotter is not None
    s.checkpoints.snapshotter.close()
    s.ledger.close()
    assert s._lock is not None
    s._lock.release()


def test_a_watched_call_cut_off_is_offered_rewound_exactly_and_undone(ws: Path) -> None:
    _die_inside_a_watched_call(ws)
    s = OpenThread.open(ws, env=ENV)
    assert s.checkpoints is not None and s.ledger is not None
    try:
        assert any("`%logician rewind --call b1`" in n for n in s.notices), s.notices
        (offered,) = restorable_calls(s.ledger)
        assert offered.call_id == "b1"
        (row,) = frame_calls(s.checkpoints, 1)  # the Lab's *Rewind this call* of the frame
        assert row.files == ["a.txt", "gone.txt", "late.txt", "new.txt"] and row.undoable
        (ws / "unrelated.txt").write_text("written since the restart\n")

        item = rewinds.rewind_call(s.checkpoints, "b1", force=False)
        assert isinstance(item, ProjectionItem)
        actions = {p.path: p.action for p in item.paths}
        assert actions == {
            "a.txt": "restored",
            "gone.txt": "recreated",
            "late.txt": "restored",
            "new.txt": "deleted",
        }
        assert (ws / "a.txt").read_bytes() == b"a before\n"
        assert (ws / "gone.txt").read_bytes() == b"deleted by the call\n"
        assert (ws / "late.txt").read_bytes() == b"v2\n"  # as just before the call
        assert not (ws / "new.txt").exists()
        assert (ws / "unrelated.txt").read_text() == "written since the restart\n"
        assert restorable_calls(s.ledger) == []
        (row,) = frame_calls(s.checkpoints, 1)
        assert row.rewound and not row.undoable

        undo_rewind(s.checkpoints, None)
        assert (ws / "a.txt").read_bytes() == b"a before\nmore\n"
        assert not (ws / "gone.txt").exists()
        assert (ws / "new.txt").read_bytes() == b"new\n"
        assert (ws / "late.txt").read_bytes() == b"late\n"
        assert [c.call_id for c in restorable_calls(s.ledger)] == ["b1"]  # offered again
    finally:
        s.close()


def test_a_path_changed_since_the_restart_is_left_alone_unless_forced(ws: Path) -> None:
    _die_inside_a_watched_call(ws)
    s = OpenThread.open(ws, env=ENV)
    assert s.checkpoints is not None
    try:
        (ws / "a.txt").write_bytes(b"the user's fix\n")
        item = rewinds.rewind_call(s.checkpoints, "b1", force=False)
        actions = {p.path: p.action for p in item.paths}
        assert actions["a.txt"] == "conflict" and actions["new.txt"] == "deleted"
        assert (ws / "a.txt").read_bytes() == b"the user's fix\n"
    finally:
        s.close()


@pytest.fixture
def framed(ws: Path) -> Iterator[OpenThread]:
    """The thread on `ws` with a frame open, under exact attribution (else skipped)."""
    s = OpenThread.open(ws, env=ENV)
    assert s.checkpoints is not None and s.ledger is not None
    s.checkpoints.wait_for_first_snapshot()
    s.checkpoints.open_frame(execution_count=1, cell_id=None, code="%%logician")
    try:
        if TREE.mode != "fanotify":
            pytest.skip(f"exact attribution (fanotify, root) is not available here: {TREE.label()}")
        yield s
    finally:
        s.checkpoints.close_frame("ok")
        s.close()


def test_a_storm_of_writes_is_recorded_whole_in_batches_not_one_fsync_per_path(
    ws: Path, framed: OpenThread
) -> None:
    s = framed
    assert s.checkpoints is not None and s.ledger is not None
    storm = "import os\nos.mkdir('out')\nfor i in range(2000): open(f'out/{i}', 'w').write('x')"
    with watch(s.checkpoints, "b1"):
        subprocess.run([sys.executable, "-c", storm], cwd=ws, check=True)
    records = [e for e in s.ledger.entries if isinstance(e, CallWatch)]
    paths = {p for r in records for p in r.paths}
    assert {f"out/{i}" for i in range(2000)} <= paths  # every one, none lost
    assert len(records) <= 200, len(records)  # each record is one fsync


def test_a_batch_being_recorded_as_the_call_ends_lands_before_its_end_record(
    ws: Path, framed: OpenThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher's thread has taken a batch of paths and is still writing its `seen` record
    when the call returns: the `end` record waits for it, so no path the call wrote is missing
    once the call is over, and nothing follows `end` (at load 20 this race lost `gone.txt`)."""
    from logician_kernel.frames import call_watch

    s = framed
    assert s.checkpoints is not None and s.ledger is not None
    try:
        flag = tmp_path / "seen-started"  # outside the workspace: not one of the call's paths
        ending = threading.Event()
        real_append, real_remove = s.ledger.append, call_watch._HUB.remove

        def append(kind: Any, **fields: Any) -> Any:
            if kind is CallWatch and fields.get("phase") == "seen" and not flag.exists():
                flag.touch()  # the call goes on to its end now
                assert ending.wait(60), "the call never ended"
            return real_append(kind, **fields)

        def remove(watch: Any) -> None:
            real_remove(watch)
            ending.set()  # the call's `end` record comes next

        monkeypatch.setattr(s.ledger, "append", append)
        monkeypatch.setattr(call_watch._HUB, "remove", remove)
        script = f"echo new > new.txt; while [ ! -e {flag} ]; do sleep 0.01; done; rm gone.txt"
        with watch(s.checkpoints, "b1"):
            subprocess.run(["sh", "-c", script], cwd=ws, check=True, timeout=120)
        records = [e for e in s.ledger.entries if isinstance(e, CallWatch)]
        assert [r.phase for r in records][-1] == "end" and records[0].phase == "start"
        assert {p for r in records for p in r.paths} == {"new.txt", "gone.txt"}
    finally:
        monkeypatch.undo()  # before the fixture closes the frame
