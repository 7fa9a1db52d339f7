"""Nothing is deserialized that this user did not write (issue 27, findings 2 and 3).

The attacker can write the workspace - its `.logician/` included - but not the user's config
dir. Each test plants something under `.logician/` with a real kernel running, then rewinds:
an `os.system` pickle must never run (its marker file never appears), the planted value is
refused by name in the rewind report, and every other variable or file still comes back.
"""

from __future__ import annotations

import os
import pickle
import struct
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.frames.variable_store import pickle_group
from logician_kernel.ledger.thread_ledger import VariablesCaptured, read_entries

pytestmark = pytest.mark.kernel

REFUSED = "stored value failed its check; not restored"


class _Payload:
    """Unpickling this runs a shell command as the user: what finding 2 reproduced."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (self.command,))


def hostile_blob(marker: Path, name: str, magic: bytes) -> bytes:
    """A blob with a well-formed header of either format whose pickle touches `marker`;
    an `LGV2` one carries a MAC made without the user's key (zeros)."""
    main = pickle.dumps({name: _Payload(f"touch {marker}")}, protocol=5)
    blob = struct.pack("<4sIQ", magic, 0, len(main)) + main
    return blob + (b"\0" * 32 if magic == b"LGV2" else b"")


def blob_of(workspace: Path, name: str) -> Path:
    """The file holding the first value the ledger recorded for `name`."""
    ledger = workspace / ".logician" / "threads" / "test-thread.jsonl"
    for entry in read_entries(ledger):
        if isinstance(entry, VariablesCaptured):
            for record in entry.records:
                if record.name == name and record.blob:
                    return object_path(workspace, record.blob)
    raise AssertionError(f"no stored value of {name} in {ledger}")


def object_path(workspace: Path, digest: str) -> Path:
    return workspace / ".logician" / "variables" / "objects" / digest[:2] / digest[2:]


def plant(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.write_bytes(data)


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str]):
    k = Kernel(workspace, kernel_env)
    yield k
    k.shutdown()


def ok(k: Kernel, code: str) -> str:
    r = k.run(code, timeout=120)
    assert r.status == "ok", r.text
    return r.text


def refused_line(report: str, name: str) -> str:
    lines = [line for line in report.splitlines() if f"variable {name} " in line]
    assert lines, report
    return lines[0]


@pytest.mark.parametrize("magic", [b"LGV1", b"LGV2"], ids=["old-header", "new-header"])
def test_a_planted_pickle_is_refused_by_name_and_never_runs(
    kernel: Kernel, workspace: Path, tmp_path: Path, magic: bytes
) -> None:
    marker = tmp_path / "PWNED"
    ok(kernel, "x = {'v': 1}\ny = [1, 2, 3]")
    ok(kernel, "x = {'v': 2}\ny = [4]")
    plant(blob_of(workspace, "x"), hostile_blob(marker, "x", magic))
    report = ok(kernel, "%logician rewind --last")
    assert not marker.exists(), "the planted pickle ran during the rewind"
    line = refused_line(report, "x")
    assert "not-restored" in line, report
    assert (REFUSED if magic == b"LGV2" else "older version of Logician") in line, report
    assert "restored  variable y" in report or "restored variable y" in report, report
    assert "x, kept" in ok(
        kernel, "assert y == [1, 2, 3], y\nassert x == {'v': 2}, x\nprint('x, kept')"
    )
    assert not marker.exists()


