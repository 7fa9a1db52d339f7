"""A real kernel reopening a thread through its projection checkpoint: frames from before the
checkpoint are listed and rewound as from a full replay, and a damaged checkpoint is said in
the first cell's output with nothing lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = pytest.mark.kernel


def _checkpoint_thread(workspace: Path) -> Path:
    """Write the thread's projection checkpoint from outside (the kernel writes one only past
    1,000 records), with the kernel shut down."""
    from logician_kernel.ledger.checkpoint import checkpoint_path
    from logician_kernel.ledger.thread_ledger import ThreadLedger

    ledger = ThreadLedger(workspace / ".logician" / "threads", "test-thread")
    assert ledger.write_checkpoint()
    ledger.close()
    return checkpoint_path(ledger.path)


def test_a_kernel_reopening_a_checkpointed_thread_rewinds_frames_from_before_it(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        k.run("open('data.csv', 'w').write('first')")
        k.run("open('new.txt', 'w').write('made')")
    finally:
        k.shutdown()
    _checkpoint_thread(workspace)
    k = Kernel(workspace, kernel_env)
    try:
        first = k.run("open('later.txt', 'w').write('after the checkpoint')")
        assert "checkpoint" not in first.text, first.text
        frames = k.run("%logician frames").text
        assert "open('data.csv'" in frames and "open('later.txt'" in frames
        r = k.run("%logician rewind 1")  # frame 1 is covered by the checkpoint
        assert r.status == "ok", r.text
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        assert not (workspace / "new.txt").exists() and not (workspace / "later.txt").exists()
    finally:
        k.shutdown()


@pytest.mark.notices_in_cells  # reads the first cell's notice
def test_a_damaged_checkpoint_is_said_in_the_first_cell_and_nothing_is_lost(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        k.run("open('data.csv', 'w').write('first')")
    finally:
        k.shutdown()
    cp = _checkpoint_thread(workspace)
    cp.write_bytes(cp.read_bytes()[:-20])  # torn
    k = Kernel(workspace, kernel_env)
    try:
        first = k.run("1 + 1")
        assert "test-thread.jsonl.checkpoint is damaged" in first.text, first.text
        assert "replaying every record" in first.text
        assert "open('data.csv'" in k.run("%logician frames").text
        assert k.run("%logician rewind 1").status == "ok"
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
    finally:
        k.shutdown()
