"""A dry run, a rewind and its undo of thousands of paths read as counts per directory and the
first 50 paths, through a real kernel: for a cell that made 2,000 files and changed two more
each prints tens of lines, not 2,000, and every path is counted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

MANY = (
    "import os\nos.makedirs('data/parts')\n"
    "for k in range(2000):\n"
    "    open(f'data/parts/p{k:04d}.csv', 'w').write(f'{k}\\n')\n"
    "open('notes.txt', 'w').write('second\\n')\n"
    "open('src/a.py', 'w').write('a = 2\\n')"
)


def test_a_dry_run_of_thousands_of_files_is_counted_by_directory(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    (workspace / "notes.txt").write_text("first\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("a = 1\n")
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("x = 1").status == "ok"
        r = k.run(MANY)
        assert r.status == "ok", r.text
        dry = k.run("%logician rewind --last --dry-run")
        assert dry.status == "ok", dry.text
        lines = dry.text.strip().splitlines()
        assert len(lines) < 70, dry.text[:2000]
        assert "2,002 files: 2,000 would be deleted, 2 restored; by directory:" in dry.text
        assert "data/parts/ — 2,000 files created → delete" in dry.text, dry.text[:2000]
        assert "(top level)/ — 1 file changed → restore" in dry.text
        assert "src/ — 1 file changed → restore" in dry.text
        shown = [ln for ln in lines if ln.strip().startswith("would ") and "variable" not in ln]
        assert len(shown) == 50, dry.text
        assert "… and 1,952 more (counted above)" in dry.text
        # A dry run changes nothing: the files are all still there.
        assert len(list((workspace / "data" / "parts").iterdir())) == 2000
        assert (workspace / "notes.txt").read_text() == "second\n"

        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert not (workspace / "data" / "parts").exists()
        assert (workspace / "notes.txt").read_text() == "first\n"
        assert len(r.text.strip().splitlines()) < 70, r.text[:2000]
        assert "2002 deleted, 2 restored" in r.text.splitlines()[0], r.text[:500]
        assert "2,002 other files, by directory:" in r.text
        assert "data/parts/ — 2,000 deleted" in r.text, r.text[:2000]
        assert "src/ — 1 restored" in r.text
        # the directories it removed have their own lines, with why
        assert "deleted   data/parts/ (an empty directory the rewound frames made)" in r.text

        u = k.run("%logician undo")
        assert u.status == "ok", u.text
        assert len(list((workspace / "data" / "parts").iterdir())) == 2000
        assert len(u.text.strip().splitlines()) < 70, u.text[:2000]
        assert "data/parts/ — 2,000 recreated" in u.text, u.text[:2000]
    finally:
        k.shutdown()
