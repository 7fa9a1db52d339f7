"""Attribution with the process-tree watcher's evidence, without a kernel: an exact writer
settles who changed a path; a tool server's write belongs to the call it ran in; a change no
one can pin on a writer is *uncertain* - reverted by default, left alone when asked, and a
conflict when an editor's trace lies next to it."""

from __future__ import annotations

import time
from pathlib import Path

from logician_kernel.frames.attribution import attribute, editor_trace
from logician_kernel.frames.chain_verdict import judge_chain
from logician_kernel.snapshots.tree_watch import TreeEvidence, TreeWrite
from logician_kernel.snapshots.write_audit import CELL, FrameEvidence
from logician_kernel.types.path_states import PathChange, PathState


def _change(path: str) -> PathChange:
    return PathChange(
        path=path, before=PathState.absent(), after=PathState.blob("100644", "ab" * 20)
    )


def _attribute(
    tmp_path: Path, names: list[str], evidence: FrameEvidence, tree: TreeEvidence, tools=None
):  # type: ignore[no-untyped-def]
    for name in names:
        (tmp_path / name).write_text(name)
    return {
        c.path: c
        for c in attribute(
            [_change(n) for n in names],
            evidence,
            {},
            workspace=tmp_path,
            tool_names=tools or {},
            checkpointed={},
            tree=tree,
        )
    }


def test_an_exact_writer_decides_even_while_the_cell_ran_a_process(tmp_path: Path) -> None:
    now = time.time()
    tree = TreeEvidence(
        mode="fanotify",
        own={"made.txt": TreeWrite(11, "make all", now), "both.txt": TreeWrite(11, "make", now)},
        foreign={
            "saved.txt": TreeWrite(99, "vim notes", now),
            "both.txt": TreeWrite(99, "vim", now),
        },
    )
    evidence = FrameEvidence(spawned={CELL: "make all"})
    out = _attribute(tmp_path, ["made.txt", "saved.txt", "both.txt", "quiet.txt"], evidence, tree)
    assert out["made.txt"].by == "cell" and not out["made.txt"].uncertain
    assert "`make all` (pid 11), a process this kernel started" in out["made.txt"].basis
    assert out["saved.txt"].by == "external"
    assert "`vim notes` (pid 99), not a process of this kernel" in out["saved.txt"].basis
    assert "also written by `vim` (pid 99)" in out["both.txt"].outside_write  # a conflict
    # no write reported at all (a memory map, another file system): uncertain, and says why
    assert (
        out["quiet.txt"].by == "cell"
        and "no write to it was reported" in out["quiet.txt"].uncertain
    )


def test_a_tool_servers_write_is_its_calls_inside_the_call_and_external_outside(
    tmp_path: Path,
) -> None:
    now = time.time()
    tree = TreeEvidence(
        mode="fanotify",
        own={
            "during.txt": TreeWrite(7, "node server.js", now - 10, server="fs"),
            "between.txt": TreeWrite(7, "node server.js", now - 5, server="fs"),
        },
    )
    evidence = FrameEvidence(windows={"m1": (now - 11, now - 9)})
    out = _attribute(
        tmp_path, ["during.txt", "between.txt"], evidence, tree, {"m1": "fs__write_file"}
    )
    assert (out["during.txt"].by, out["during.txt"].call_id) == ("tool", "m1")
    assert out["during.txt"].tool == "fs__write_file"
    assert out["between.txt"].by == "external"
    assert "tool server fs outside any of its calls" in out["between.txt"].basis


def test_without_a_watcher_an_mcp_calls_window_makes_its_changes_uncertain(
    tmp_path: Path,
) -> None:
    now = time.time()
    evidence = FrameEvidence(windows={"m1": (now - 60, now + 60)})
    out = _attribute(
        tmp_path, ["x.txt"], evidence, TreeEvidence(mode="time"), {"m1": "fs__write_file"}
    )
    assert (out["x.txt"].by, out["x.txt"].call_id) == ("tool", "m1")
    assert "written while `MCP server fs` ran" in out["x.txt"].uncertain
    assert "by time only" in out["x.txt"].uncertain


def test_an_editors_trace_next_to_an_uncertain_change_makes_it_a_conflict(tmp_path: Path) -> None:
    (tmp_path / ".notes.txt.swp").write_text("vim swap")
    evidence = FrameEvidence(spawned={CELL: "make"})
    out = _attribute(tmp_path, ["notes.txt", "other.txt"], evidence, TreeEvidence(mode="sampling"))
    assert out["notes.txt"].uncertain
    assert "an editor's `.notes.txt.swp` lies next to it" in out["notes.txt"].outside_write
    assert out["other.txt"].outside_write == ""
    assert editor_trace(tmp_path, "sub/a.py", {"sub/a.py~"}).startswith("an editor's `a.py~`")
    verdict = judge_chain([(3, out["notes.txt"])], include_external=False)
    assert verdict.conflict and "--force" in verdict.conflict


def test_uncertain_changes_are_reverted_by_default_and_left_alone_when_asked() -> None:
    sure = _change("sure.txt").model_copy(update={"by": "cell"})
    unsure = _change("unsure.txt").model_copy(
        update={"by": "cell", "uncertain": "written while `make` ran; another program may ..."}
    )
    assert judge_chain([(2, unsure)], include_external=False).start == 0
    kept = judge_chain([(2, unsure)], include_external=False, keep_uncertain=True)
    assert kept.start is None
    assert (
        "frame 2: written while `make` ran" in kept.external and "--keep-uncertain" in kept.external
    )
    assert judge_chain([(2, sure)], include_external=False, keep_uncertain=True).start == 0
    # a sure change first, an uncertain one after it: reverting would undo the uncertain one
    mixed = judge_chain([(2, sure), (3, unsure)], include_external=False, keep_uncertain=True)
    assert mixed.conflict


def test_a_background_process_of_an_earlier_cell_is_not_this_frames_writer(
    tmp_path: Path,
) -> None:
    now = time.time()
    tree = TreeEvidence(mode="fanotify", earlier={"ckpt.pt": TreeWrite(5, "python train.py", now)})
    out = _attribute(tmp_path, ["ckpt.pt"], FrameEvidence(spawned={CELL: "ls"}), tree)
    assert out["ckpt.pt"].by == "external" and not out["ckpt.pt"].uncertain
    assert "a process an earlier cell started that is still running" in out["ckpt.pt"].basis
