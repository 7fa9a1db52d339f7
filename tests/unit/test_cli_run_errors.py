"""`logician run` refuses bad input in one line naming it, before any cell runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logician_kernel.cli import main


def notebook(path: Path, code: str) -> Path:
    cell = {
        "cell_type": "code",
        "metadata": {},
        "source": code,
        "outputs": [],
        "execution_count": None,
    }
    path.write_text(
        json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    return path


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("print('hello')\n", "is not a Jupyter notebook (not JSON)"),
        ('{"cells": 5}', "is not a Jupyter notebook (no list of cells)"),
        ('{"cells": [{"cell_type": "nope"}]}', "is not a valid Jupyter notebook"),
    ],
)
def test_a_file_that_is_not_a_notebook_is_named(tmp_path: Path, capsys, content, says) -> None:
    path = tmp_path / "x.ipynb"
    path.write_text(content)
    assert main(["run", str(path)]) == 2
    err = one_line_error(capsys)
    assert str(path) in err and says in err


def test_a_missing_output_directory_is_refused_before_any_cell_runs(tmp_path: Path, capsys) -> None:
    nb = notebook(tmp_path / "n.ipynb", "open('ran.txt', 'w').write('x')")
    assert main(["run", str(nb), "-o", str(tmp_path / "missing" / "x.ipynb")]) == 2
    err = one_line_error(capsys)
    assert "-o" in err and "missing" in err and "does not exist" in err
    assert not (tmp_path / "ran.txt").exists()


@pytest.mark.parametrize("value", ["-1", "0"])
def test_a_timeout_that_is_not_positive_is_refused(tmp_path: Path, capsys, value: str) -> None:
    nb = notebook(tmp_path / "n.ipynb", "open('ran.txt', 'w').write('x')")
    assert main(["run", str(nb), "--timeout", value]) == 2
    assert f"--timeout {value}: must be a positive number of seconds" in one_line_error(capsys)
    assert not (tmp_path / "ran.txt").exists()
