"""A cell that touches hundreds of files at once (its blobs stored as one pack, not a file
each): every version comes back byte for byte through rewind and undo, across a restart."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

N = 400  # above git_pack.PACK_MIN_BLOBS: the frames' blobs are packed
WRITE = (
    "import os\nos.makedirs('parts', exist_ok=True)\n"
    "for i in range({n}):\n"
    "    with open(f'parts/p{{i:04d}}.csv', 'w') as fh:\n"
    "        fh.write('{tag},' + str(i) * (i % 7 + 1) + '\\n')"
)


def digest(ws: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((ws / "parts").glob("*.csv"))
    }


def test_hundreds_of_files_rewind_and_undo_byte_exact_across_a_restart(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run(WRITE.format(n=N, tag="first")).status == "ok"
        first = digest(workspace)
        assert len(first) == N
        assert k.run(WRITE.format(n=N, tag="second")).status == "ok"
        second = digest(workspace)
        assert set(second) == set(first) and second != first
        packs = list(workspace.glob(".logician/**/objects/pack/pack-*.idx"))
        assert packs, "the frames' blobs were stored as packs"
        k.restart()  # the rewind reads the packs through a new store reader
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert digest(workspace) == first
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert not (workspace / "parts").exists()
        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert digest(workspace) == first
        for store in {p.parent.parent.parent for p in packs}:
            fsck = subprocess.run(
                ["git", f"--git-dir={store}", "fsck", "--connectivity-only"],
                capture_output=True,
                text=True,
            )
            assert fsck.returncode == 0, fsck.stderr
    finally:
        k.shutdown()
