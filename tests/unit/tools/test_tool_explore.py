"""`ls`, `glob` and `grep`: sorted, bounded, skipping .git/, .logician/ and binary files."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tree(ws: Path) -> Path:
    for rel, text in {
        "README.md": "# Title\nsee main()\n",
        "src/app.py": "def main():\n    return 1\n\ndef helper():\n    pass\n",
        "src/util.py": "import os\nMAIN = 'x'\n",
        "src/sub/deep.py": "def main_deep(): ...\n",
        "notes.txt": "main thing\n",
        ".git/config": "def main(): git internals\n",
        ".logician/audit.jsonl": "def main(): kernel state\n",
    }.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / "img.png").write_bytes(b"\x89PNG\x00def main()")
    (ws / "empty").mkdir()
    return ws


def test_ls_lists_sorted_entries_with_dir_suffix(call, tree: Path):
    result = call("ls")
    assert result.content.splitlines() == [
        ".git/",
        ".logician/",
        "README.md",
        "empty/",
        "img.png",
        "notes.txt",
        "src/",
    ]
    assert result.display == "ls .: 7 entries"
    assert call("ls", path="src").content == "app.py\nsub/\nutil.py"
    assert call("ls", path="empty").content == "(empty is empty)"


def test_ls_errors_and_bound(call, tree: Path):
    assert call("ls", path="nope").content == "ls: no such directory: nope"
    assert call("ls", path="notes.txt").content == "ls: notes.txt is not a directory"
    many = tree / "many"
    many.mkdir()
    for i in range(1005):
        (many / f"f{i:04}").touch()
    result = call("ls", path="many")
    assert len(result.content.splitlines()) == 1001
    assert result.content.endswith("[... and 5 more entries not shown]")


def test_glob_matches_sorted_and_skips_internal_dirs(call, tree: Path):
    result = call("glob", pattern="**/*.py")
    assert result.content.splitlines() == ["src/app.py", "src/sub/deep.py", "src/util.py"]
    assert call("glob", pattern="*").content.splitlines() == [
        "README.md",
        "empty/",
        "img.png",
        "notes.txt",
        "src/",
    ]
    assert call("glob", pattern="*.py", path="src").content == "src/app.py\nsrc/util.py"
    assert call("glob", pattern="**/*.jsonl").content == "No paths match **/*.jsonl"


def test_glob_errors_and_bound(call, tree: Path):
    assert call("glob", pattern="a**b/x").content.startswith("glob: invalid pattern a**b/x")
    assert call("glob", pattern=" ").content == "glob: the pattern is empty"
    many = tree / "many"
    many.mkdir()
    for i in range(1003):
        (many / f"f{i:04}.dat").touch()
    result = call("glob", pattern="many/*.dat")
    lines = result.content.splitlines()
    assert lines[0] == "many/f0000.dat" and len(lines) == 1001
    assert lines[-1] == "[... 3 more matches not shown; narrow the pattern]"


def test_grep_reports_path_line_text(call, tree: Path):
    result = call("grep", pattern=r"def main")
    assert result.content.splitlines() == [
        "src/app.py:1: def main():",
        "src/sub/deep.py:1: def main_deep(): ...",
    ]
    assert result.display == "grep: 2 matches in 2 files"
    assert (
        call("grep", pattern="main", path="src/util.py").content
        == "No matches for 'main' in src/util.py"
    )
    assert call("grep", pattern="main", path="src/util.py", ignore_case=True).content == (
        "src/util.py:2: MAIN = 'x'"
    )
    assert call("grep", pattern="main", glob="*.txt").content == "notes.txt:1: main thing"
    assert (
        call("grep", pattern="def", glob="src/sub/*").content
        == "src/sub/deep.py:1: def main_deep(): ..."
    )


def test_grep_bounds_matches_and_refuses_bad_regex(call, tree: Path):
    (tree / "log.txt").write_text("".join(f"hit {i}\n" for i in range(500)))
    result = call("grep", pattern="^hit", max_matches=10)
    lines = result.content.splitlines()
    assert lines[:10] == [f"log.txt:{i + 1}: hit {i}" for i in range(10)]
    assert lines[10].startswith("[stopped at 10 matches")
    assert len(lines) == 11
    exact = call("grep", pattern="^hit 49", max_matches=11)  # 11 matches exist: not "stopped"
    assert "stopped" not in exact.content and len(exact.content.splitlines()) == 11
    bad = call("grep", pattern="def (")
    assert bad.is_error and bad.content.startswith("grep: invalid regular expression 'def ('")
    assert call("grep", pattern="x", path="nope").content == "grep: no such file or directory: nope"
