"""Undoable, resumable rewinds without debris, on the Jupyter-free core with real git and real
files (the fast tier; the kernel tests drive the same through `%logician`)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logician_kernel.frames import frame_rewind, rewind_incomplete, rewind_plan
from logician_kernel.frames.file_checkpoints import RewindError
from logician_kernel.frames.undo import undo_rewind
from logician_kernel.ledger.branches import derive_branches
from logician_kernel.ledger.frame_view import derive_frames
from logician_kernel.ledger.rewind_state import pending_plan
from logician_kernel.ledger.thread_ledger import (
    MessageEntry,
    ProjectionItem,
    RewindPlanned,
    RewindProgress,
    read_entries,
)
from logician_kernel.workspace.open_thread import OpenThread

ENV = {"LOGICIAN_THREAD": "undo"}


def open_session(ws: Path) -> OpenThread:
    return OpenThread.open(ws, env=ENV, max_file_bytes=100_000)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.txt").write_text("keep")
    (root / "lib").mkdir()
    (root / "lib" / "a.py").write_text("a = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    return root


def tree(ws: Path) -> dict[str, tuple[str, int]]:
    """Every file and directory of the workspace (but our state): sha256 and full mode."""
    out: dict[str, tuple[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        dirnames[:] = [d for d in dirnames if d != ".logician"]
        for name in dirnames:
            full = Path(dirpath, name)
            out[str(full.relative_to(ws)) + "/"] = ("dir", 0)
        for name in filenames:
            full = Path(dirpath, name)
            digest = hashlib.sha256(full.read_bytes()).hexdigest()
            out[str(full.relative_to(ws))] = (digest, os.lstat(full).st_mode & 0o7777)
    return out


def frame(session: OpenThread, action) -> int:
    cp = session.checkpoints
    assert cp is not None
    frame_id = cp.open_frame(execution_count=None, cell_id=None, code="cell")
    action(session.workspace)
    cp.close_frame("ok")
    return frame_id


def edit_everything(ws: Path) -> None:
    (ws / "keep.txt").write_text("changed")
    (ws / "lib" / "a.py").unlink()
    (ws / "new" / "deep").mkdir(parents=True)
    (ws / "new" / "deep" / "n.txt").write_text("n")
    (ws / "run.sh").chmod(0o644)


def test_rewind_then_undo_restores_every_byte_and_mode_and_the_frames(ws: Path) -> None:
    session = open_session(ws)
    try:
        frame(session, lambda w: (w / "first.txt").write_text("1"))
        target = frame(session, edit_everything)
        before = tree(ws)
        frame_rewind.rewind(session.checkpoints, target)
        assert (ws / "keep.txt").read_text() == "keep" and not (ws / "new").exists()
        assert os.stat(ws / "run.sh").st_mode & 0o777 == 0o755
        item = undo_rewind(session.checkpoints, None)
        assert tree(ws) == before
        assert item.reason == "restore" and item.undoes is not None
        assert [f.frame for f in session.checkpoints.active_frames()] == [1, target]
        # The undone frame is rewindable again, exactly as before.
        frame_rewind.rewind(session.checkpoints, target)
        assert not (ws / "new").exists() and (ws / "lib" / "a.py").read_text() == "a = 1\n"
    finally:
        session.close()


def test_plans_progress_and_undos_replay_exactly_from_the_file(ws: Path) -> None:
    session = open_session(ws)
    try:
        target = frame(session, many_files(600))
        frame_rewind.rewind(session.checkpoints, target)
        undo_rewind(session.checkpoints, None)
        on_disk = read_entries(session.ledger.path)
        assert on_disk == session.ledger.entries  # what a replay reads is what was appended
        kinds = [e.kind for e in on_disk]
        assert kinds.count("rewind_plan") == 1 and kinds.count("rewind_progress") >= 2
        replayed = derive_frames(on_disk)
        assert {f: v.status for f, v in replayed.items()} == {target: "active"}
        assert replayed == session.checkpoints.frames()
    finally:
        session.close()


def test_undo_twice_says_so_and_changes_nothing(ws: Path) -> None:
    session = open_session(ws)
    try:
        target = frame(session, edit_everything)
        frame_rewind.rewind(session.checkpoints, target)
        undo_rewind(session.checkpoints, None)
        after_undo, entries = tree(ws), len(session.ledger.entries)
        with pytest.raises(RewindError, match="already undone"):
            undo_rewind(session.checkpoints, None)
        assert tree(ws) == after_undo and len(session.ledger.entries) == entries
    finally:
        session.close()


def test_nothing_to_undo_is_a_clear_message(ws: Path) -> None:
    session = open_session(ws)
    try:
        with pytest.raises(RewindError, match="no rewind to undo"):
            undo_rewind(session.checkpoints, None)
    finally:
        session.close()


def test_undo_after_reopening_the_thread(ws: Path) -> None:
    session = open_session(ws)
    target = frame(session, edit_everything)
    before = tree(ws)
    frame_rewind.rewind(session.checkpoints, target)
    session.close()
    session = open_session(ws)
    try:
        undo_rewind(session.checkpoints, None)
        assert tree(ws) == before
    finally:
        session.close()


def test_undo_brings_back_the_conversation_as_it_was(ws: Path) -> None:
    session = open_session(ws)
    try:
        ledger = session.ledger
        ledger.append(MessageEntry, frame=None, message={"role": "user", "content": "one"})
        target = frame(
            session,
            lambda w: ledger.append(
                MessageEntry, frame=2, message={"role": "user", "content": "two"}
            ),
        )
        assert len(ledger.messages()) == 2
        frame_rewind.rewind(session.checkpoints, target)
        assert [m["content"] for m in ledger.messages()] == ["one"]
        assert [b.id for b in derive_branches(ledger.entries)] != []
        undo_rewind(session.checkpoints, None)
        assert [m["content"] for m in ledger.messages()] == ["one", "two"]
        assert derive_branches(ledger.entries) == []  # nothing was discarded after all
    finally:
        session.close()


def test_an_edit_made_after_the_rewind_stops_the_undo_unless_forced(ws: Path) -> None:
    session = open_session(ws)
    try:
        target = frame(session, lambda w: (w / "keep.txt").write_text("by the cell"))
        frame(session, lambda w: (w / "other.txt").write_text("o"))
        frame_rewind.rewind(session.checkpoints, target)
        (ws / "keep.txt").write_text("by hand, after the rewind")
        state = tree(ws)
        with pytest.raises(RewindError, match=r"1 file\(s\) changed since the rewind \(keep.txt\)"):
            undo_rewind(session.checkpoints, None)
        assert tree(ws) == state  # other.txt was not brought back either: exact or nothing
        undo_rewind(session.checkpoints, None, force=True)
        assert (ws / "keep.txt").read_text() == "by the cell"
        assert (ws / "other.txt").read_text() == "o"
    finally:
        session.close()


def test_a_file_the_rewind_left_as_it_found_it_is_not_the_undos(ws: Path) -> None:
    """One frame made a.txt, the next deleted it: rewinding both leaves a.txt absent, as the
    rewind found it. A file written there since is the user's; the undo neither refuses
    because of it nor deletes it."""
    session = open_session(ws)
    try:
        first = frame(session, lambda w: (w / "a.txt").write_text("x"))
        frame(session, lambda w: (w / "a.txt").unlink())
        frame(session, lambda w: (w / "b.txt").write_text("b"))
        frame_rewind.rewind(session.checkpoints, first)
        assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()
        (ws / "a.txt").write_text("written since")
        undo_rewind(session.checkpoints, None)
        assert (ws / "a.txt").read_text() == "written since"
        assert (ws / "b.txt").read_text() == "b"
    finally:
        session.close()


def test_created_empty_directories_go_and_existing_empty_ones_stay(ws: Path) -> None:
    (ws / "empty_before").mkdir()
    # "Before" by the file system's clock too: a rewind keeps directories born more than a
    # coarse clock tick (20 ms) before the frame opened; on an idle machine the session and
    # the frame open sooner than that.
    born = os.stat(ws / "empty_before").st_ctime
    while time.time() < born + 0.05:
        time.sleep(0.005)
    session = open_session(ws)
    try:

        def cell(w: Path) -> None:
            (w / "made" / "sub").mkdir(parents=True)
            (w / "made" / "sub" / "f.txt").write_text("f")
            (w / "empty_before" / "g.txt").write_text("g")
            (w / "lib" / "h.txt").write_text("h")

        target = frame(session, cell)
        item = frame_rewind.rewind(session.checkpoints, target)
        assert not (ws / "made").exists()
        assert (ws / "empty_before").is_dir() and not list((ws / "empty_before").iterdir())
        assert (ws / "lib").is_dir()
        removed = sorted(p.path for p in item.paths if p.path.endswith("/"))
        assert removed == ["made/", "made/sub/"]
    finally:
        session.close()


def test_chmod_600_is_restored_when_the_file_was_deleted_or_only_chmodded(ws: Path) -> None:
    (ws / "secret.txt").write_text("s3cret")
    (ws / "secret.txt").chmod(0o600)
    (ws / "private.txt").write_text("p")
    (ws / "private.txt").chmod(0o600)
    session = open_session(ws)
    try:

        def cell(w: Path) -> None:
            (w / "secret.txt").unlink()
            (w / "private.txt").chmod(0o644)

        target = frame(session, cell)
        frame_rewind.rewind(session.checkpoints, target)
        assert (ws / "secret.txt").read_text() == "s3cret"
        assert os.stat(ws / "secret.txt").st_mode & 0o7777 == 0o600
        assert os.stat(ws / "private.txt").st_mode & 0o7777 == 0o600
    finally:
        session.close()


class Interrupted(Exception):
    pass


def interrupt_after(k: int):
    seen = []

    def on_path(path: str) -> None:
        seen.append(path)
        if len(seen) == k:
            raise Interrupted(path)

    return on_path


def many_files(count: int):
    def cell(w: Path) -> None:
        (w / "many").mkdir()
        for i in range(count):
            (w / "many" / f"f{i:04d}.txt").write_text(f"new {i}")
        (w / "keep.txt").write_text("changed")

    return cell


def test_an_interrupted_rewind_is_announced_and_resumes_without_false_conflicts(ws: Path) -> None:
    session = open_session(ws)
    before = tree(ws)
    target = frame(session, many_files(1200))
    cp = session.checkpoints
    with pytest.raises(Interrupted):
        frame_rewind.rewind(cp, target, on_path=interrupt_after(700))
    assert any(isinstance(e, RewindProgress) and e.done == 500 for e in session.ledger.entries)
    session.close()
    session = open_session(ws)
    try:
        assert any(
            "rewind of frame(s) 1" in n and "interrupted" in n and "500 of 1201" in n
            for n in session.notices
        )
        with pytest.raises(RewindError, match="--resume"):
            frame_rewind.rewind(session.checkpoints, target)
        record = pending_plan(session.ledger.entries)
        assert record is not None
        item = frame_rewind.complete(session.checkpoints, record, resume=True)
        assert not [p for p in item.paths if p.action == "conflict"]
        done_before = [p for p in item.paths if "before the interruption" in p.detail]
        assert len(done_before) == 700
        assert tree(ws) == before
        assert [f.frame for f in session.checkpoints.active_frames()] == []
        # Resumed, it is an ordinary rewind: undo takes it back.
        undo_rewind(session.checkpoints, None)
        assert (ws / "many" / "f1199.txt").read_text() == "new 1199"
    finally:
        session.close()


def test_an_interrupted_undo_is_announced_and_undo_again_finishes_it(ws: Path) -> None:
    session = open_session(ws)
    target = frame(session, many_files(300))
    before_rewind = tree(ws)
    frame_rewind.rewind(session.checkpoints, target)
    with pytest.raises(Interrupted):
        undo_rewind(session.checkpoints, None, on_path=interrupt_after(120))
    session.close()
    session = open_session(ws)
    try:
        assert any("an undo of the rewind" in n and "interrupted" in n for n in session.notices)
        item = undo_rewind(session.checkpoints, None)
        assert not [p for p in item.paths if p.action == "conflict"]
        assert sum("already as before the rewind" in p.detail for p in item.paths) == 120
        assert tree(ws) == before_rewind
        assert rewind_incomplete.interrupted_notice(session.ledger.entries) is None
    finally:
        session.close()


def truncate_inside_last(session: OpenThread, kind: type) -> None:
    """Tear the ledger inside its last record of `kind`, as a crash mid-write would."""
    path = session.ledger.path
    lines = path.read_bytes().splitlines(keepends=True)
    marker = f'"kind":"{kind.model_fields["kind"].default}"'.encode()
    index = max(i for i, line in enumerate(lines) if marker in line.replace(b" ", b""))
    torn = b"".join(lines[:index]) + lines[index][: len(lines[index]) // 2]
    session.close()
    path.write_bytes(torn)


def test_a_torn_plan_record_means_nothing_was_touched(ws: Path) -> None:
    session = open_session(ws)
    target = frame(session, edit_everything)
    after_cell = tree(ws)
    # The plan is durable before the first path is touched: a crash that tore it left the
    # workspace as the cell left it.
    record = rewind_plan.write_plan(
        session.ledger,
        session.checkpoints.snapshotter,
        target,
        frame_rewind.plan_rewind(session.checkpoints, target),
        since=None,
        files=True,
        conversation=True,
        variables=False,
        force=False,
    )
    assert isinstance(record, RewindPlanned)
    truncate_inside_last(session, RewindPlanned)
    session = open_session(ws)
    try:
        assert pending_plan(session.ledger.entries) is None
        assert not any("interrupted" in n and "rewind" in n for n in session.notices)
        assert tree(ws) == after_cell
        frame_rewind.rewind(session.checkpoints, target)
        assert (ws / "keep.txt").read_text() == "keep"
    finally:
        session.close()


@pytest.mark.parametrize("torn", [RewindProgress, ProjectionItem])
def test_a_torn_progress_or_final_record_resumes_exactly(ws: Path, torn: type) -> None:
    session = open_session(ws)
    before = tree(ws)
    target = frame(session, many_files(600))
    if torn is RewindProgress:
        with pytest.raises(Interrupted):
            frame_rewind.rewind(session.checkpoints, target, on_path=interrupt_after(550))
    else:
        frame_rewind.rewind(session.checkpoints, target)
    truncate_inside_last(session, torn)
    session = open_session(ws)
    try:
        record = pending_plan(session.ledger.entries)
        assert record is not None and any("interrupted" in n for n in session.notices)
        item = frame_rewind.complete(session.checkpoints, record, resume=True)
        assert not [p for p in item.paths if p.action == "conflict"]
        assert tree(ws) == before
        assert pending_plan(session.ledger.entries) is None
    finally:
        session.close()


def test_files_executable_by_their_group_only_are_rewound_not_left_as_conflicts(ws: Path) -> None:
    """git's rule (the owner's execute bit) is the one rule: a 0o654 file is 100644 when the
    frame captures it and when the rewind looks at it again, so nobody "changed it since"."""
    session = open_session(ws)
    try:
        before = tree(ws)

        def cell(w: Path) -> None:
            (w / "group.sh").write_text("echo hi\n")
            (w / "group.sh").chmod(0o654)
            (w / "keep.txt").write_text("changed")
            (w / "keep.txt").chmod(0o614)

        target = frame(session, cell)
        item = frame_rewind.rewind(session.checkpoints, target)
        assert not [p.path for p in item.paths if p.action == "conflict"]
        assert tree(ws) == before
        undo_rewind(session.checkpoints, None)
        assert os.stat(ws / "group.sh").st_mode & 0o777 == 0o654
        assert os.stat(ws / "keep.txt").st_mode & 0o777 == 0o614
    finally:
        session.close()


# -- the property: random cells, rewinds and undos against a model of the workspace -----------

NAMES = ["a.txt", "d1/b.txt", "d1/d2/c.txt", "e.txt"]
file_op = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.sampled_from(["x", "yy", "zzz", ""])),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just("")),
    st.tuples(
        st.just("chmod"), st.sampled_from(NAMES), st.sampled_from(["600", "644", "654", "755"])
    ),
)
step = st.one_of(
    st.tuples(st.just("cell"), st.lists(file_op, min_size=1, max_size=4)),
    st.tuples(st.just("rewind"), st.integers(min_value=0, max_value=5)),
    st.tuples(st.just("undo"), st.just(0)),
)
Model = dict[str, tuple[str, int]]


def apply(ws: Path, model: Model, op: tuple[str, str, str]) -> None:
    kind, name, arg = op
    full = ws / name
    if kind == "write":
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(arg)
        model[name] = (arg, os.stat(full).st_mode & 0o7777)
    elif kind == "delete" and name in model:
        full.unlink()
        del model[name]
    elif kind == "chmod" and name in model:
        full.chmod(int(arg, 8))
        model[name] = (model[name][0], int(arg, 8))


def files_of(ws: Path) -> Model:
    return {
        k: (Path(ws, k).read_text(), mode)
        for k, (_, mode) in tree(ws).items()
        if not k.endswith("/")
    }


def rewound(
    model: Model, popped: list[int], pre: dict[int, Model], post: dict[int, Model]
) -> Model:
    """What a rewind does (as `plan_rewind` decides): a path goes back to its state before the
    first popped frame that changed it, unless its chain of frames does not join up or it
    changed since (a conflict, left alone)."""
    out = dict(model)
    paths = {
        p for f in popped for p in set(pre[f]) | set(post[f]) if pre[f].get(p) != post[f].get(p)
    }
    for path in paths:
        chain = [f for f in popped if pre[f].get(path) != post[f].get(path)]
        joined = all(
            post[a].get(path) == pre[b].get(path) for a, b in zip(chain, chain[1:], strict=False)
        )
        if joined and model.get(path) == post[chain[-1]].get(path):
            if path in pre[chain[0]]:
                out[path] = pre[chain[0]][path]
            else:
                out.pop(path, None)
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(step, min_size=1, max_size=10))
def test_cells_rewinds_and_undos_agree_with_a_model(tmp_path_factory, steps) -> None:
    ws = tmp_path_factory.mktemp("prop")
    session = open_session(ws)
    model: Model = {}
    pre: dict[int, Model] = {}  # the workspace as each frame found it ...
    post: dict[int, Model] = {}  # ... and as it left it
    last: tuple[Model, Model] | None = None  # the workspace before and after the last rewind
    undone = False
    try:
        cp = session.checkpoints
        for kind, arg in steps:
            if kind == "cell":
                snapshot = dict(model)
                frame_id = frame(
                    session, lambda w, m=model, ops=arg: [apply(w, m, op) for op in ops]
                )
                pre[frame_id], post[frame_id] = snapshot, dict(model)
            elif kind == "rewind":
                active = [f.frame for f in cp.active_frames()]
                if not active:
                    continue
                target = active[arg % len(active)]
                frame_rewind.rewind(cp, target)
                before = dict(model)
                model = rewound(model, [f for f in active if f >= target], pre, post)
                last, undone = (before, dict(model)), False
            else:
                if last is None or undone:
                    with pytest.raises(RewindError):
                        undo_rewind(cp, None)
                    continue
                before, after = last
                changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
                if any(model.get(p) not in (before.get(p), after.get(p)) for p in changed):
                    with pytest.raises(RewindError, match="changed since the rewind"):
                        undo_rewind(cp, None)
                    continue
                undo_rewind(cp, None)
                for path in changed:
                    if path in before:
                        model[path] = before[path]
                    else:
                        model.pop(path, None)
                undone = True
            assert files_of(ws) == model, (kind, arg)
    finally:
        session.close()


def test_a_frame_that_only_changed_a_mode_is_rewound_to_the_mode_it_found(ws: Path) -> None:
    # The mode before was what git mode and umask give (755 for an executable), so no bits were
    # recorded: the rewind must still give exactly those back, not the bits the file has now
    # with the executable bits added (700).
    session = open_session(ws)
    cp = session.checkpoints
    assert cp is not None

    def make(w: Path) -> None:
        (w / "e.txt").write_text("")
        (w / "e.txt").chmod(0o755)

    frame(session, make)
    only_mode = frame(session, lambda w: (w / "e.txt").chmod(0o600))
    frame_rewind.rewind(cp, only_mode)
    assert os.stat(ws / "e.txt").st_mode & 0o7777 == 0o755
    undo_rewind(cp, None)
    assert os.stat(ws / "e.txt").st_mode & 0o7777 == 0o600
