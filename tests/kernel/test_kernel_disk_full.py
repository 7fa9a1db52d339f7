"""A full disk, for real: the workspace on a small tmpfs (the suite must run as root to mount
one; otherwise these tests skip, saying so). Each test reproduces one case of issue 28's "Why"
with a real kernel and asserts what the user sees once space is back: nothing lost, nothing
recorded as done that was not."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import Kernel, git, make_kernel_env

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

MB = 1024 * 1024


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MB tmpfs, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("the disk-full tests mount a tmpfs: run the suite as root to include them")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): disk-full tests skipped")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _workspace(disk: Path) -> Path:
    ws = disk / "project"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "data.csv").write_text("a,b\n1,2\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "init")
    return ws


def _env(tmp_path: Path) -> dict[str, str]:
    env = make_kernel_env(tmp_path)
    config = Path(env["LOGICIAN_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    # Large-file capture must not pause on this small disk (its floor is 1 GB by default), and
    # the side store must hold both 12 MB versions (its default is a quarter of the free space).
    (config / "config.toml").write_text(
        "[checkpoints]\nmin_free_bytes = 0\nmax_store_bytes = 60000000\n"
    )
    return env


def _free(disk: Path) -> int:
    st = os.statvfs(disk)
    return st.f_bavail * st.f_frsize


def _fill(disk: Path, leave: int) -> Path:
    """Fill the tmpfs (outside the workspace, so no frame sees it) to `leave` bytes free, in
    1 MiB steps (a kernel may still be writing a large file's copy: the free space moves)."""
    filler = disk / "filler"
    chunk = 1 << 20
    with open(filler, "ab") as fh:
        while (room := _free(disk) - leave) > 0:
            try:
                fh.write(b"\0" * min(chunk, room))
                fh.flush()
            except OSError:
                break  # full sooner than statvfs said: trim back below
    short = leave - _free(disk)
    if short > 0:  # overshot (another writer freed nothing it had reserved): give it back
        os.truncate(filler, max(0, filler.stat().st_size - short - 4096))
    return filler


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _frame_line(k: Kernel, frame: int) -> str:
    listing = k.run("%logician frames --all").text
    return next((line for line in listing.splitlines() if line.split()[:1] == [str(frame)]), "")


@pytest.mark.timeout(300)
def test_a_rewind_that_cannot_restore_a_file_stays_pending_until_resumed(
    disk: Path, tmp_path: Path
) -> None:
    ws = _workspace(disk)
    k = Kernel(ws, _env(tmp_path))
    try:
        assert k.run("open('big.bin', 'wb').write(b'A' * (12 << 20))").status == "ok"
        first = _digest(ws / "big.bin")
        assert (
            k.run(
                "open('big.bin', 'wb').write(b'B' * (12 << 20))\n"
                "open('note.txt', 'w').write('frame 2')"
            ).status
            == "ok"
        )
        second = _digest(ws / "big.bin")
        assert "Logician storage" in k.run("%logician storage").text  # the copies are done
        filler = _fill(disk, int(2.1 * MB))  # the plan fits; a 12 MB file does not

        r = k.run("%logician rewind 2")
        said = r.text
        assert "rewind incomplete: 1 path(s) failed" in said, said
        assert "big.bin" in said and "No space left on device" in said, said
        assert "%logician rewind --resume" in said, said
        assert _digest(ws / "big.bin") == second  # never a half-written file
        line = _frame_line(k, 2)
        assert "rewound" not in line and "rewind incomplete: 1 path(s) failed" in line, line
        # The frame stays: a second rewind of it says why it waits, never "already rewound".
        again = k.run("%logician rewind 2").text
        assert "is incomplete" in again and "already rewound" not in again, again

        # Still full: a resume retries, fails again, and keeps it pending.
        r = k.run("%logician rewind --resume")
        assert "rewind incomplete: 1 path(s) failed" in r.text, r.text

        # The record is durable: a restart still knows, and says so before anything else.
        k.restart()
        hello = k.run("print('alive')")
        assert "is incomplete" in hello.text and "big.bin" in hello.text, hello.text

        filler.unlink()
        r = k.run("%logician rewind --resume")
        assert r.status == "ok" and "incomplete" not in r.text, r.text
        assert _digest(ws / "big.bin") == first
        assert not (ws / "note.txt").exists()  # restored by the first pass, not touched again
        assert "rewound" in _frame_line(k, 2)
        r = k.run("%logician rewind --resume")
        assert "nothing to resume" in r.text, r.text
    finally:
        k.shutdown()


@pytest.mark.timeout(300)
def test_skip_failed_finishes_a_rewind_on_purpose_naming_what_it_gave_up(
    disk: Path, tmp_path: Path
) -> None:
    ws = _workspace(disk)
    k = Kernel(ws, _env(tmp_path))
    try:
        assert k.run("open('big.bin', 'wb').write(b'A' * (12 << 20))").status == "ok"
        assert k.run("open('big.bin', 'wb').write(b'B' * (12 << 20))").status == "ok"
        second = _digest(ws / "big.bin")
        assert "Logician storage" in k.run("%logician storage").text  # the copies are done
        filler = _fill(disk, int(2.1 * MB))
        assert "rewind incomplete" in k.run("%logician rewind 2").text
        filler.unlink()
        r = k.run("%logician rewind --skip-failed")
        assert r.status == "ok", r.text
        assert "without 1 failed path(s)" in r.text and "big.bin" in r.text, r.text
        assert "given up with --skip-failed" in r.text, r.text
        assert _digest(ws / "big.bin") == second  # given up: left as frame 2 left it
        assert "rewound" in _frame_line(k, 2)
        # The undo of that rewind is exact too: nothing to bring back for the given-up path.
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert _digest(ws / "big.bin") == second
    finally:
        k.shutdown()


def _fill_completely(disk: Path) -> Path:
    """Fill the tmpfs to the last byte (outside the workspace)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (MB, 4096, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)
    return filler


@pytest.mark.timeout(300)
def test_after_the_disk_was_full_cells_are_frames_again_and_none_stays_running(
    disk: Path, tmp_path: Path
) -> None:
    ws = _workspace(disk)
    k = Kernel(ws, _env(tmp_path))
    try:
        assert k.run("open('a.txt', 'w').write('1')").status == "ok"  # In [1], frame 1
        filler = _fill_completely(disk)
        # The store fails first; the ledger's records still fit in its last page's slack for
        # a few cells: run cells until one cannot be recorded (as the issue saw).
        for n in range(2, 20):
            r = k.run(f"open('a.txt', 'w').write('{n}')\nprint('y' * 2000)")
            said = r.stderr
            assert "No space left on device" in said, said  # never silent
            if "not a frame" in said or "could not be recorded" in said:
                break
        else:
            pytest.fail("the ledger never ran out of space")
        filler.unlink()
        r = k.run("open('a.txt', 'w').write('next')")
        assert f"frames resumed at In [{n + 1}]" in r.stderr, r.text
        r = k.run("open('a.txt', 'w').write('last')")
        assert "frames resumed" not in r.stderr, r.text  # said once
        listing = k.run("%logician frames --all").text
        assert "running" not in listing, listing
        assert f"In [{n + 1}]" in listing and f"In [{n + 2}]" in listing, listing
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and (ws / "a.txt").read_text() == "next", r.text
    finally:
        k.shutdown()
