"""The corpus of real-style notebooks (tests/notebooks/real/): each runs on the Logician kernel
through nbclient (a hung cell interrupted by the runner's timeout, as nbclient does it), is
rewound to its first frame and undone, and runs on plain ipykernel with the same cell errors.

After the rewind the folder equals the one before the run (every file's bytes and mode, every
directory) and every name the notebook bound is gone or named in the rewind's report; after the
undo the folder equals the one after the run, byte for byte, and the names are back (or named
as not restored). The notices the run printed tell the truth: a read-only cell is never said to
write, and an object that could not be captured is named once, by the cell that made it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from kernel_harness import make_kernel_env
from nbclient import NotebookClient
from nbclient.util import run_sync

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git lecture needs git"),
]
REAL = Path(__file__).parent / "real"
NOTEBOOKS = sorted(REAL.glob("*.ipynb"))
HANG_SECONDS = 3
"""The runner's timeout for a cell tagged `hangs` (every other cell: CELL_SECONDS)."""
CELL_SECONDS = 120
NAMES = "sorted(k for k in get_ipython().user_ns if not k.startswith('_'))"
NOT_CAPTURED = "not captured"


def prepare(folder: Path) -> None:
    """The folder a tutorial ships with: data, a script, an input folder and an empty one."""
    folder.mkdir()
    (folder / "data.csv").write_text("a,b\n1,2\n3,4\n5,6\n")
    (folder / "run.sh").write_text("#!/bin/sh\necho run\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "inputs").mkdir()
    (folder / "inputs" / "readme.txt").write_text("inputs\n")
    (folder / "scratch").mkdir()


def tree(folder: Path) -> dict[str, tuple[str, int]]:
    """Every directory and file but the kernel's own store: sha256 (or "dir") and mode bits."""
    out: dict[str, tuple[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        if Path(dirpath) == folder:
            dirnames[:] = [d for d in dirnames if d != ".logician"]
        for name in dirnames:
            full = Path(dirpath, name)
            out[str(full.relative_to(folder)) + "/"] = ("dir", os.lstat(full).st_mode & 0o7777)
        for name in filenames:
            full = Path(dirpath, name)
            digest = (
                os.readlink(full)
                if full.is_symlink()
                else hashlib.sha256(full.read_bytes()).hexdigest()
            )
            out[str(full.relative_to(folder))] = (digest, os.lstat(full).st_mode & 0o7777)
    return out


def changed(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def timeout_for(cell: Any) -> int:
    return HANG_SECONDS if "hangs" in cell.metadata.get("tags", []) else CELL_SECONDS


class Run:
    """One notebook on one kernel, in `folder`, the kernel kept for management cells."""

    def __init__(self, notebook: Path, folder: Path, kernel: str, env: dict[str, str]) -> None:
        self.nb = nbformat.read(notebook, as_version=4)
        self.client = NotebookClient(
            self.nb,
            kernel_name=kernel,
            timeout_func=timeout_for,
            interrupt_on_timeout=True,
            allow_errors=True,
            resources={"metadata": {"path": str(folder)}},
        )
        self.env = env

    def cells(self) -> list[Any]:
        return [c for c in self.nb.cells if c.cell_type == "code"]

    def errors(self) -> list[str | None]:
        """Each code cell's error name (None: it ran without one)."""
        return [
            next((o.ename for o in c.outputs if o.output_type == "error"), None)
            for c in self.cells()
        ]

    def text(self, cell: Any) -> str:
        parts = []
        for o in cell.outputs:
            if o.output_type == "stream":
                parts.append(o.text)
            elif o.output_type in ("display_data", "execute_result"):
                data = o.get("data", {})
                parts.append(data.get("text/markdown") or data.get("text/plain", ""))
            elif o.output_type == "error":
                parts.append(f"{o.ename}: {o.evalue}")
        return "\n".join(parts)

    def magic(self, code: str) -> str:
        cell = nbformat.v4.new_code_cell(code)
        self.nb.cells.append(cell)  # nbclient writes outputs through the notebook
        self.client.execute_cell(cell, len(self.nb.cells) - 1)
        said = self.text(cell)
        assert not any(o.output_type == "error" for o in cell.outputs), said
        return said

    def names(self) -> list[str]:
        kc = self.client.kc
        assert kc is not None
        msg_id = kc.execute("", silent=True, user_expressions={"names": NAMES})
        while True:
            reply = run_sync(kc.get_shell_msg)(timeout=CELL_SECONDS)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        value = reply["content"]["user_expressions"]["names"]
        assert value["status"] == "ok", value
        return eval(value["data"]["text/plain"])  # a list of identifiers, printed by repr


def names_said(report: str, names: set[str]) -> set[str]:
    """The names a rewind or undo report mentions as variables."""
    return {n for n in names if f"variable {n} " in report or f"{n} (" in report}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_a_real_notebook_rewinds_to_before_its_run_and_undoes_to_after_it(
    notebook: Path, tmp_path: Path
) -> None:
    env = {
        **make_kernel_env(tmp_path, thread=notebook.stem),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(tmp_path / "mpl"),
    }
    folder = tmp_path / "logician"
    prepare(folder)
    before = tree(folder)
    run = Run(notebook, folder, "logician", env)
    with run.client.setup_kernel(env=env):
        first = set(run.names())
        for index, cell in enumerate(run.nb.cells):
            run.client.execute_cell(cell, index)
        after = tree(folder)
        bound = set(run.names()) - first
        assert bound, "the notebook bound no name: the checks below would be empty"
        outputs = [run.text(c) for c in run.cells()]
        logician_errors = run.errors()
        for source, said in zip((c.source for c in run.cells()), outputs, strict=True):
            if "writes to the workspace" in said:  # only a cell that writes is told so
                assert "open(" in source or "%%writefile" in source, (source, said)
        for name in bound:  # not captured: said by a cell that bound or used it, not later
            told = [
                c.source
                for c, said in zip(run.cells(), outputs, strict=True)
                if NOT_CAPTURED in said and f" {name} (" in said and name not in c.source
            ]
            assert told == [], (name, told)
        for source, said in zip((c.source for c in run.cells()), outputs, strict=True):
            if "nothere" in source:  # a failed clone changed nothing and captured nothing
                assert NOT_CAPTURED not in said, said

        report = run.magic("%logician rewind 1")
        assert changed(tree(folder), before) == [], report
        left = set(run.names()) & bound
        assert left <= names_said(report, left), f"left, and not named: {left}\n{report}"

        report = run.magic("%logician undo")
        assert changed(tree(folder), after) == [], report
        missing = bound - set(run.names())
        assert missing <= names_said(report, missing), f"not back: {missing}\n{report}"

    plain_folder = tmp_path / "plain"
    prepare(plain_folder)
    plain = Run(notebook, plain_folder, "python3", env)
    with plain.client.setup_kernel(env=env):
        for index, cell in enumerate(plain.nb.cells):
            plain.client.execute_cell(cell, index)
    assert logician_errors == plain.errors()
