"""The tests' `alive` (tests/processes.py) finds a test's own processes, not the same command
another suite runs beside it in another directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from processes import alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_the_same_command_in_another_directory_is_not_this_tests(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    (mine / "sub").mkdir()
    started = [subprocess.Popen(["sleep", "71.125"], cwd=where) for where in (mine / "sub", theirs)]
    try:
        assert alive("71.125", mine) == [started[0].pid]  # inside it counts, beside it not
        assert alive("71.125", theirs) == [started[1].pid]
    finally:
        for p in started:
            p.kill()
            p.wait()
    assert alive("71.125", mine) == []  # reaped: gone (a zombie would not count either)
