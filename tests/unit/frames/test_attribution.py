"""Attribution without a kernel: the audit hook's evidence, the Lab-path mapping, the verdict
a rewind takes per path, and old ledgers (no attribution fields) loading as before."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.frames.attribution import attribute, map_lab_path
from logician_kernel.frames.chain_verdict import judge_chain
from logician_kernel.ledger.entries import FileCheckpoint, FrameClose, FrameOpen
from logician_kernel.ledger.frame_view import derive_frames
from logician_kernel.ledger.thread_ledger import ThreadLedger
from logician_kernel.snapshots.write_audit import AUDIT, CELL, FrameEvidence
from logician_kernel.types.path_states import PathChange, PathState


@pytest.fixture
def audited(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / ".logician").mkdir(parents=True)
    AUDIT.begin(ws)
    try:
        yield ws
    finally:
        AUDIT.end()


def test_the_kernel_process_own_writes_are_seen_with_the_call_they_ran_in(audited: Path) -> None:
    ws = audited
    (ws / "a.txt").write_text("a")  # open for writing
    os.chmod(ws / "a.txt", 0o600)
    os.rename(ws / "a.txt", ws / "b.txt")
    with AUDIT.tool_call("call_7", "write"):
        with open(ws / "tool.txt", "x") as fh:
            fh.write("t")
    fd = os.open(ws / "low.bin", os.O_WRONLY | os.O_CREAT)
    os.close(fd)
    sqlite3.connect(ws / "db.sqlite").close()
    (ws / ".logician" / "internal").write_text("ours")  # the kernel's own state: not evidence
    (ws.parent / "outside.txt").write_text("x")  # outside the workspace: not evidence
    (ws / "read.txt").write_text("r")
    evidence = AUDIT.end()
    (ws / "read.txt").read_text()  # reading is never a write; nor is anything after end()
    assert evidence.writes == {
        "a.txt": CELL,
        "b.txt": CELL,
        "tool.txt": "call_7",
        "low.bin": CELL,
        "db.sqlite": CELL,
        "read.txt": CELL,
    }
    assert evidence.spawned == {}


def test_a_relative_path_and_a_dir_fd_resolve_against_where_they_point(audited: Path) -> None:
    ws = audited
    (ws / "sub").mkdir()
    here = os.getcwd()
    os.chdir(ws / "sub")
    try:
        open("rel.txt", "w").close()
    finally:
        os.chdir(here)
    dfd = os.open(ws / "sub", os.O_RDONLY)
    try:
        (ws / "sub" / "gone.txt").write_text("x")
        os.remove("gone.txt", dir_fd=dfd)
    finally:
        os.close(dfd)
    evidence = AUDIT.end()
    assert {"sub", "sub/rel.txt", "sub/gone.txt"} <= set(evidence.writes)


def test_spawns_are_recorded_by_call_but_the_kernels_own_git_is_not(audited: Path) -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    with AUDIT.tool_call("call_b", "bash"):
        subprocess.run(["true"], check=True)
    evidence = AUDIT.end()
    assert set(evidence.spawned) == {CELL, "call_b"}
    assert "-c pass" in evidence.spawned[CELL]


def test_nothing_is_recorded_outside_a_frame(tmp_path: Path) -> None:
    AUDIT.end()
    (tmp_path / "x.txt").write_text("x")
    assert not AUDIT.recording and AUDIT.end().writes == {}


def _change(path: str, by: str | None = None, **more: object) -> PathChange:
    return PathChange(
        path=path,
        before=PathState.absent(),
        after=PathState.blob("100644", "ab" * 20),
        by=by,
        **more,
    )  # type: ignore[arg-type]


def test_attribute_uses_the_strongest_evidence(tmp_path: Path) -> None:
    for name in ("cell.txt", "tool.txt", "spawned.txt", "saved.txt", "both.txt", "nobody.txt"):
        (tmp_path / name).write_text(name)
    evidence = FrameEvidence(
        writes={"cell.txt": CELL, "both.txt": CELL}, spawned={"call_b": "sh -c make"}
    )
    saves = {"saved.txt": "2026-12-01T20:00:00+00:00", "both.txt": "2026-12-01T20:00:01+00:00"}
    changes = [
        _change(n)
        for n in ("cell.txt", "tool.txt", "spawned.txt", "saved.txt", "both.txt", "nobody.txt")
    ]
    out = {
        c.path: c
        for c in attribute(
            changes,
            evidence,
            saves,
            workspace=tmp_path,
            tool_names={"call_w": "write", "call_b": "bash"},
            checkpointed={"tool.txt": "call_w"},
        )
    }
    assert (out["cell.txt"].by, out["cell.txt"].outside_write) == ("cell", "")
    assert (out["tool.txt"].by, out["tool.txt"].tool, out["tool.txt"].call_id) == (
        "tool",
        "write",
        "call_w",
    )
    # a process the frame started: the bash call's, and the report says it is a guess
    assert (out["spawned.txt"].by, out["spawned.txt"].tool) == ("tool", "bash")
    assert "another program may have written it too" in out["spawned.txt"].uncertain
    # a save the Lab reported wins over a spawned process's maybe
    assert out["saved.txt"].by == "external" and "saved in JupyterLab" in out["saved.txt"].basis
    assert out["both.txt"].by == "cell" and "saved in JupyterLab" in out["both.txt"].outside_write
    assert out["nobody.txt"].by == "tool"  # a spawned process was running: not external


def test_a_tool_calls_process_owns_only_what_changed_while_it_ran(tmp_path: Path) -> None:
    import time

    now = time.time()
    for name, age in (("during_b1.txt", 30), ("during_b2.txt", 10), ("between.txt", 20)):
        (tmp_path / name).write_text(name)
        os.utime(tmp_path / name, (now - age, now - age))
    evidence = FrameEvidence(
        spawned={"b1": "sh -c a", "b2": "sh -c b"},
        windows={"b1": (now - 31, now - 29), "b2": (now - 11, now - 9)},
    )
    changes = [_change(n) for n in ("during_b1.txt", "during_b2.txt", "between.txt")]
    out = {
        c.path: c
        for c in attribute(
            changes,
            evidence,
            {},
            workspace=tmp_path,
            tool_names={"b1": "bash", "b2": "bash"},
            checkpointed={},
        )
    }
    assert out["during_b1.txt"].call_id == "b1" and out["during_b2.txt"].call_id == "b2"
    # changed while the model was thinking and no process of ours ran: the user's
    assert out["between.txt"].by == "external"


def test_tool_call_windows_are_recorded_while_a_frame_is_open(audited: Path) -> None:
    with AUDIT.tool_call("b9", "bash"):
        pass
    evidence = AUDIT.end()
    start, end = evidence.windows["b9"]
    assert start <= end


def test_a_change_nobody_in_the_kernel_made_is_external(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x")
    (out,) = attribute(
        [_change("x.txt")], FrameEvidence(), {}, workspace=tmp_path, tool_names={}, checkpointed={}
    )
    assert out.by == "external" and "no write by this kernel" in out.basis


def test_a_modification_after_the_kernels_last_write_is_someone_elses_too(tmp_path: Path) -> None:
    import time

    (tmp_path / "x.txt").write_text("x")
    evidence = FrameEvidence(writes={"x.txt": CELL}, last={"x.txt": time.time() - 5})
    (out,) = attribute(
        [_change("x.txt")], evidence, {}, workspace=tmp_path, tool_names={}, checkpointed={}
    )
    assert out.by == "cell" and "after this kernel's last write" in out.outside_write
    evidence.last["x.txt"] = time.time()
    (out,) = attribute(
        [_change("x.txt")], evidence, {}, workspace=tmp_path, tool_names={}, checkpointed={}
    )
    assert out.outside_write == ""


def _attribute_x(workspace: Path, evidence: FrameEvidence, **given: Any) -> PathChange:
    """`attribute` of the one change to x.txt, no save, no tool, nothing checkpointed."""
    (out,) = attribute(
        [_change("x.txt")],
        evidence,
        {},
        workspace=workspace,
        tool_names={},
        checkpointed={},
        **given,
    )
    return out


def test_the_later_write_is_judged_on_the_version_the_frames_snapshot_stored(
    tmp_path: Path,
) -> None:
    """With `looked` (what the close's snapshot found as it stored the file), the clock's
    question is asked of that version, not of the file as it stands a moment later."""
    import time

    f = tmp_path / "x.txt"
    f.write_text("x")
    last = time.time() - 5
    evidence = FrameEvidence(writes={"x.txt": CELL}, last={"x.txt": last})
    st = os.lstat(f)

    def outside(mtime: float) -> str:
        ident = (st.st_ino, st.st_dev, st.st_size, st.st_mode, int(mtime * 1e9), st.st_ctime_ns)
        looked = {"x.txt": ident}.get
        return _attribute_x(tmp_path, evidence, looked=looked).outside_write

    # on disk it was modified 5 s after the kernel's write; the stored version was not
    assert outside(last) == ""
    os.utime(f, (last, last))  # on disk now: no later write; the stored version was one
    assert "after this kernel's last write" in outside(last + 5)


def test_a_big_file_the_kernel_wrote_slowly_on_a_loaded_machine_is_not_someone_elses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    with open(tmp_path / "model.bin", "wb") as fh:  # 300 MB, sparse: the size is what counts
        fh.truncate(300 * 1024 * 1024)
    # opened 30 s before its last byte landed: 12.5 s allowed on a quiet machine, 8x that at
    # load 16 on 2 cores
    evidence = FrameEvidence(writes={"model.bin": CELL}, last={"model.bin": time.time() - 30})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def verdict(load: float) -> str:
        monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
        (out,) = attribute(
            [_change("model.bin")], evidence, {}, workspace=tmp_path, tool_names={}, checkpointed={}
        )
        return out.outside_write

    assert "after this kernel's last write" in verdict(0.3)
    assert verdict(16.0) == ""


def test_judge_chain() -> None:
    cell, ext = _change("p", "cell"), _change("p", "external", basis="saved")
    old = _change("p")  # a ledger from before attribution: the cell's, as it always was
    assert judge_chain([(1, old)], include_external=False).start == 0
    verdict = judge_chain([(1, ext)], include_external=False)
    assert verdict.start is None and "--include-external" in verdict.external
    assert judge_chain([(1, ext)], include_external=True).start == 0
    # an external change before ours is kept: restore to our change's pre-state
    assert judge_chain([(1, ext), (2, cell)], include_external=False) == judge_chain(
        [(1, ext), (2, cell)], include_external=False
    ).__class__(start=1)
    later = judge_chain([(1, cell), (2, ext)], include_external=False)
    assert later.start == 0 and "frame 2" in later.conflict and "--force" in later.conflict
    mixed = _change("p", "cell", outside_write="saved in JupyterLab at 20:00:00")
    assert "--force" in judge_chain([(3, mixed)], include_external=False).conflict


@pytest.mark.parametrize(
    ("saved", "notebook", "expected"),
    [
        ("proj/notes/a.txt", "proj/nb.ipynb", "notes/a.txt"),
        ("proj/nb.ipynb", "proj/nb.ipynb", "nb.ipynb"),
        ("other/a.txt", "proj/nb.ipynb", None),  # outside the workspace
        ("proj/.logician/x", "proj/nb.ipynb", None),
        ("../etc/passwd", "proj/nb.ipynb", None),
        ("proj/a.txt", "elsewhere/nb.ipynb", None),  # the kernel is not in its notebook's dir
    ],
)
def test_map_lab_path(tmp_path: Path, saved: str, notebook: str, expected: str | None) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    got = map_lab_path(saved, workspace=ws, launch_dir=ws, notebook=notebook)
    assert got == expected


def test_map_lab_path_with_the_server_root_and_a_workspace_above_the_notebook(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "proj"
    (ws / "nbs").mkdir(parents=True)
    got = map_lab_path(
        "proj/data/x.csv", workspace=ws, launch_dir=ws / "nbs", notebook="proj/nbs/a.ipynb"
    )
    assert got == "data/x.csv"
    assert (
        map_lab_path(
            "proj/x",
            workspace=ws,
            launch_dir=Path("/nowhere"),
            notebook=None,
            server_root=str(tmp_path),
        )
        == "x"
    )


def test_a_ledger_with_attribution_reopens_to_the_same_frames(tmp_path: Path) -> None:
    """Deterministic replay: the attribution a frame recorded is what a restart folds."""
    ledger = ThreadLedger(tmp_path, "t")
    ledger.append(FrameOpen, frame=1, execution_count=1, cell_id=None, code="x", pre_tree=None)
    ledger.append(
        FileCheckpoint, frame=1, path="c.txt", before=PathState.absent(), call_id="c2", durable=True
    )
    # a kernel killed here: the open frame already says which call captured c.txt
    assert derive_frames(ledger.entries)[1].changes[0].call_id == "c2"
    ledger.append(
        FrameClose,
        frame=1,
        outcome="ok",
        post_tree=None,
        changes=[
            _change("a.txt", "external", basis="saved"),
            _change("b.txt", "tool", call_id="c1", tool="bash"),
        ],
        durable=True,
    )
    first = derive_frames(ledger.entries)
    ledger.close()
    reopened = ThreadLedger(tmp_path, "t")
    again = derive_frames(reopened.entries)
    reopened.close()
    assert first == again
    assert [(c.path, c.by, c.call_id) for c in again[1].changes] == [
        ("a.txt", "external", None),
        ("b.txt", "tool", "c1"),
    ]


def test_an_entry_written_before_attribution_still_loads() -> None:
    old = PathChange.model_validate(
        {"path": "a", "before": {"kind": "absent"}, "after": {"kind": "absent"}}
    )
    assert old.by is None and old.outside_write == "" and old.basis == ""
    entry = FileCheckpoint.model_validate(
        {
            "seq": 1,
            "parent": None,
            "time": "t",
            "frame": 1,
            "path": "a",
            "before": {"kind": "absent"},
        }
    )
    assert entry.call_id is None


def test_under_exact_attribution_a_late_mtime_alone_is_not_someone_elses(tmp_path: Path) -> None:
    """fanotify names every writer: a kernel stalled between opening a file and writing it
    (a loaded machine) is not read as another program's later write; a writer fanotify saw
    is still named, and one that exited unasked still goes by the clock."""
    import time

    from logician_kernel.snapshots.tree_watch import TreeEvidence, TreeWrite

    (tmp_path / "x.txt").write_text("x")
    evidence = FrameEvidence(writes={"x.txt": CELL}, last={"x.txt": time.time() - 5})

    def outside(tree: TreeEvidence) -> str:
        out = _attribute_x(tmp_path, evidence, tree=tree)
        assert out.by == "cell"
        return out.outside_write

    assert outside(TreeEvidence(mode="fanotify")) == ""
    assert "after this kernel's last write" in outside(TreeEvidence(mode="sampling"))
    assert "after this kernel's last write" in outside(TreeEvidence(mode="fanotify", lost=True))
    gone = TreeWrite(pid=4321, command="cp", at=time.time())
    assert "after this kernel's last write" in outside(
        TreeEvidence(mode="fanotify", unknown={"x.txt": gone})
    )
