"""The process-tree watcher with real processes: a write by this process's tree (a child, a
`setsid`'d grandchild re-parented to init, a process holding a file open) is ours; a write by
a process outside it (started before the frame, detached, without our token) is not.

Exercised for each mechanism the machine allows: fanotify where the test runs as root, and
the `/proc` sampling fallback always."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from logician_kernel.snapshots.tree_watch import TreeWatch

DETACHED = """
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
go, target = sys.argv[1], sys.argv[2]
deadline = time.time() + 60
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.01)
with open(target, "w") as f:
    f.write("another program's work")
"""
"""A process that is not ours: detached before the frame opens, with an empty environment;
it writes `target` once `go` exists."""

HOLDER = """
import os, sys, time
f = open(sys.argv[2], "w")
f.write("ours, held open")
f.flush()
deadline = time.time() + 60
while not os.path.exists(sys.argv[1]) and time.time() < deadline:
    time.sleep(0.01)
"""


def wait_for(predicate, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture(params=["fanotify", "sampling"])
def watch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("LOGICIAN_ATTRIBUTION", request.param)
    monkeypatch.delenv("LOGICIAN_PROCESS_TREE", raising=False)
    w = TreeWatch()
    mode = w.choose(tmp_path)
    if mode != request.param:
        w.close()
        pytest.skip(f"{request.param} is not available here: {w.label()}")
    yield w
    w.close()


@pytest.fixture
def other(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    go, target = tmp_path / "go-other", tmp_path / "other.txt"
    subprocess.run([sys.executable, "-c", DETACHED, str(go), str(target)], env={}, check=True)
    yield go, target
    go.touch()


def test_writes_of_the_process_tree_are_ours_and_another_programs_are_not(
    watch: TreeWatch, tmp_path: Path, other: tuple[Path, Path]
) -> None:
    (tmp_path / ".logician").mkdir()
    go_other, other_txt = other
    release = tmp_path / "release"
    watch.begin(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(release), "held.txt"], cwd=tmp_path
    )
    wait_for(lambda: (tmp_path / "held.txt").exists(), "the holder's file")
    subprocess.run(
        ["sh", "-c", "echo x > mine.txt; (setsid sh -c 'echo d > daemon.txt' &)"],
        cwd=tmp_path,
        check=True,
    )
    wait_for(lambda: (tmp_path / "daemon.txt").exists(), "the setsid'd grandchild's file")
    go_other.touch()
    wait_for(lambda: other_txt.exists() and other_txt.read_text(), "the other program's write")
    (tmp_path / ".logician" / "state").write_text("the kernel's own state")
    # the sampler must see the holder at least once: it holds its file until released
    if watch.mode == "sampling":
        wait_for(lambda: "held.txt" in (watch._evidence.own if watch._evidence else {}), "a sample")
    release.touch()
    holder.wait(60)
    evidence = watch.end()

    assert "other.txt" not in evidence.own
    assert ".logician/state" not in evidence.own and "state" not in evidence.own
    assert "held.txt" in evidence.own
    assert "python" in evidence.own["held.txt"].command
    if watch.mode == "fanotify":
        assert watch.label() == "exact (fanotify)"
        assert {"mine.txt", "daemon.txt", "held.txt", "go-other"} <= set(evidence.own)
        # named by its command while it lives; "pid N (exited)" when it was gone first
        assert "other.txt" in evidence.foreign and not evidence.lost
    else:
        assert watch.label().startswith("by process tree sampling")
        assert evidence.foreign == {}


def test_time_only_watches_nothing_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOGICIAN_ATTRIBUTION", "time")
    w = TreeWatch()
    assert w.choose(tmp_path) == "time"
    assert w.label() == "by time only - LOGICIAN_ATTRIBUTION=time"
    w.begin(tmp_path)
    subprocess.run(["sh", "-c", "echo x > mine.txt"], cwd=tmp_path, check=True)
    evidence = w.end()
    w.close()
    assert (evidence.mode, evidence.own, evidence.foreign) == ("time", {}, {})


def test_a_bad_choice_is_named_and_the_best_mechanism_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOGICIAN_ATTRIBUTION", "psychic")
    w = TreeWatch()
    w.choose(tmp_path)
    w.close()
    assert "LOGICIAN_ATTRIBUTION='psychic' is not one of" in w.label()
    assert os.environ["LOGICIAN_PROCESS_TREE"] == w.token  # children will carry it


LATE = """
import os, sys, time
go, release, target = sys.argv[1:4]
deadline = time.time() + 60
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.01)
f = open(target, "w")
f.write("a background job's checkpoint")
f.flush()
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.01)
"""
"""An earlier cell's background job: started before the frame, it writes during it."""


def test_a_process_of_ours_started_before_the_frame_is_an_earlier_cells(
    watch: TreeWatch, tmp_path: Path
) -> None:
    go, release = tmp_path / "go", tmp_path / "release"
    job = subprocess.Popen(
        [sys.executable, "-c", LATE, str(go), str(release), "ckpt.txt"], cwd=tmp_path
    )
    watch.begin(tmp_path)
    go.touch()
    wait_for(lambda: (tmp_path / "ckpt.txt").exists(), "the job's write")
    if watch.mode == "sampling":
        wait_for(
            lambda: "ckpt.txt" in (watch._evidence.earlier if watch._evidence else {}), "a look"
        )
    release.touch()
    job.wait(60)
    evidence = watch.end()
    assert "ckpt.txt" in evidence.earlier and "ckpt.txt" not in evidence.own


def test_a_child_that_forks_writes_and_exits_between_two_reads_is_ours(
    watch: TreeWatch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded machine preempts the reader between its read of the fork log and its read of
    the write events: a short-lived child forked, wrote and exited there, so its write is read
    but, with the fork log read before it, not its fork (an exited writer missing from a fork
    log taken as complete was judged another program's: the tour's `sh -c 'echo scratch >
    ...'` was left alone by its rewind, once in a suite on two workers)."""
    if watch.mode != "fanotify":
        pytest.skip("the fork log is fanotify's")
    fan = watch._fan
    assert fan is not None
    real_read = fan.read
    ran: list[int] = []

    def read_after_a_child_ran():  # type: ignore[no-untyped-def]
        if not ran:  # the child forks, writes and exits just before the events are read
            child = subprocess.run(
                ["sh", "-c", "echo scratch > scratch.txt; echo $$"],
                cwd=tmp_path,
                check=True,
                capture_output=True,
                text=True,
            )
            ran.append(int(child.stdout))
        return real_read()

    monkeypatch.setattr(fan, "read", read_after_a_child_ran)
    watch.begin(tmp_path)
    (tmp_path / "poke.txt").write_text("wakes the reader")  # an event to read
    wait_for(lambda: ran, "the reader's first read")
    evidence = watch.end()
    assert "scratch.txt" in evidence.own, (evidence.own, evidence.foreign, evidence.unknown)
    assert evidence.own["scratch.txt"].pid == ran[0]
