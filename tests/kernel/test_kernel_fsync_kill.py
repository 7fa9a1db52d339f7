"""Durability at the frame boundary: a real kernel killed with SIGKILL after a frame's close is
written to the ledger and before the fsync that makes it durable (test-only hook), wherever
that fsync runs. A kill leaves the page cache intact, so each test also cuts the ledger back
the way a power loss could (to what the last fsync covered, or mid-record), and checks that at
most the closing frame is lost, that earlier frames and their rewinds stay exact, and what the
restart says."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.durable.test_hooks import KILL_BEFORE_FSYNC

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

LEDGER = ".logician/threads/test-thread.jsonl"
# Words of a recovery that would be wrong for a frame whose close reached the disk whole.
FALSE_ALARMS = ("never closed", "died", "torn", "damaged", "cut ", "interrupted", "killed")


def tree(ws: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        dirnames[:] = [d for d in dirnames if d not in (".logician", ".git")]
        for name in filenames:
            full = Path(dirpath, name)
            out[str(full.relative_to(ws))] = hashlib.sha256(full.read_bytes()).hexdigest()
    return out


def _lines(ledger: Path) -> list[tuple[int, dict]]:
    """(offset, record) of every line of the ledger file."""
    out, offset = [], 0
    for line in ledger.read_bytes().splitlines(keepends=True):
        out.append((offset, json.loads(line)))
        offset += len(line)
    return out


def _frames(k: Kernel) -> dict[int, str]:
    """Frame id -> status, from `%logician frames --json`-free text: the first two columns."""
    listing = k.run("%logician frames --all").text
    found = {}
    for line in listing.splitlines()[1:]:
        parts = line.split()
        if parts and parts[0].isdigit():
            found[int(parts[0])] = line
    return found


def _kill_in_frame_close(k: Kernel) -> None:
    # Silent: arming the hook is not a frame of its own.
    k.run(f"import os; os.environ[{KILL_BEFORE_FSYNC!r}] = 'frame_close'", silent=True)
    k.send("open('four.txt', 'w').write('four\\n')\nopen('script.sh', 'a').write('# four\\n')")
    code = k.km.provisioner.process.wait(60)  # type: ignore[union-attr]
    assert code == -9, f"the kernel was expected to die by its SIGKILL hook, exited {code}"
    k.kc.stop_channels()
    k.km.cleanup_resources()


def _three_frames_and_a_rewind(k: Kernel, ws: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Frames 1-3, frame 3 rewound; (the workspace before frame 1, after frame 1)."""
    original = tree(ws)
    assert (
        k.run("open('one.txt', 'w').write('one\\n')\nopen('data.csv', 'a').write('3,4\\n')").status
        == "ok"
    )
    after_one = tree(ws)
    assert k.run("open('two.txt', 'w').write('two\\n')").status == "ok"
    assert k.run("open('one.txt', 'w').write('three\\n')").status == "ok"
    r = k.run("%logician rewind 3")
    assert r.status == "ok", r.text
    assert (ws / "one.txt").read_text() == "one\n"
    return original, after_one


def _earlier_frames_rewind_exactly(
    k: Kernel, ws: Path, original: dict[str, str], after_one: dict[str, str], extra: set[str]
) -> None:
    """Rewinding frame 2, then frame 1, gives back each state exactly (but `extra` paths, which
    a frame the ledger lost changed: those stay as they are)."""
    r = k.run("%logician rewind 2")
    assert r.status == "ok" and "conflict" not in r.text, r.text
    now = tree(ws)
    assert {p: h for p, h in now.items() if p not in extra} == {
        p: h for p, h in after_one.items() if p not in extra
    }
    r = k.run("%logician rewind 1")
    assert r.status == "ok" and "conflict" not in r.text, r.text
    now = tree(ws)
    assert {p: h for p, h in now.items() if p not in extra} == {
        p: h for p, h in original.items() if p not in extra
    }


@pytest.mark.timeout(300)
def test_kill_9_before_the_close_is_fsynced_keeps_the_frame_whole(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        original, after_one = _three_frames_and_a_rewind(k, workspace)
        _kill_in_frame_close(k)
        records = _lines(workspace / LEDGER)
        assert records[-1][1]["kind"] == "frame_close" and records[-1][1]["frame"] == 4
        synced = int((workspace / f"{LEDGER}.synced").read_text())
        assert synced <= records[-1][0]  # the hook really stopped before that record's fsync
        k.start_again()
        first = k.run("print('alive')")
        said = first.stdout + first.stderr
        assert not [w for w in FALSE_ALARMS if w in said], said
        frames = _frames(k)
        assert "rewound" in frames[3] and "killed" not in frames[4], frames
        r = k.run("%logician rewind 4")
        assert r.status == "ok" and "conflict" not in r.text, r.text
        assert not (workspace / "four.txt").exists()
        assert (workspace / "script.sh").read_text() == "#!/bin/sh\necho hi\n"
        _earlier_frames_rewind_exactly(k, workspace, original, after_one, set())
    finally:
        k.shutdown()


@pytest.mark.timeout(300)
def test_a_power_cut_before_that_fsync_loses_only_the_closing_frame(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        original, after_one = _three_frames_and_a_rewind(k, workspace)
        _kill_in_frame_close(k)
        ledger = workspace / LEDGER
        synced = int((workspace / f"{LEDGER}.synced").read_text())
        os.truncate(ledger, synced)  # everything the last fsync did not cover is gone
        kept = [r for _, r in _lines(ledger)]
        assert not [r for r in kept if r.get("frame") == 4]  # the closing frame is what was lost
        assert [r["frame"] for r in kept if r["kind"] == "frame_close"] == [1, 2, 3]
        k.start_again()
        first = k.run("print('alive')")
        said = first.stdout + first.stderr
        # Nothing is known of frame 4, so nothing is claimed about it.
        assert "frame 4" not in said and "never closed" not in said, said
        frames = _frames(k)
        assert "rewound" in frames[3], frames
        # The lost frame's writes are still on disk: nothing rewinds them behind the user's back.
        assert (workspace / "four.txt").read_text() == "four\n"
        _earlier_frames_rewind_exactly(k, workspace, original, after_one, {"four.txt", "script.sh"})
        assert (workspace / "script.sh").read_text() == "#!/bin/sh\necho hi\n# four\n"
    finally:
        k.shutdown()


@pytest.mark.timeout(300)
def test_a_close_torn_by_a_power_cut_is_cut_and_the_frame_recovered_from_its_open(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        original, after_one = _three_frames_and_a_rewind(k, workspace)
        _kill_in_frame_close(k)
        ledger = workspace / LEDGER
        offset, close = _lines(ledger)[-1]
        assert close["kind"] == "frame_close"
        size = ledger.stat().st_size
        os.truncate(ledger, offset + (size - offset) // 2)  # half the close reached the disk
        k.start_again()
        first = k.run("print('alive')")
        said = first.stdout + first.stderr
        assert "cut " in said and "cut bytes kept in" in said, said
        # The frame is recovered from its open record and what is on disk now, and it is said
        # as what it is: the kernel died before the frame's end was recorded.
        assert "frame 4 (In [5]) never closed" in said and "2 change(s)" in said, said
        assert "mid-cell" not in said, said  # the cell had finished
        r = k.run("%logician rewind 4")
        assert r.status == "ok" and "conflict" not in r.text, r.text
        assert not (workspace / "four.txt").exists()
        assert (workspace / "script.sh").read_text() == "#!/bin/sh\necho hi\n"
        _earlier_frames_rewind_exactly(k, workspace, original, after_one, set())
    finally:
        k.shutdown()
