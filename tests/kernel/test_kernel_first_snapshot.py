"""Cells run while the first full snapshot of a workspace that is not a git repository is
still being taken (held there by a test-only hook, so nothing here races a clock): a cell that
touches no file replies at once; a cell that writes waits at its first write, says so, and is
then rewound exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel, make_kernel_env

from logician_kernel.durable.test_hooks import HOLD_FULL_SCAN
from logician_kernel.snapshots.first_snapshot_wait import SPAWN_WAIT_NOTICE, WAIT_NOTICE

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

CHECKPOINTS = "get_ipython().kernel.logician.checkpoints"


def _plain_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "plain"
    (ws / "src").mkdir(parents=True)
    (ws / "data.csv").write_text("a,b\n1,2\n")
    for i in range(300):  # enough files for the packed first snapshot
        (ws / "src" / f"m{i:03d}.py").write_text(f"VALUE = {i}\n")
    return ws


@pytest.mark.timeout(300)
def test_a_cell_touching_no_file_never_waits_for_the_first_snapshot_and_a_writer_rewinds_exactly(
    tmp_path: Path,
) -> None:
    ws = _plain_workspace(tmp_path)
    release = tmp_path / "release-the-first-snapshot"
    env = {**make_kernel_env(tmp_path), HOLD_FULL_SCAN: str(release)}
    k = Kernel(ws, env)
    try:
        quiet = k.run(f"x = 6 * 7\nprint(x, {CHECKPOINTS}.warming_up)")
        assert quiet.status == "ok", quiet.text
        # It replied while the first snapshot was still held: it never waited for it.
        assert "42 True" in quiet.stdout, quiet.text
        assert "first snapshot" not in quiet.stderr, quiet.stderr
        again = k.run(f"print(sum(range(10)), {CHECKPOINTS}.warming_up)")
        assert "45 True" in again.stdout, again.text

        msg = k.send(
            "open('data.csv', 'w').write('rewritten\\n')\n"
            "open('src/new.py', 'w').write('NEW = 1\\n')"
        )
        k.wait_for_output(WAIT_NOTICE)
        # The write is held at the gate: nothing changed yet.
        assert (ws / "data.csv").read_text() == "a,b\n1,2\n"
        assert not (ws / "src" / "new.py").exists()
        release.touch()
        wrote = k.collect(msg, timeout=120)
        assert wrote.status == "ok", wrote.text
        assert "not captured" not in wrote.stderr, wrote.stderr  # (its notice was read above)
        assert (ws / "data.csv").read_text() == "rewritten\n"

        listing = k.run("%logician frames").text
        rows = {line.split()[0]: line for line in listing.splitlines()[1:] if line.strip()}
        assert "ok       -" in rows["1"] and "ok       -" in rows["2"], listing  # nothing changed
        assert "1 created, 1 modified" in rows["3"], listing
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and "conflict" not in r.text, r.text
        assert (ws / "data.csv").read_text() == "a,b\n1,2\n"
        assert not (ws / "src" / "new.py").exists()
        assert (ws / "src" / "m007.py").read_text() == "VALUE = 7\n"
        # After the first snapshot, cells neither wait nor say anything about it.
        later = k.run("open('later.txt', 'w').write('l')")
        assert "first snapshot" not in later.stderr, later.stderr
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and not (ws / "later.txt").exists(), r.text
    finally:
        k.shutdown()


@pytest.mark.timeout(300)
def test_a_subprocess_started_during_the_first_snapshot_waits_too(tmp_path: Path) -> None:
    ws = _plain_workspace(tmp_path)
    release = tmp_path / "release"
    k = Kernel(ws, {**make_kernel_env(tmp_path), HOLD_FULL_SCAN: str(release)})
    try:
        msg = k.send(
            "import subprocess\nsubprocess.run(['sh', '-c', 'echo shell > data.csv'], check=True)"
        )
        k.wait_for_output("waits for it")
        assert (ws / "data.csv").read_text() == "a,b\n1,2\n"  # the process was not started yet
        release.touch()
        assert k.collect(msg, timeout=120).status == "ok"
        assert (ws / "data.csv").read_text() == "shell\n"
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and "conflict" not in r.text, r.text
        assert (ws / "data.csv").read_text() == "a,b\n1,2\n"
    finally:
        k.shutdown()


@pytest.mark.timeout(300)
def test_the_first_snapshot_notice_says_what_the_cell_does_and_only_while_it_races(
    tmp_path: Path,
) -> None:
    """Before: a read-only `!ls` was told it "writes to the workspace", and so was every
    `%%writefile` of a session's first cells."""
    ws = _plain_workspace(tmp_path)
    release = tmp_path / "release"
    k = Kernel(ws, {**make_kernel_env(tmp_path), HOLD_FULL_SCAN: str(release)})
    try:
        msg = k.send("!ls src | head -1")
        k.wait_for_output(SPAWN_WAIT_NOTICE)
        release.touch()
        listed = k.collect(msg, timeout=120)
        assert listed.status == "ok" and "m000.py" in listed.text, listed.text
        assert WAIT_NOTICE not in listed.text  # a program started; it was not said to write
        wrote = k.run("%%writefile notes.txt\nwritten by a cell magic\n")
        assert wrote.status == "ok", wrote.text
        assert "first snapshot" not in wrote.text, wrote.text  # nothing raced any more
        listing = k.run("%logician frames").text
        assert "1 created" in listing.splitlines()[-1], listing
        assert k.run("%logician rewind --last").status == "ok"
        assert not (ws / "notes.txt").exists()
    finally:
        k.shutdown()
