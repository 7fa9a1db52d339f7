"""Every shipped notebook passes `logician run` wherever a user starts it: from the top of the
repository it ships in, from its own folder, and copied outside any repository; it leaves the
folder as it found it (`git status --porcelain` empty), and its kernel shuts down without a
traceback.

Each location gets its own copy of the checkout's notebooks in a fresh git repository, laid out
as in a clone (`notebooks/` under the repository's top), so the runs never touch this checkout
and the three locations of one notebook run side by side. (nbval also runs them copied
outside, comparing outputs: tests/notebooks/test_notebooks.py.)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from kernel_harness import clean_env, git

pytestmark = pytest.mark.kernel
ROOT = Path(__file__).parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LOGICIAN = str(Path(sys.executable).with_name("logician"))


def _clone_layout(base: Path) -> Path:
    """A git repository holding a copy of notebooks/ (with its recordings), committed."""
    repo = base / "repo"
    shutil.copytree(
        ROOT / "notebooks",
        repo / "notebooks",
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "clone")
    return repo


def _files(folder: Path) -> set[str]:
    """Every file and folder under `folder` but the kernel's own state."""
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if ".logician" not in p.relative_to(folder).parts
    }


def _run(notebook: Path, cwd: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = clean_env(LOGICIAN_CONFIG_DIR=str(config))
    rel = notebook.relative_to(cwd) if notebook.is_relative_to(cwd) else notebook
    try:
        return subprocess.run(
            [LOGICIAN, "run", str(rel)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired as exc:  # what it had said by then, to see where it waited
        said = [
            (b if isinstance(b, str) else (b or b"").decode(errors="replace"))[-3000:]
            for b in (exc.stdout, exc.stderr)
        ]
        pytest.fail(f"`logician run {rel}` in {cwd} ran 600 s:\n{said[0]}\n--- stderr:\n{said[1]}")


@pytest.mark.timeout(900)
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.name for n in NOTEBOOKS])
def test_the_notebook_runs_from_the_repository_top_its_folder_and_outside(
    notebook: Path, tmp_path: Path
) -> None:
    top, folder = _clone_layout(tmp_path / "top"), _clone_layout(tmp_path / "folder")
    # Copied outside any repository (with its recordings), as a user who downloads it does.
    outside = tmp_path / "outside" / "work"
    shutil.copytree(
        ROOT / "notebooks",
        outside,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    before = _files(outside)
    runs = {
        "from the repository's top": (top, top / "notebooks" / notebook.name, top),
        "from its own folder": (folder, folder / "notebooks" / notebook.name, folder / "notebooks"),
        "copied outside a repository": (outside, outside / notebook.name, outside),
    }
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = {
            where: pool.submit(_run, nb, cwd, tmp_path / f"cfg-{i}")
            for i, (where, (_, nb, cwd)) in enumerate(runs.items())
        }
    for where, future in done.items():
        result = future.result()
        assert result.returncode == 0, f"{notebook.name} {where}:\n{result.stderr[-3000:]}"
        # Kernel shutdown (with MCP servers, in 05) logs no traceback.
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
        repo = runs[where][0]
        if repo == outside:  # no git to ask: the files themselves
            left = "\n".join(sorted(_files(outside) ^ before))
        else:
            left = git(repo, "status", "--porcelain", "--untracked-files=all")
        assert left == "", f"{notebook.name} {where} left behind:\n{left}"
