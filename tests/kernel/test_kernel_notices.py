"""Logician's notices stay out of a plain cell's outputs: a cell's iopub messages are the ones
ipykernel's own `python3` kernel sends, and the notices reach the `logician` comm, the kernel
log and `%logician notices` instead (`ui.notices = "cell"` puts them back in the cells)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kernel_harness import CellResult, Kernel, clean_env, make_kernel_env
from test_kernel_approvals import Sidebar
from test_kernel_comm import run, valid

pytestmark = pytest.mark.kernel

UNSTORABLE = (
    "import multiprocessing\n"
    "gen = (i * i for i in range(3))\n"
    "pool = multiprocessing.Pool(1)\n"
    "fh = open('out.txt', 'w')\n"
    "print('made', next(gen))\n"
)
"""A cell whose variables cannot be captured (a generator, a pool, an open file)."""


def outputs(r: CellResult) -> list[tuple[str, Any]]:
    """What a frontend records of a cell: its iopub messages (adjacent stream pieces of one
    stream joined, as a notebook stores them) and its reply's content."""
    seen: list[tuple[str, Any]] = []
    for m in r.messages:
        kind, content = m["msg_type"], dict(m["content"])
        if kind == "status":
            continue
        if kind == "stream" and seen and seen[-1][0] == "stream":
            last = seen[-1][1]
            if last["name"] == content["name"]:
                last["text"] += content["text"]
                continue
        seen.append((kind, content))
    reply = {k: v for k, v in r.reply.items() if k != "started"}
    return [*seen, ("execute_reply", reply)]


def headless_env(tmp_path: Path) -> dict[str, str]:
    """A headless runner's kernel: no notebook name, no thread named (nbclient, papermill)."""
    return clean_env(LOGICIAN_CONFIG_DIR=str(tmp_path / "user-config"))


def test_plain_cells_match_ipykernel_and_notices_wait_for_the_user(tmp_path: Path) -> None:
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    env = headless_env(tmp_path)
    theirs = Kernel(theirs_dir, env, kernel_name="python3")
    try:
        expected = [outputs(theirs.run(UNSTORABLE)), outputs(theirs.run("1 + 1"))]
        theirs.run("pool.terminate()")
    finally:
        theirs.shutdown()
    ours = Kernel(ours_dir, env)
    try:
        # The first cell of an unnamed kernel (where a thread is started and said) and a cell
        # of objects that cannot be stored: nothing of Logician's in either.
        assert [outputs(ours.run(UNSTORABLE)), outputs(ours.run("1 + 1"))] == expected
        ours.run("pool.terminate()")

        status = ours.run("%logician status").text
        assert "notices" in status and "unread" in status and "0 unread" not in status
        listed = ours.run("%logician notices").text
        assert "no notebook name reached this kernel" in listed
        assert "frame 1" in listed and "variable(s) not captured" in listed and "pool" in listed
        assert "now marked read" in listed
        assert "0 unread" in ours.run("%logician status").text
        assert "No unread notices" in ours.run("%logician notices").text
        every = ours.run("%logician notices --all").text
        assert "no notebook name reached this kernel" in every and "pool" in every
        assert (ours_dir / ".logician").is_dir()  # the frames were recorded all the same
    finally:
        ours.shutdown()


def test_the_comm_receives_notices_and_marks_them_read(workspace: Path, tmp_path: Path) -> None:
    k = Kernel(workspace, make_kernel_env(tmp_path))
    try:
        sidebar = Sidebar(k)
        hello = sidebar.wait_for("hello")
        assert hello["status"]["unread_notices"] == len(hello.get("notices", []))
        sent = run(k, sidebar, "gen = (i for i in range(3))", "cell-g")
        (said,) = [d for d in sent if d["type"] == "notice"]  # on the comm, not in the cell
        notice = said["notice"]
        assert "not captured" in notice["text"] and "gen" in notice["text"]
        assert notice["cell_id"] == "cell-g" and notice["frame"] == 1
        assert notice["read"] is False and not notice["critical"] and said["unread"] >= 1

        sidebar.send({"type": "notices.list", "id": "n"})
        rows = sidebar.wait_for("notices")["rows"]
        assert rows[0]["id"] == notice["id"]  # newest first

        sidebar.send({"type": "notices.read", "up_to": notice["id"], "id": "r"})
        assert sidebar.wait_for("notices.read")["unread"] == 0
        valid(sidebar.seen)
        assert "0 unread" in k.run("%logician status").text
    finally:
        k.shutdown()


def test_ui_notices_cell_puts_them_back_in_the_cell(workspace: Path, tmp_path: Path) -> None:
    k = Kernel(workspace, make_kernel_env(tmp_path))
    try:
        r = k.run("%logician config set ui.notices cell")
        assert r.status == "ok", r.text
        r = k.run("gen = (i for i in range(3))")
        assert "variable(s) not captured" in r.stderr and "gen" in r.stderr
        k.run("%logician config set ui.notices off")
        r = k.run("gen2 = (i for i in range(3))")
        assert r.stderr == ""
        assert "gen2" in k.run("%logician notices").text  # kept, shown when asked
    finally:
        k.shutdown()
