"""The shipped notebooks run on the Logician kernel and reproduce their stored outputs (nbval)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_harness import clean_env

pytestmark = pytest.mark.kernel
NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")
"""Regexes applied to stored and fresh outputs alike (what one machine words its own way)."""


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.name for n in NOTEBOOKS])
def test_notebook_validates_with_nbval(notebook: Path, tmp_path: Path) -> None:
    # A copy in a fresh directory: its own workspace and thread, so ids and files start clean.
    copy = tmp_path / notebook.name
    shutil.copy(notebook, copy)
    recordings = notebook.parent / "recordings"
    if recordings.is_dir():  # recorded model sessions the replay provider plays
        shutil.copytree(recordings, tmp_path / "recordings")
    # Named as a server names it: an unnamed kernel would say in the first cell which thread
    # it reopened, an output the stored notebook does not have.
    env = clean_env(LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg"), JPY_SESSION_NAME=str(copy))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--nbval",
            "--nbval-kernel-name",
            "logician",
            "--nbval-sanitize-with",
            str(SANITIZE),
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(copy),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
