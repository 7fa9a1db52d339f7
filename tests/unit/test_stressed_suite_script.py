"""scripts/stressed_suite.py: each run is a fresh clone whose job's pytest summary and exit
status are reported, and a job can be asked to stop with SIGINT even when the script itself was
started in the background (a shell's background job ignores SIGINT)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
SCRIPT = REPO / "scripts" / "stressed_suite.py"


def _repo(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "job.sh").write_text(
        # a pytest-like end; fails where a file says so; says whether SIGINT is ignored
        "grep SigIgn /proc/self/status > sigign.txt\n"
        "if [ -e fail ]; then echo '==== 1 failed, 2 passed in 1.00s ===='; exit 1; fi\n"
        "echo '==== 3 passed in 0.50s ===='\n"
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=src, check=True
        )
    return src


def _run(tmp_path: Path, src: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "2", "--loops", "1", "--keep"]
        + ["--dir", str(tmp_path / "runs"), "--source", str(src), "--command", command],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as in a background
    )


def test_each_run_is_a_fresh_clone_and_its_summary_and_status_are_reported(
    tmp_path: Path,
) -> None:
    src = _repo(tmp_path)
    done = _run(tmp_path, src, "bash job.sh")
    assert done.returncode == 0, done.stderr
    rows = [
        line
        for line in done.stdout.splitlines()
        if line.startswith("| 1 ") or line.startswith("| 2 ")
    ]
    assert len(rows) == 2 and all(
        "| 3 passed in 0.50s |" in r and r.endswith("| 0 |") for r in rows
    )
    for n in (1, 2):
        # SIGINT at its default in the job (bit 2 of the mask clear), though the script ignored it
        mask = int((tmp_path / "runs" / f"run-{n}" / "sigign.txt").read_text().split()[1], 16)
        assert not mask & (1 << (signal.SIGINT - 1))
    failing = _run(tmp_path / "again", src, "touch fail; bash job.sh")
    assert failing.returncode == 1
    assert "| 1 failed, 2 passed in 1.00s |" in failing.stdout
