"""What a cell costs the kernel's side: a cell that changes no file starts no git process and
does no fsync (inotify says nothing changed), while a cell that changes one still does both -
its frame is durable when its reply arrives.

Counted from outside the kernel's code: a `git` on PATH that logs each run before running the
real git, and a `sitecustomize` that counts `os.fsync` / `os.fdatasync` calls of the kernel
process into a file after every call.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = pytest.mark.kernel

SITECUSTOMIZE = """
import os
_log = os.environ.get("FSYNC_COUNT_FILE")
if _log:
    _real = {"fsync": os.fsync, "fdatasync": getattr(os, "fdatasync", None)}

    def _counting(name):
        def call(fd):
            with open(_log, "a") as fh:
                fh.write(name + "\\n")
            return _real[name](fd)
        return call

    os.fsync = _counting("fsync")
    if _real["fdatasync"] is not None:
        os.fdatasync = _counting("fdatasync")
"""


@pytest.fixture
def counted(tmp_path: Path, workspace: Path, kernel_env: dict[str, str]):
    real_git = shutil.which("git")
    assert real_git
    shims = tmp_path / "shims"
    shims.mkdir()
    git_log, fsync_log = tmp_path / "git.log", tmp_path / "fsync.log"
    shim = shims / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> {git_log}\nexec {real_git} "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    (shims / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(
        kernel_env,
        PATH=f"{shims}{os.pathsep}{kernel_env['PATH']}",
        PYTHONPATH=str(shims),
        FSYNC_COUNT_FILE=str(fsync_log),
        LOGICIAN_CHECKPOINTS__CHANGE_DETECTION="inotify",
    )
    k = Kernel(workspace, env)
    try:
        yield k, git_log, fsync_log
    finally:
        k.shutdown()


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _settled(k: Kernel) -> None:
    """The first full snapshot (taken in the background at start) has finished."""
    k.run("x = 0")
    k.run("open('warm.txt', 'w').write('w')")  # waits for any background copy of the last frame


def test_a_cell_that_changes_no_file_costs_no_git_process_and_no_fsync(counted) -> None:
    k, git_log, fsync_log = counted
    _settled(k)
    assert _lines(git_log), "the shim saw no git at all: it is not on the kernel's PATH"
    assert _lines(fsync_log), "no fsync counted at all: the counter is not in the kernel"
    time.sleep(0.5)  # inotify events of the last cell's own writes are drained before the count
    gits, fsyncs = len(_lines(git_log)), len(_lines(fsync_log))
    for n in range(5):
        r = k.run(f"y = {n} * 2\nprint(y)")
        assert r.status == "ok" and r.stdout == f"{n * 2}\n"
    assert _lines(git_log)[gits:] == []
    assert _lines(fsync_log)[fsyncs:] == []
    frames = k.run("%logician frames").text
    assert all(f"y = {n} * 2" in frames for n in range(5))  # they are frames all the same

    # A cell that writes a file pays for durability, and still no git process: its tree and
    # its diff are built in the kernel (git_trees.py)...
    r = k.run("open('data.csv', 'w').write('changed')")
    assert r.status == "ok"
    assert _lines(git_log)[gits:] == []
    assert len(_lines(fsync_log)) > fsyncs
    # ...and its frame is rewindable.
    r = k.run("%logician rewind --last")
    assert r.status == "ok", r.text
    assert (k.cwd / "data.csv").read_text() == "a,b\n1,2\n"
