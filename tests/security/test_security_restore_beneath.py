"""Restores never leave the workspace, through a real kernel: another program replaces a
directory of the workspace by a symlink to a folder outside (holding files of the same names
and the same bytes, the worst case for a check by content), and `%logician rewind`, `undo`
and `rewind --resume` neither write nor delete anything outside; the report names the
directory as a conflict. Large files (the side store's restore) and a parent two levels up
too. The race (a swap during a 3,000-file rewind) is test_security_restore_race.py's.

Each test fails on the code before `snapshots/beneath.py`: the restore opened `workspace/path`,
following the symlinked parent, so the outside files were deleted (a frame-created file) or
overwritten (a modified one).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = pytest.mark.kernel

N = 20


def outside_state(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every entry under `root`: content digest (or link target / 'dir'), inode and mtime."""
    out: dict[str, tuple[str, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath, name)
            st = os.lstat(full)
            if full.is_symlink():
                what = "link:" + os.readlink(full)
            elif full.is_dir():
                what = "dir"
            else:
                what = hashlib.sha256(full.read_bytes()).hexdigest()
            out[str(full.relative_to(root))] = (what, st.st_ino, st.st_mtime_ns)
    return out


def swap_for_link(workspace: Path, name: str, outside: Path) -> None:
    """What the other program does: the workspace's `name/` moves outside, a symlink to it
    stands in its place (so the folder outside holds the same names and bytes)."""
    shutil.move(str(workspace / name), str(outside / name))
    os.symlink(outside / name, workspace / name)


def conflict_named(text: str, directory: str) -> bool:
    return f"{directory}: a directory became a symlink; left alone" in text


@pytest.mark.timeout(300)
def test_rewind_through_swapped_directories_writes_and_deletes_nothing_outside(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**kernel_env, "LOGICIAN_CHECKPOINTS__LARGE_FILE_BYTES": "100000"}
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "m").mkdir()
    for i in range(N):
        (workspace / "m" / f"f{i:02d}.txt").write_text(f"original {i}\n")
    (workspace / "big").mkdir()
    (workspace / "big" / "data.bin").write_bytes(os.urandom(300_000))
    k = Kernel(workspace, env)
    try:
        r = k.run(
            "import os, pathlib\n"
            "os.makedirs('d'); os.makedirs('a/b')\n"
            f"for i in range({N}):\n"
            "    open(f'd/f{i:02d}.txt', 'w').write(f'new {i}\\n')\n"
            "    open(f'm/f{i:02d}.txt', 'w').write(f'changed {i}\\n')\n"
            "    open(f'a/b/f{i:02d}.txt', 'w').write(f'deep {i}\\n')\n"
            "open('big/data.bin', 'wb').write(os.urandom(300_000))\n"
            "open('top.txt', 'w').write('top')\n"
        )
        assert r.status == "ok", r.text
        assert "large" in k.run("%logician diff --last").text  # the side store's case
        for name in ("d", "m", "a", "big"):
            swap_for_link(workspace, name, outside)
        before = outside_state(outside)
        assert len(before) == 3 * N + 1 + 5  # files, big/data.bin, d m a a/b big

        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert outside_state(outside) == before, "a rewind wrote or deleted outside"
        for name in ("d/", "m/", "a/", "big/"):
            assert conflict_named(r.text, name), r.text
        assert not (workspace / "top.txt").exists()  # the rest of the rewind went ahead
        for name in ("d", "m", "a", "big"):
            assert (workspace / name).is_symlink()  # left alone, not replaced

        # --force overwrites conflicts, never through a symlink.
        k.run("open('top.txt', 'w').write('again')")
        r = k.run("%logician rewind --last --force")
        assert r.status == "ok", r.text
        assert outside_state(outside) == before
    finally:
        k.shutdown()


def test_undo_through_a_swapped_directory_writes_nothing_outside(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "d").mkdir(parents=True)
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run(
            "import os\nos.makedirs('d')\n"
            f"for i in range({N}):\n    open(f'd/f{{i:02d}}.txt', 'w').write('x')\n"
        )
        assert r.status == "ok", r.text
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert not (workspace / "d").exists()  # the frame's files and its directory are gone
        # The undo would bring d/ back: another program puts a symlink there first.
        os.symlink(outside / "d", workspace / "d")
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert list((outside / "d").iterdir()) == [], "the undo wrote outside"
        assert conflict_named(r.text, "d/"), r.text
    finally:
        k.shutdown()


@pytest.mark.timeout(300)
def test_resume_through_a_swapped_directory_writes_nothing_outside(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    src = workspace / "src"
    src.mkdir()
    for i in range(N):
        (src / f"f{i:02d}.txt").write_text(f"original {i}\n")
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run(f"for i in range({N}):\n    open(f'src/f{{i:02d}}.txt', 'w').write('changed')")
        assert r.status == "ok", r.text
        # Test-only hook: the kernel SIGKILLs itself after this many restored paths.
        k.run("import os; os.environ['LOGICIAN_TEST_REWIND_KILL_AFTER'] = '5'")
        k.send("%logician rewind 1")
        process = k.km.provisioner.process  # type: ignore[union-attr]
        deadline = time.monotonic() + 120
        while process.returncode is None and process.poll() is None:
            assert time.monotonic() < deadline, "the rewind never reached the kill hook"
            time.sleep(0.2)  # polling a condition (the process's exit), not timing
        k.kc.stop_channels()
        k.km.cleanup_resources()
        swap_for_link(workspace, "src", outside)
        before = outside_state(outside)
        k.start_again()
        r = k.run("%logician rewind --resume")
        assert r.status == "ok", r.text
        assert outside_state(outside) == before, "the resume wrote outside"
        assert conflict_named(r.text, "src/"), r.text
    finally:
        k.shutdown()
