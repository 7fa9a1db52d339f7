"""kill -9 in the middle of a big frame close: a cell rewrites 5,000 files and the kernel dies
(test-only `LOGICIAN_TEST_KILL_MID_PACK`) with half of the close's pack written. After a
restart the frame is closed as killed with the 5,000 changes found since it opened, the store
holds no half pack under a name git reads (every pack has its index and verifies, the store's
objects are whole), and the rewind of that frame puts every file's first version back."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.durable.test_hooks import KILL_MID_PACK

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.notices_in_cells,  # the restart's notice is read in a cell's output
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

N = 5000
WRITE = (
    "import os\nos.makedirs('many', exist_ok=True)\n"
    "for _k in range({n}):\n"
    "    with open(f'many/f{{_k:05d}}.txt', 'w') as _fh:\n"
    "        _fh.write(f'{tag} {{_k}}\\n')"
)


def digest(ws: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((ws / "many").glob("*.txt"))
    }


def _stores(ws: Path) -> list[Path]:
    return [p.parent for p in ws.glob(".logician/**/objects") if (p.parent / "HEAD").exists()]


def _git(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", f"--git-dir={store}", *args], capture_output=True, text=True, check=False
    )


def _whole_packs(ws: Path) -> None:
    """Every pack under a name git reads has its index, and verifies; temporaries aside."""
    for store in _stores(ws):
        pack_dir = store / "objects" / "pack"
        for pack in pack_dir.glob("pack-*.pack"):
            assert pack.with_suffix(".idx").exists(), f"{pack} has no index"
            check = _git(store, "verify-pack", str(pack.with_suffix(".idx")))
            assert check.returncode == 0, (pack, check.stderr)
        fsck = _git(store, "fsck", "--connectivity-only")
        assert fsck.returncode == 0, fsck.stderr


@pytest.mark.timeout(900)
def test_kill_9_mid_pack_of_a_5000_file_close(workspace: Path, kernel_env: dict[str, str]) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run(WRITE.format(n=N, tag="first"), timeout=300).status == "ok"
        first = digest(workspace)
        assert len(first) == N
        k.run(f"import os; os.environ[{KILL_MID_PACK!r}] = '{N}'", silent=True)
        k.send(WRITE.format(n=N, tag="second"))
        status = k.km.provisioner.process.wait(300)  # type: ignore[union-attr]
        assert status == -9, f"the kernel was expected to die by its SIGKILL hook, exited {status}"
        k.kc.stop_channels()
        k.km.cleanup_resources()
        second = digest(workspace)
        assert set(second) == set(first) and not set(second.values()) & set(first.values())
        halves = [p for s in _stores(workspace) for p in (s / "objects" / "pack").glob("*.tmp")]
        assert halves, "the hook left half a pack under its temporary name"

        k.start_again()
        said = k.run("print('alive')", timeout=300).text
        assert "never closed" in said and f"{N} change(s)" in said, said
        frames = k.run("%logician frames --all").text
        line = next(ln for ln in frames.splitlines() if ln.split()[:1] == ["2"])
        assert "killed" in line, frames
        _whole_packs(workspace)
        # The half pack (as large as the frame's blobs) went when the store was opened again.
        assert not [p for s in _stores(workspace) for p in (s / "objects/pack").glob("*.tmp")]
        assert "half-written pack file" in said, said

        r = k.run("%logician rewind 2", timeout=300)  # the killed frame, and the one after
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert digest(workspace) == first
        _whole_packs(workspace)
    finally:
        k.shutdown()
