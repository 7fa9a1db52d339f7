"""The store through a real kernel: `%logician storage` counts every byte of `.logician/`
(variables included) by kind and by frame, the disk budget evicts variables too and a rewind
names the ones it can no longer restore, and compressed variables round-trip and are refused
by name once tampered with."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from kernel_harness import Kernel

from logician_kernel.ledger.thread_ledger import VariablesCaptured, read_entries

pytestmark = pytest.mark.kernel

REFUSED = "stored value failed its check; not restored"


def blob_of(workspace: Path, name: str) -> Path:
    """The file holding the first value the ledger recorded for `name`."""
    ledger = workspace / ".logician" / "threads" / "test-thread.jsonl"
    for entry in read_entries(ledger):
        if isinstance(entry, VariablesCaptured):
            for record in entry.records:
                if record.name == name and record.blob:
                    d = record.blob
                    return workspace / ".logician" / "variables" / "objects" / d[:2] / d[2:]
    raise AssertionError(f"no stored value of {name} in {ledger}")


def refused_line(report: str, name: str) -> str:
    lines = [line for line in report.splitlines() if f"variable {name} " in line]
    assert lines, report
    return lines[0]


def ok(k: Kernel, code: str) -> str:
    r = k.run(code, timeout=180)
    assert r.status == "ok", r.text
    return r.text


def du(root: Path) -> int:
    total = 0
    for base, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                continue
    return total


def mb(text: str, label: str) -> float:
    found = re.search(rf"{re.escape(label)}\s+([\d,.]+) MB", text)
    assert found, text
    return float(found.group(1).replace(",", ""))


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str]):
    k = Kernel(workspace, kernel_env)
    yield k
    k.shutdown()


def test_storage_counts_variables_by_kind_and_by_frame_and_the_total_is_every_byte(
    kernel: Kernel, workspace: Path
) -> None:
    ok(kernel, "import os\nx = 5")
    ok(kernel, "big = os.urandom(3_000_000)")  # incompressible: 3 MB on disk
    ok(kernel, "x = 6")
    ok(kernel, "x = 5")  # the value frame 1 stored: the same blob, not a second copy
    text = ok(kernel, "%logician storage")
    assert mb(text, "variables") >= 3.0, text
    rows = {ln.split()[0]: ln for ln in text.splitlines() if re.match(r"^\d+\s", ln)}
    assert re.search(r"\s3\.0 MB\s", rows["2"]), text  # `big`'s frame holds its 3 MB
    assert "1 value(s) shared with an earlier frame" in rows["4"], text
    assert "counted once" in text, text
    total = float(re.search(r": ([\d,.]+) MB;", text).group(1))  # type: ignore[union-attr]
    assert abs(total - du(workspace / ".logician") / 1e6) < 0.2, (text, du(workspace / ".logician"))
    parts = [
        "large files (side store)",
        "variables",
        "small files (git objects)",
        "ledger (threads)",
    ]
    parts += ["logs", "other"]
    assert abs(sum(mb(text, p) for p in parts) - total) < 0.1 * len(parts), text


def test_the_budget_evicts_the_oldest_variables_beyond_the_recent_frames_and_rewind_names_them(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    env = dict(kernel_env)
    env["LOGICIAN_CHECKPOINTS__MAX_STORE_BYTES"] = "1000000"
    env["LOGICIAN_CHECKPOINTS__KEEP_RECENT_FRAMES"] = "1"
    k = Kernel(workspace, env)
    try:
        ok(k, "import os\nv = os.urandom(300_000)")  # frame 1: v1
        ok(k, "v = os.urandom(300_000)\nopen('note.txt', 'w').write('2')")  # frame 2: pre v1
        ok(k, "w = os.urandom(300_000)")  # frame 3: w is new
        r4 = k.run("v = os.urandom(300_000)", timeout=180)  # frame 4: pre v2; v1 must go
        assert r4.status == "ok", r4.text
        r = k.run("y = 1", timeout=180)
        # the notice stays out of the cells' outputs and waits in `%logician notices`
        assert "Logician" not in r4.stderr + r.stderr, r4.text + r.text
        notices = k.run("%logician notices --all").text
        assert "variables a rewind can no longer restore: v" in notices, notices
        assert "of frame(s) 2" in notices, notices

        frames = k.run("%logician frames").text.splitlines()
        marked = [ln.split()[0] for ln in frames if "variables evicted: v" in ln]
        assert marked == ["2"], frames
        storage = ok(k, "%logician storage")
        assert "variables evicted: v" in storage, storage
        assert "variables evicted so far: 1 value(s)" in storage, storage
        assert du(workspace / ".logician" / "variables") < 1_000_000

        preview = ok(k, "%logician rewind 2 --dry-run")
        assert "was evicted" in preview, preview  # said before the rewind, too

        report = ok(k, "%logician rewind 2")
        line = refused_line(report, "v")
        assert "not-restored" in line and "evicted" in line, report
        assert "checkpoints.max_store_bytes" in line, report
        assert not (workspace / "note.txt").exists()  # the rest of the rewind went through
        assert "w is gone" in ok(k, "assert 'w' not in globals()\nprint('w is gone')")
    finally:
        k.shutdown()


def test_a_compressed_table_round_trips_and_a_tampered_one_is_refused_by_name(
    kernel: Kernel, workspace: Path
) -> None:
    pytest.importorskip("zstandard")
    text = ok(
        kernel,
        "import numpy as np, pandas as pd, pickle\n"
        "rng = np.random.default_rng(0)\n"
        "df = pd.DataFrame({'price': np.round(rng.normal(100, 15, 300_000), 2),\n"
        "                   'city': rng.choice(['Paris', 'Lyon', 'Nice'], 300_000)})\n"
        "snapshot = df.copy()\n"
        "print('pickled', len(pickle.dumps(df, protocol=5)))",
    )
    raw = int(text.split("pickled")[1].split()[0])
    ok(kernel, "df['price'] *= 2")
    blob = blob_of(workspace, "df")
    assert blob.stat().st_size < raw / 2, (blob.stat().st_size, raw)  # compressed on disk
    report = ok(kernel, "%logician rewind --last")
    assert "not-restored" not in report, report
    assert "equal" in ok(kernel, "assert df.equals(snapshot)\nprint('equal')")

    ok(kernel, "df['price'] *= 3")
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 1  # inside the compressed column
    blob.write_bytes(bytes(data))
    report = ok(kernel, "%logician rewind --last")
    assert REFUSED in refused_line(report, "df"), report
    assert "kept" in ok(kernel, "assert not df.equals(snapshot)\nprint('kept')")


def test_storage_counts_by_kind_when_file_capture_is_off(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    env = dict(kernel_env)
    env["LOGICIAN_CHECKPOINTS__ENABLED"] = "false"
    k = Kernel(workspace, env)
    try:
        ok(k, "import os\nbig = os.urandom(2_000_000)")
        text = ok(k, "%logician storage")
        assert "file capture is off" in text and "no budget applies" in text, text
        assert mb(text, "variables") >= 2.0, text
        total = float(re.search(r": ([\d,.]+) MB;", text).group(1))  # type: ignore[union-attr]
        assert abs(total - du(workspace / ".logician") / 1e6) < 0.2, text
    finally:
        k.shutdown()