def test_a_value_preseeded_under_its_predictable_name_is_not_trusted(
    kernel: Kernel, workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    digest = pickle_group({"v": 12345}).digest  # what anyone can compute for `v = 12345`
    plant(object_path(workspace, digest), hostile_blob(marker, "v", b"LGV1"))
    ok(kernel, "v = 12345")
    assert blob_of(workspace, "v") == object_path(workspace, digest)  # the dedup path was hit
    ok(kernel, "v = 2")
    report = ok(kernel, "%logician rewind --last")
    assert not marker.exists(), "the pre-seeded pickle ran during the rewind"
    assert "not-restored" not in report, report
    assert "v is back" in ok(kernel, "assert v == 12345, v\nprint('v is back')")
    assert not marker.exists()


def test_truncated_and_garbage_blobs_are_refused_by_name_and_the_rest_restored(
    kernel: Kernel, workspace: Path
) -> None:
    ok(kernel, "x = 'x' * 1000\ny = list(range(300))\nz = {'z': 1}")
    ok(kernel, "x = 'changed'\ny = []\nz = {}")
    x_blob, y_blob = blob_of(workspace, "x"), blob_of(workspace, "y")
    plant(x_blob, x_blob.read_bytes()[:10])
    plant(y_blob, os.urandom(500))
    report = ok(kernel, "%logician rewind --last")
    assert "failed its check" in refused_line(report, "x"), report
    assert "failed its check" in refused_line(report, "y"), report
    assert "x and y refused" in ok(
        kernel,
        "assert z == {'z': 1}, z\n"
        "assert x == 'changed' and y == [], (x, y)\n"
        "print('x and y refused')",
    )


@pytest.mark.notices_in_cells  # reads the first cell's notice
def test_the_key_is_private_outside_the_workspace_and_a_loose_one_is_refused(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    key = Path(kernel_env["LOGICIAN_CONFIG_DIR"]) / "state.key"
    k = Kernel(workspace, kernel_env)
    try:
        outputs = ok(k, "x = 1") + ok(k, "x = 2")
    finally:
        k.shutdown()
    assert key.stat().st_mode & 0o777 == 0o600 and key.stat().st_size == 32
    assert workspace not in key.resolve().parents
    secret = key.read_bytes()
    for path in workspace.rglob("*"):  # the key itself never lands in the workspace
        if path.is_file():
            data = path.read_bytes()
            assert secret not in data and secret.hex().encode() not in data, path
    assert secret.hex() not in outputs

    key.chmod(0o644)  # e.g. a dotfiles sync: others could have read it
    k = Kernel(workspace, kernel_env)
    try:
        first = k.run("y = 1").text
        assert str(key) in first and "mode 0644" in first, first
        ok(k, "y = 2")
        report = ok(k, "%logician rewind --last")
        assert "not-restored" in refused_line(report, "y"), report
        assert "y still 2" in ok(k, "assert y == 2\nprint('y still 2')")
    finally:
        k.shutdown()
    assert key.read_bytes() == secret and key.stat().st_mode & 0o777 == 0o644  # not replaced


def test_a_planted_large_file_copy_is_refused_and_the_file_left_alone(
    kernel: Kernel, workspace: Path
) -> None:
    ok(kernel, "import os\nfirst = os.urandom(6 << 20)\nopen('big.bin', 'wb').write(first)")
    ok(kernel, "open('big.bin', 'wb').write(os.urandom(5 << 20))")
    assert "Logician storage" in ok(kernel, "%logician storage")  # the copies are done
    first_copy = next(
        p
        for p in (workspace / ".logician" / "large" / "objects").rglob("*")
        if p.is_file() and p.stat().st_size == 6 << 20
    )
    current = (workspace / "big.bin").read_bytes()
    planted = os.urandom(6 << 20)
    plant(first_copy, planted)
    # The refused copy leaves the rewind incomplete (never done with a file not restored):
    # the path stays pending, named with why, and the file is left as it is.
    refused = kernel.run("%logician rewind --last", timeout=120)
    assert refused.status == "error" and "rewind incomplete" in refused.text, refused.text
    assert "big.bin" in refused.text and "failed its check" in refused.text, refused.text
    assert (workspace / "big.bin").read_bytes() == current
    assert not list(workspace.glob(".big.bin.logician-restore*"))
    # Finishing it on purpose gives the path up, by name; the planted bytes never land.
    report = ok(kernel, "%logician rewind --skip-failed")
    assert "big.bin" in report, report
    assert (workspace / "big.bin").read_bytes() == current


@pytest.mark.notices_in_cells  # reads the first cell's notice
def test_a_planted_process_record_gets_nothing_killed_when_a_kernel_opens(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    """`.logician/processes/<pgid>.json` tells a starting kernel which groups its dead
    predecessor left: a planted one naming another program's group must not get it killed."""
    import json
    import subprocess

    dead = subprocess.Popen(["true"])
    dead.wait()
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)  # the user's editor
    try:
        record = workspace / ".logician" / "processes" / f"{victim.pid}.json"
        record.parent.mkdir(parents=True)
        record.write_text(
            json.dumps(
                {"pgid": victim.pid, "kernel_pid": dead.pid, "tool": "bash", "call": "sleep 60"}
            )
        )
        k = Kernel(workspace, kernel_env)
        try:
            first = k.run("print('opened')").text
        finally:
            k.shutdown()
        assert victim.poll() is None, "the planted record got the group killed"
        assert "failed their check" in first and "no process was killed" in first, first
        assert not record.exists()
    finally:
        victim.kill()
        victim.wait()
