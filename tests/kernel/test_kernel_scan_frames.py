"""Frames from a stat scan that reads the workspace once per cell (cells run back to back):
what another program saves between two cells is not the second cell's change, and rewinding
that cell leaves it alone."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kernel_harness import Kernel
from test_kernel_approvals import Sidebar, create_subshell

pytestmark = pytest.mark.kernel


def frame_closes(workspace: Path) -> list[dict]:
    text = (workspace / ".logician/threads/test-thread.jsonl").read_text()
    entries = [json.loads(line) for line in text.splitlines()]
    return [e for e in entries if e["kind"] == "frame_close"]


def test_a_save_between_back_to_back_cells_stays_out_of_the_next_cell(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, {**kernel_env, "LOGICIAN_CHECKPOINTS__CHANGE_DETECTION": "scan"})
    try:
        assert k.run("open('data.csv', 'a').write('3,4\\n')").status == "ok"
        # Another program (the Lab server on another host, an editor) saves two files, and
        # the next cell starts right away - within the scan's one-drain window.
        (workspace / "notes.txt").write_text("saved by the editor")
        (workspace / "script.sh").write_text("#!/bin/sh\necho edited\n")
        time.sleep(0.02)  # a file system clock tick: the saves are dated before the cell
        r = k.run("open('out.txt', 'w').write('by the cell'); open('data.csv', 'w').write('x')")
        assert r.status == "ok", r.text
        closes = frame_closes(workspace)
        # The one-drain path was taken: the cell's start was read after it ran.
        assert closes[-1]["start_tree"] is not None, closes[-1]
        assert sorted(c["path"] for c in closes[-1]["changes"]) == ["data.csv", "out.txt"]

        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert not (workspace / "out.txt").exists()
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n3,4\n"
        assert (workspace / "notes.txt").read_text() == "saved by the editor"
        assert (workspace / "script.sh").read_text() == "#!/bin/sh\necho edited\n"

        # After a rewind the next cell reads the workspace before it runs, as always.
        (workspace / "notes.txt").write_text("edited after the rewind")
        r = k.run("open('notes.txt', 'w').write('by a cell')")
        assert r.status == "ok", r.text
        assert frame_closes(workspace)[-1]["start_tree"] is None
        assert k.run("%logician rewind --last").status == "ok"
        assert (workspace / "notes.txt").read_text() == "edited after the rewind"
    finally:
        k.shutdown()


def test_a_lab_save_between_back_to_back_cells_survives_a_rewind_of_a_cell_that_wrote_it(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    """The one-walk path could not tell a save just before the cell from the cell's own write
    of the same file: a save the Lab reports makes the next frame read the workspace first, so
    rewinding the cell brings back the saved content, not what stood before the save."""
    k = Kernel(workspace, {**kernel_env, "LOGICIAN_CHECKPOINTS__CHANGE_DETECTION": "scan"})
    try:
        sidebar = Sidebar(k, create_subshell(k))
        sidebar.wait_for("hello")
        assert k.run("open('notes.txt', 'w').write('by cell 1')").status == "ok"
        (workspace / "notes.txt").write_text("saved in the Lab")
        sidebar.send(
            {
                "type": "document.saved",
                "path": "notes.txt",
                "notebook": "nb.ipynb",
                "time": datetime.now(UTC).isoformat(),
                "id": "s",
            }
        )
        assert sidebar.wait_for("document.saved")["recorded"] is False  # between cells
        r = k.run("open('notes.txt', 'w').write('by cell 2')")
        assert r.status == "ok", r.text
        assert frame_closes(workspace)[-1]["start_tree"] is None  # read before the cell
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (workspace / "notes.txt").read_text() == "saved in the Lab", r.text
    finally:
        k.shutdown()


@pytest.mark.parametrize("idle_looks", ["false", "true"])
def test_a_save_during_a_pause_survives_a_rewind_of_the_cell_that_overwrote_it(
    workspace: Path, kernel_env: dict[str, str], idle_looks: str
) -> None:
    """After a pause the cell reads the workspace before it runs, or (`scan_idle_looks`) the
    idle kernel read it during the pause (idle_look.py) and the cell walks once; either way a
    file another program saved in the pause is that cell's pre-image, and rewinding the cell
    brings the save back."""
    k = Kernel(
        workspace,
        {
            **kernel_env,
            "LOGICIAN_CHECKPOINTS__CHANGE_DETECTION": "scan",
            "LOGICIAN_CHECKPOINTS__SCAN_IDLE_LOOKS": idle_looks,
        },
    )
    try:
        assert k.run("open('notes.txt', 'w').write('by cell 1')").status == "ok"
        (workspace / "notes.txt").write_text("saved during the pause")
        (workspace / "new.txt").write_text("created during the pause")
        time.sleep(1.6)  # longer than the scan's one-drain window; looks ran meanwhile
        r = k.run("open('notes.txt', 'w').write('by cell 2'); open('out.txt', 'w').write('o')")
        assert r.status == "ok", r.text
        assert sorted(c["path"] for c in frame_closes(workspace)[-1]["changes"]) == [
            "notes.txt",
            "out.txt",
        ]
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (workspace / "notes.txt").read_text() == "saved during the pause"
        assert (workspace / "new.txt").read_text() == "created during the pause"
        assert not (workspace / "out.txt").exists()
    finally:
        k.shutdown()
