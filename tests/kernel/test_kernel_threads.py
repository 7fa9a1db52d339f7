"""One timeline per notebook in every frontend, through a real kernel: an unnamed kernel
(plain jupyter_client, `jupyter console`) reopens the workspace's thread after a restart,
VS Code's notebook name is followed before the first frame, and `%logician threads` /
`thread use` list and switch, with the sidebar following over the comm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kernel_harness import Kernel, make_kernel_env
from test_kernel_approvals import Sidebar

from logician_kernel.workspace.threads import notebook_thread_id

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


@pytest.fixture
def unnamed_env(tmp_path: Path) -> dict[str, str]:
    """No JPY_SESSION_NAME and no LOGICIAN_THREAD: what VS Code, `jupyter console` and a plain
    jupyter_client start a kernel with."""
    env = make_kernel_env(tmp_path)
    del env["LOGICIAN_THREAD"]
    return env


def test_without_a_notebook_name_a_restart_shows_the_earlier_frames(
    workspace: Path, unnamed_env: dict[str, str]
) -> None:
    k = Kernel(workspace, unnamed_env)
    try:
        first = k.run("open('one.txt', 'w').write('1')")
        assert "this workspace had no thread yet" in first.stderr
        k.restart()
        r = k.run("print('again')")
        assert "reopened this workspace's most recent thread 'workspace'" in r.stderr
        assert "1 frame(s)" in r.stderr and "`%logician thread use ID` switches" in r.stderr
        listing = k.run("%logician frames").text
        assert "No frames yet" not in listing and "1 created" in listing, listing
        r = k.run("%logician rewind 1")
        assert r.status == "ok", r.text
        assert not (workspace / "one.txt").exists()
    finally:
        k.shutdown()


def test_vs_codes_notebook_name_is_followed_before_the_first_frame(
    workspace: Path, unnamed_env: dict[str, str]
) -> None:
    notebook = str(workspace / "analysis.ipynb")
    expected = notebook_thread_id(notebook)
    k = Kernel(workspace, unnamed_env)
    try:
        # What VS Code does after the kernel starts: a silent execution binds the name.
        k.run(f"__vsc_ipynb_file__ = {notebook!r}", silent=True)
        r = k.run("open('vs.txt', 'w').write('v')")
        assert f"VS Code names this notebook {notebook}" in r.stderr
        assert "no notebook name reached this kernel" not in r.stderr  # superseded, not said
        # following the notebook's name moved the workspace, and loaded nothing of the agent
        agent = k.run("import sys; print('logician_kernel.agent.session' in sys.modules)")
        assert agent.stdout.strip() == "False", agent.text
        assert expected in k.run("%logician thread").text
        ledger = workspace / ".logician" / "threads" / f"{expected}.jsonl"
        kinds = [json.loads(line)["kind"] for line in ledger.read_text().splitlines()]
        assert "frame_open" in kinds and "frame_close" in kinds  # the frame is the notebook's
        k.restart()
        k.run(f"__vsc_ipynb_file__ = {notebook!r}", silent=True)
        k.run("print('back')")
        assert "vs.txt" in k.run("%logician diff 1").text
        rows = k.run("%logician threads").text
        assert expected in rows and "analysis.ipynb" in rows
    finally:
        k.shutdown()


def test_threads_lists_and_thread_use_switches_and_the_sidebar_follows(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    other_env = {**kernel_env, "LOGICIAN_THREAD": "other-notebook"}
    k = Kernel(workspace, other_env)
    try:
        k.run("open('other.txt', 'w').write('o')")
    finally:
        k.shutdown()
    k = Kernel(workspace, kernel_env)
    try:
        k.run("open('mine.txt', 'w').write('m')")
        k.run("open('mine2.txt', 'w').write('m')")
        rows = k.run("%logician threads").text
        assert "test-thread" in rows and "other-notebook" in rows
        assert "* test-thread" in " ".join(rows.split())
        sidebar = Sidebar(k)
        hello = sidebar.wait_for("hello")
        assert hello["status"]["thread"] == "test-thread"

        bad = k.run("%logician thread use other-notebok")
        assert bad.status == "error" and "did you mean 'other-notebook'" in bad.text

        r = k.run("%logician thread use other-notebook")
        assert r.status == "ok", r.text
        assert "Now on thread 'other-notebook': 1 frame(s)" in r.text
        told = {
            m["content"]["data"]["type"]: m["content"]["data"]
            for m in r.messages
            if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == sidebar.comm_id
        }
        assert told["status"]["thread"] == "other-notebook" and told["status"]["frames"] == 1
        assert told["frames.changed"]["total"] == 1
        sidebar.send({"type": "frames.list", "offset": 0, "limit": 10, "id": "l"})
        page = sidebar.wait_for("frames")
        assert [row["code"] for row in page["rows"]] == ["open('other.txt', 'w').write('o')"]

        r = k.run("%logician rewind --last")
        assert r.status == "ok" and not (workspace / "other.txt").exists()
        assert (workspace / "mine2.txt").exists()  # the other thread's frames are untouched
        assert "2 frame(s)" in k.run("%logician thread use test-thread").text
        assert len(k.run("%logician frames").text.splitlines()) == 3  # header + 2 frames
    finally:
        k.shutdown()
