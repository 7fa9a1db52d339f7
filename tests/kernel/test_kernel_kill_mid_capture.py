"""kill -9 in the middle of a capture (issue 28): a 200 MB variable and a 300 MB file, the
kernel killed (test-only `LOGICIAN_TEST_FAULT=rename:1:kill`) when the copy is whole but not
yet under its name in the store. After a restart the frame is recorded or closed as killed,
no store holds a half-written object under a valid name, and `%logician storage` and `gc`
agree with what is on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.durable.test_hooks import FAULT

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

MB = 1 << 20


def _die_at_first_store_rename(k: Kernel, code: str) -> None:
    k.run(f"import os; os.environ[{FAULT!r}] = 'rename:1:kill'", silent=True)
    k.send(code)
    status = k.km.provisioner.process.wait(240)  # type: ignore[union-attr]
    assert status == -9, f"the kernel was expected to die by its SIGKILL hook, exited {status}"
    k.kc.stop_channels()
    k.km.cleanup_resources()


def _store_files(ws: Path, store: str) -> dict[str, int]:
    """Every file under `.logician/<store>` by relative path, with its size."""
    root = ws / ".logician" / store
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def _valid_names(files: dict[str, int]) -> dict[str, int]:
    """Objects under their content's name (`objects/ab/cdef...`): not temporaries."""
    return {
        p: n
        for p, n in files.items()
        if p.startswith("objects/") and not Path(p).name.startswith(".") and not p.endswith(".tmp")
    }


def _only_whole_objects(ws: Path) -> None:
    """Every side-store object under a valid name is whole: as long as its name says, and
    the bytes of some version of big.bin (all its versions start with the same 300 MB)."""
    for rel, size in _valid_names(_store_files(ws, "large")).items():
        assert rel.rsplit("-", 1)[-1] == str(size), (rel, size)
        with open(ws / ".logician" / "large" / rel, "rb") as fh:
            head = fh.read(1 << 20)
        assert head[7:] == bytes([0]) * ((1 << 20) - 7), rel


def _consistent(k: Kernel) -> tuple[str, str]:
    storage, gc = k.run("%logician storage"), k.run("%logician gc")
    assert storage.status == "ok" and "Traceback" not in storage.text, storage.text
    assert gc.status == "ok" and "Traceback" not in gc.text, gc.text
    return storage.text, gc.text


@pytest.mark.timeout(600)
def test_kill_9_while_a_200_mb_variable_is_stored(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("small = 1").status == "ok"  # frame 1, its variable stored
        before = _valid_names(_store_files(workspace, "variables"))
        _die_at_first_store_rename(k, "big = bytearray(200 * 1024 * 1024)\nbig[-1] = 7")
        k.start_again()
        said = k.run("print('alive')").text
        files = _store_files(workspace, "variables")
        # No object of 200 MB (or any part of one) under a valid name: the old objects only.
        assert _valid_names(files) == before, (files, before)
        frames = k.run("%logician frames --all").text
        line = next(ln for ln in frames.splitlines() if ln.split()[:1] == ["2"])
        assert "killed" in line or "ok" in line, frames
        assert "never closed" in said or "killed" in line or "not captured" in said, said
        _consistent(k)
        # What the killed copy left is gone after gc, or was never under a name anyone reads.
        left = {p: n for p, n in _store_files(workspace, "variables").items() if n >= 100 * MB}
        assert not _valid_names(left), left
        assert k.run("%logician rewind --last").status == "ok"
    finally:
        k.shutdown()


@pytest.mark.timeout(600)
def test_kill_9_while_a_300_mb_file_is_copied_to_the_side_store(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    config = Path(kernel_env["LOGICIAN_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    # No variable capture: the first store rename is then the side store's, of big.bin.
    (config / "config.toml").write_text("[checkpoints]\nmin_free_bytes = 0\nvariables = false\n")
    k = Kernel(workspace, kernel_env)
    try:
        _die_at_first_store_rename(
            k,
            "with open('big.bin', 'wb') as f:\n"
            "    for i in range(300):\n"
            "        f.write(bytes([i % 251]) * (1 << 20))",
        )
        assert (workspace / "big.bin").stat().st_size == 300 * MB
        k.start_again()
        said = k.run("print('alive')").text
        frames = k.run("%logician frames --all").text
        assert "killed" in frames or "big.bin" in frames or "1 created" in frames, (frames, said)
        _consistent(k)
        _only_whole_objects(workspace)
        left = [p for p in _store_files(workspace, "large") if p.startswith("tmp/")]
        assert not left, left  # the dead kernel's half copy is swept
        # Capture goes on: the next change of the file is captured whole, and rewinds.
        r = k.run("open('big.bin', 'r+b').write(b'changed')")
        assert r.status == "ok" and "not captured" not in r.text, r.text
        _only_whole_objects(workspace)
        r = k.run("%logician rewind --last")
        assert r.status == "ok" and "failed" not in r.text, r.text
        assert (workspace / "big.bin").read_bytes()[:7] == bytes([0]) * 7
    finally:
        k.shutdown()
    assert os.path.exists(workspace / "big.bin")
