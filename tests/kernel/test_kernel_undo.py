"""Undoable and resumable rewinds through a real kernel: `%logician undo`, `rewind --resume`,
the sidebar's "Undo rewind" over the comm, across restarts and a kill -9 mid-rewind."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel
from test_kernel_approvals import Sidebar, create_subshell
from test_kernel_comm import run, valid

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def tree(ws: Path) -> dict[str, tuple[str, int]]:
    """The whole workspace but our state (and git's): sha256 and full mode of every file, and
    every directory."""
    out: dict[str, tuple[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        dirnames[:] = [d for d in dirnames if d not in (".logician", ".git")]
        for name in dirnames:
            out[str(Path(dirpath, name).relative_to(ws)) + "/"] = ("dir", 0)
        for name in filenames:
            full = Path(dirpath, name)
            out[str(full.relative_to(ws))] = (
                hashlib.sha256(full.read_bytes()).hexdigest(),
                os.lstat(full).st_mode & 0o7777,
            )
    return out


CELL = """
import os, pathlib, shutil
open('data.csv', 'w').write('changed by the cell')
os.remove('script.sh')
os.chmod('secret.txt', 0o644)
pathlib.Path('made/deeper').mkdir(parents=True)
open('made/deeper/out.txt', 'w').write('out')
open('kept_empty/inside.txt', 'w').write('in')
x = 'after'
"""


def test_rewind_then_undo_is_exact_and_undo_twice_says_so(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    (workspace / "secret.txt").write_text("s3cret")
    (workspace / "secret.txt").chmod(0o600)
    (workspace / "kept_empty").mkdir()
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("x = 'before'").status == "ok"
        assert k.run(CELL).status == "ok"
        before_rewind = tree(workspace)
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        assert os.stat(workspace / "secret.txt").st_mode & 0o7777 == 0o600
        assert not (workspace / "made").exists()  # the cell's directories: no debris
        assert (workspace / "kept_empty").is_dir()  # an empty directory it found stays
        assert k.run("print(x)").stdout.strip() == "before"

        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert "Undid the rewind" in r.text and "active again" in r.text
        assert tree(workspace) == before_rewind
        assert k.run("print(x)").stdout.strip() == "after"
        assert "rewound" not in k.run("%logician frames --all").text

        again = k.run("%logician undo")
        assert again.status == "error" and "already undone" in again.text
        assert tree(workspace) == before_rewind
    finally:
        k.shutdown()


def test_undo_after_a_kernel_restart(workspace: Path, kernel_env: dict[str, str]) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("open('a.txt', 'w').write('one')").status == "ok"
        assert (
            k.run("open('a.txt', 'w').write('two'); import os; os.remove('data.csv')").status
            == "ok"
        )
        before_rewind = tree(workspace)
        assert k.run("%logician rewind 1").status == "ok"
        assert not (workspace / "a.txt").exists()
        k.restart()
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert tree(workspace) == before_rewind
        listing = k.run("%logician frames").text
        assert "No frames" not in listing and "rewound" not in listing
    finally:
        k.shutdown()


def test_undo_rewind_from_the_comm(workspace: Path, kernel_env: dict[str, str]) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        sidebar = Sidebar(k, create_subshell(k))
        sidebar.wait_for("hello")
        run(k, sidebar, "open('data.csv', 'w').write('changed')", "cell-a")
        before_rewind = tree(workspace)
        sidebar.send({"type": "frames.rewind", "cell_id": "cell-a", "id": 1})
        sidebar.wait_for("frames.rewind")
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        sidebar.send({"type": "frames.undo", "id": "u"})
        done = sidebar.wait_for("frames.undo")
        assert done["re"] == "u" and done["frames"] == [1] and "Undid" in done["summary"]
        assert tree(workspace) == before_rewind
        (announced,) = [d for d in sidebar.seen if d["type"] == "frames.undone"]
        assert announced["cell_ids"] == ["cell-a"] and announced["undoes"] == done["undoes"]
        sidebar.send({"type": "frames.undo", "id": "twice"})
        error = sidebar.wait_for("error")
        assert error["re"] == "twice" and "already undone" in error["error"]
        valid(sidebar.seen)
    finally:
        k.shutdown()


FILES = 20_000
KILL_AFTER = 9_300


@pytest.mark.timeout(600)
def test_kill9_during_a_20000_file_rewind_then_resume_is_exact(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    src = workspace / "src"
    src.mkdir()
    for i in range(FILES):
        (src / f"f{i:05d}.txt").write_text(f"original {i}\n")
    k = Kernel(workspace, kernel_env)
    try:
        before = tree(workspace)
        r = k.run(
            f"for i in range({FILES}):\n"
            "    open(f'src/f{i:05d}.txt', 'w').write(f'changed {i}\\n')",
            timeout=300,
        )
        assert r.status == "ok", r.text
        # Test-only hook: the kernel SIGKILLs itself after this many restored paths.
        k.run(f"import os; os.environ['LOGICIAN_TEST_REWIND_KILL_AFTER'] = '{KILL_AFTER}'")
        k.send("%logician rewind 1")
        process = k.km.provisioner.process  # type: ignore[union-attr]
        deadline = time.monotonic() + 120
        # Polled, not wait()ed: jupyter_client may reap the process from its own thread.
        while process.returncode is None and process.poll() is None:
            assert time.monotonic() < deadline, "the rewind never reached the kill hook"
            time.sleep(0.2)
        k.kc.stop_channels()
        k.km.cleanup_resources()
        restored = sum(
            1 for i in range(FILES) if (src / f"f{i:05d}.txt").read_text() == f"original {i}\n"
        )
        assert restored == KILL_AFTER  # exactly as far as the hook let it go
        k.start_again()
        first = k.run("print('alive')")
        assert "was interrupted" in first.stderr + first.stdout
        assert "--resume" in first.stderr + first.stdout
        # the rewind control offers the resume (its source says what is left to do)
        control = k.run("print(get_ipython().kernel.parts.link().frames.interrupted())")
        assert "was interrupted" in control.stdout and f"of {FILES} path(s)" in control.stdout
        plain = k.run("%logician rewind --last")
        assert plain.status == "error" and "--resume" in plain.text
        r = k.run("%logician rewind --resume", timeout=300)
        assert r.status == "ok", r.text
        assert "Resumed the interrupted rewind" in r.text
        assert f"({KILL_AFTER} path(s) were already restored)" in r.text
        assert "conflict" not in r.text
        assert tree(workspace) == before
        assert "was interrupted" not in (k.run("%logician status").text)
        nothing = k.run("%logician rewind --resume")
        assert nothing.status == "error" and "no rewind was interrupted" in nothing.text
    finally:
        k.shutdown()
