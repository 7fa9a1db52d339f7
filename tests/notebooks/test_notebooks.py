"""The shipped notebooks run on the Logician kernel and reproduce their stored outputs (nbval;
a tour whose agent edits and runs cells under `logician run`, which serves the notebook tools
nbval cannot)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from kernel_harness import clean_env

pytestmark = pytest.mark.kernel
NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")
"""Regexes applied to stored and fresh outputs alike (what one machine words its own way)."""
EDITS_CELLS = "06-agent-edits-cells.ipynb"
"""The tour whose agent inserts a cell and runs it: nbval is no frontend, so the notebook tools
are not offered there; `logician run` serves them, and checks this tour instead."""
NBVAL = [n for n in NOTEBOOKS if n.name != EDITS_CELLS]


@pytest.mark.timeout(660)  # past the run's own 600 s, which reports what nbval printed
@pytest.mark.parametrize("notebook", NBVAL, ids=[n.name for n in NBVAL])
def test_notebook_validates_with_nbval(notebook: Path, tmp_path: Path) -> None:
    # A copy in a fresh directory: its own workspace and thread, so ids and files start clean.
    copy = tmp_path / notebook.name
    shutil.copy(notebook, copy)
    recordings = notebook.parent / "recordings"
    if recordings.is_dir():  # recorded model sessions the replay provider plays
        shutil.copytree(recordings, tmp_path / "recordings")
    # Named as a server names it: an unnamed kernel would say in the first cell which thread
    # it reopened, an output the stored notebook does not have.
    env = clean_env(LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg"), JPY_SESSION_NAME=str(copy))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--nbval",
            "--nbval-kernel-name",
            "logician",
            "--nbval-sanitize-with",
            str(SANITIZE),
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(copy),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout


def _texts(cell: nbformat.NotebookNode) -> list[str]:
    """A code cell's outputs as nbval compares them: stream text and `text/plain`."""
    return [
        str(o.get("text") or o.get("data", {}).get("text/plain", ""))
        for o in cell.get("outputs", [])
    ]


@pytest.mark.timeout(660)  # past the run's own 600 s
def test_the_cell_editing_tour_passes_under_logician_run(tmp_path: Path) -> None:
    tour = NOTEBOOKS[0].parent / EDITS_CELLS
    copy = tmp_path / tour.name
    shutil.copy(tour, copy)
    shutil.copytree(tour.parent / "recordings", tmp_path / "recordings")
    out = tmp_path / "out.ipynb"
    result = subprocess.run(
        [str(Path(sys.executable).with_name("logician")), "run", str(copy), "-o", str(out)],
        cwd=tmp_path,
        env=clean_env(LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg")),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    stored = nbformat.read(tour, as_version=4).cells
    fresh = nbformat.read(out, as_version=4).cells
    ids = [c.id for c in stored]
    # the agent inserted one code cell right below its own, and it ran there with its output
    (inserted,) = [c for c in fresh if c.id not in ids]
    at = [c.id for c in fresh].index(inserted.id)
    assert fresh[at - 1].id == "ask" and inserted.cell_type == "code"
    assert inserted.source.startswith("monthly = df.groupby(")
    assert _texts(inserted) == ["date\n2026-01    484\n2026-02    448\n2026-03    508\n"]
    ask = next(c for c in fresh if c.id == "ask")
    assert inserted.execution_count == ask.execution_count + 1  # run right after, its own cell
    # every other cell reproduces its stored outputs, as nbval would check them
    by_id = {c.id: c for c in fresh}
    for cell in stored:
        if cell.cell_type != "code":
            continue
        assert cell.id in by_id, f"cell {cell.id} is missing from the run's notebook"
        if "nbval-ignore-output" not in cell.metadata.get("tags", []):
            assert _texts(by_id[cell.id]) == _texts(cell), cell.id
