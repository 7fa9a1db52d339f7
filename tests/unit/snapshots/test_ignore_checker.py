"""The long-lived `git check-ignore` (ignore_checker.py): the same answers as a one-shot
process, new rules after a restart, and a dead or silent process never loses an answer."""

from __future__ import annotations

import gc
import os
import subprocess
import warnings
from pathlib import Path

import pytest

from logician_kernel.snapshots import ignore_checker
from logician_kernel.snapshots.ignore_checker import IgnoreChecker

PATHS = [
    "a.log",
    "keep.log",
    "build/x.o",
    "src/main.py",
    "src/tmp/cache.bin",
    "deep/a/b.log",
    "name with space.log",
    "ünïcode.log",
    "plain.txt",
]


@pytest.fixture
def repo(tmp_path: Path) -> tuple[list[str], Path, dict[str, str]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".gitignore").write_text("*.log\n!keep.log\nbuild/\nsrc/tmp/\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return ["git", f"--git-dir={ws / '.git'}", f"--work-tree={ws}"], ws, env


def one_shot(repo) -> set[str]:
    base, ws, env = repo

    def ask(paths: list[str]) -> set[str]:
        proc = subprocess.run(
            [*base, "check-ignore", "-z", "--stdin"],
            cwd=ws,
            env=env,
            input=b"".join(p.encode() + b"\0" for p in paths),
            capture_output=True,
        )
        return {p.decode() for p in proc.stdout.split(b"\0") if p}

    return ask  # type: ignore[return-value]


def test_answers_match_a_one_shot_check_ignore_question_after_question(repo) -> None:
    ask = one_shot(repo)
    checker = IgnoreChecker(repo[0], repo[1], repo[2], lambda paths: pytest.fail("fell back"))
    try:
        expected = ask(PATHS)
        assert expected == {
            "a.log",
            "build/x.o",
            "src/tmp/cache.bin",
            "deep/a/b.log",
            "name with space.log",
            "ünïcode.log",
        }
        for path in PATHS:  # one at a time, as frames ask, then all at once
            assert checker.ignored([path]) == expected & {path}
        assert checker.ignored(PATHS) == expected
    finally:
        checker.close()


def test_new_rules_count_after_a_restart(repo) -> None:
    checker = IgnoreChecker(repo[0], repo[1], repo[2], one_shot(repo))
    try:
        assert checker.ignored(["plain.txt"]) == set()
        (repo[1] / ".gitignore").write_text("*.txt\n")
        checker.restart()
        assert checker.ignored(["plain.txt", "a.log"]) == {"plain.txt"}
    finally:
        checker.close()


def test_a_dead_or_silent_process_falls_back_to_a_one_shot_answer(repo, monkeypatch) -> None:
    asked: list[list[str]] = []

    def fallback(paths: list[str]) -> set[str]:
        asked.append(paths)
        return one_shot(repo)(paths)

    checker = IgnoreChecker(repo[0], repo[1], repo[2], fallback)
    try:
        assert checker.ignored(["a.log"]) == {"a.log"}
        assert checker._proc is not None
        checker._proc.kill()
        checker._proc.wait()
        assert checker.ignored(["b.log"]) == {"b.log"}  # the answer still comes
        assert asked == [["b.log"]]
        # A process that never answers (it does not even read the question).
        checker._command = ["sleep", "30"]
        monkeypatch.setattr(ignore_checker, "TIMEOUT", 0.2)
        assert checker.ignored(["c.log"]) == {"c.log"}
        assert asked[-1] == ["c.log"] and checker._proc is None  # killed, not left behind
        assert checker.ignored(["x"] * (ignore_checker.BATCH_LIMIT + 1)) == set()
        assert len(asked[-1]) == ignore_checker.BATCH_LIMIT + 1  # big batches: one-shot
    finally:
        checker.close()


def test_a_checker_never_closed_ends_its_process_when_collected_without_a_warning(repo) -> None:
    """A checker dropped in a reference cycle without `close` (its snapshotter never closed):
    the cycle collector ends `git check-ignore` and closes its pipes, so no ResourceWarning
    surfaces in whatever code the collection interrupts (a test failed on it at load 20)."""
    base, ws, env = repo
    checker = IgnoreChecker(base, ws, env, one_shot(repo))
    assert checker.ignored(["a.log", "plain.txt"]) == {"a.log"}
    proc = checker._proc
    assert proc is not None and proc.poll() is None
    checker.cycle = checker  # type: ignore[attr-defined]
    del checker
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert proc.returncode is not None  # ended and waited for
    assert proc.stdin is not None and proc.stdin.closed
    assert proc.stdout is not None and proc.stdout.closed
