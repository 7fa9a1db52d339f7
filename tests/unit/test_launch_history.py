"""Where IPython's history goes, from who started the kernel (jupyter/launcher.py)."""

from __future__ import annotations

import os

import pytest

from logician_kernel.jupyter.launcher import ancestor_command_lines, classify, history_in_memory

BIN = "/home/u/.venv/bin/"


@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        ([BIN + "python", BIN + "papermill", "in.ipynb", "out.ipynb"], "headless"),
        ([BIN + "python3.12", BIN + "jupyter-nbconvert", "--execute", "a.ipynb"], "headless"),
        ([BIN + "python", BIN + "jupyter-execute", "a.ipynb"], "headless"),
        (["python", "-u", "-m", "nbclient", "a.ipynb"], "headless"),
        (["python", "-m", "papermill", "a.ipynb", "b.ipynb"], "headless"),
        ([BIN + "python", BIN + "logician", "run", "a.ipynb"], "headless"),
        ([BIN + "python", BIN + "jupyter-lab", "--no-browser"], "interactive"),
        (["jupyter", "lab"], "interactive"),
        (["python", "-m", "jupyterlab"], "interactive"),
        ([BIN + "python", BIN + "jupyter-console", "--kernel", "logician"], "interactive"),
        ([BIN + "python", BIN + "jupyter-kernelgateway"], "interactive"),
        ([BIN + "python", "-m", "pytest", "tests"], None),
        (["python", "script.py", "papermill"], None),
        ([BIN + "python", BIN + "logician", "install"], None),
        ([], None),
    ],
)
def test_command_lines_are_told_apart(argv: list[str], kind: str | None) -> None:
    assert classify(argv) == kind


PAPERMILL = ["python", "/v/bin/papermill", "a.ipynb", "b.ipynb"]
LAB = ["python", "/v/bin/jupyter-lab"]
SCRIPT = ["python", "run_all.py"]


def test_the_nearest_recognised_launcher_decides() -> None:
    # papermill run from a JupyterLab terminal or cell: the runner is nearer than the server,
    # and the session name it inherited from the notebook kernel does not make it interactive
    assert history_in_memory([PAPERMILL, LAB], {"JPY_SESSION_NAME": "a.ipynb"})[0] is True
    assert history_in_memory([LAB, PAPERMILL], {})[0] is False


def test_without_a_recognised_launcher_a_session_name_or_vscode_means_disk() -> None:
    assert history_in_memory([SCRIPT], {"JPY_SESSION_NAME": "/w/a.ipynb"}) == (
        False,
        "a notebook session name (JPY_SESSION_NAME) reached the kernel",
    )
    assert history_in_memory([SCRIPT], {"VSCODE_PID": "42"})[0] is False
    memory, why = history_in_memory([SCRIPT], {"JPY_SESSION_NAME": " "})
    assert memory is True and "no notebook session" in why


def test_this_processs_ancestors_are_read() -> None:
    lines = ancestor_command_lines()
    assert lines and all(isinstance(a, str) for argv in lines for a in argv)
    if os.getppid() > 1:
        assert lines[0]  # the parent's command line is never empty
