"""Capture heals itself (issue 28): after the ledger could not be written, the next cell tries
again from a clean state and says once what the gap cost; a frame left running by the failure
is closed as `failed` with its reason. Real kernel, faults injected with the test-only
`LOGICIAN_TEST_FAULT` hook (the nth durable write fails with ENOSPC)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.durable.test_hooks import FAULT

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def _arm(k: Kernel, spec: str | None) -> None:
    # Silent: arming the fault is not a cell of its own (no frame, no prompt number).
    code = (
        f"import os; os.environ[{FAULT!r}] = {spec!r}"
        if spec
        else f"import os; os.environ.pop({FAULT!r}, None)"
    )
    assert k.run(code, silent=True).status == "ok"


def _frames(k: Kernel) -> dict[int, str]:
    listing = k.run("%logician frames --all").text
    return {
        int(line.split()[0]): line
        for line in listing.splitlines()[1:]
        if line.split()[:1] and line.split()[0].isdigit()
    }


@pytest.mark.timeout(240)
def test_cells_become_frames_again_once_the_ledger_can_be_written(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("open('a.txt', 'w').write('1')").status == "ok"  # In [1], frame 1
        _arm(k, "write:1+:ENOSPC")  # the disk stays full
        for n in (2, 3):
            r = k.run(f"open('a.txt', 'w').write('{n}')")
            assert r.status == "ok", r.text  # the cell itself runs
            # Said in every such cell, never only the first.
            assert "this cell is not a frame" in r.stderr, (n, r.text)
            assert "No space left on device" in r.stderr, r.text
        _arm(k, None)
        r = k.run("open('a.txt', 'w').write('4')")
        said = r.stderr
        assert "frames resumed at In [4]" in said and "In [2]\u2013[3] were not recorded" in said, (
            said
        )
        again = k.run("open('a.txt', 'w').write('5')")
        assert "frames resumed" not in again.stderr, again.text  # said once
        frames = _frames(k)
        assert sorted(frames) == [1, 2, 3], frames  # In [4] and In [5] are frames 2 and 3
        assert "In [4]" in frames[2] and "In [5]" in frames[3], frames
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and (workspace / "a.txt").read_text() == "4", r.text
        # A restart reads the healed ledger whole: nothing damaged, nothing lost.
        k.restart()
        check = k.run("%logician ledger").text
        assert "no damage" in check or "clean" in check, check
        assert sorted(_frames(k)) == [1, 2, 3]
    finally:
        k.shutdown()


@pytest.mark.timeout(240)
def test_a_frame_whose_close_failed_is_closed_as_failed_with_its_reason(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        # The frame's opening record is written (write 1); every later write fails.
        _arm(k, "write:2+:EIO")
        r = k.run("open('b.txt', 'w').write('written while the disk failed')")
        assert "frame could not be recorded" in r.stderr, r.text
        assert "Input/output error" in r.stderr, r.text
        _arm(k, None)
        r = k.run("print('next')")
        said = r.stderr
        assert "frames resumed at In [2]" in said, said
        assert "frame(s) 1 left running closed as 'failed'" in said, said
        frames = _frames(k)
        assert "failed" in frames[1] and "running" not in frames[1], frames
        # Its changes are known (found since it opened): a rewind takes them back.
        r = k.run("%logician rewind 1")
        assert r.status == "ok", r.text
        assert not (workspace / "b.txt").exists()
        k.restart()
        assert "failed" in _frames(k)[1]
    finally:
        k.shutdown()
