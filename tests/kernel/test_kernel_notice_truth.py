"""The notices a cell prints tell the truth, through a real kernel: an object that cannot be
captured is named by the cell that made or used it, not by every later cell; a cell that
touched no path (a failed `git clone`) names no path as not captured."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = pytest.mark.kernel

GITC = "git -c user.name=t -c user.email=t@example.invalid"


@pytest.mark.notices_in_cells  # counts the notices in the cells they are about
def test_not_captured_is_said_once_per_change_and_never_for_untouched_paths(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        made = k.run("import sqlite3\ncon = sqlite3.connect('shop.db')")
        assert "not captured" in made.text and "con (" in made.text, made.text
        later = [
            k.run("n = 1"),
            k.run("con.execute('CREATE TABLE t (a)')\ncon.commit()"),
            k.run("rows = con.execute('SELECT * FROM t').fetchall()"),
            k.run("n += 1"),
        ]
        for r in later:
            assert r.status == "ok", r.text
            assert "con (" not in r.text, r.text  # con is the same object: said once
        r = k.run(f"!git init -q gitdemo && {GITC} -C gitdemo commit -q --allow-empty -m x")
        assert r.status == "ok", r.text
        for failing in ("!git clone -q gitdemo gitdemo", "!git clone -q nothere gitdemo2"):
            r = k.run(failing)
            assert "fatal" in r.text, r.text
            assert "not captured" not in r.text, r.text
            assert "frame" not in r.text, r.text
        r = k.run("%logician frames")
        for row in r.text.splitlines()[-2:]:  # the failed clones changed nothing
            assert row.split()[4:6] == ["ok", "-"], r.text
    finally:
        k.shutdown()
