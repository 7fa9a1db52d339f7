"""The Logician kernel identifies like ipykernel where clients look (docs/drop-in.md): the same
kernel_info fields, the same kernelspec fields, Curve encryption, and IPython's history kept in
memory under headless runners while interactive launches keep it on disk."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import RESOURCES, get_kernel_dict
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager, start_new_kernel
from kernel_harness import clean_env
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from logician_kernel import __version__
from logician_kernel.jupyter.launcher import VSCODE_ENV
from logician_kernel.jupyter.runner import run_notebook

pytestmark = pytest.mark.kernel

HISTORY_FILE = "get_ipython().history_manager.hist_file"


def _info(kernel_name: str, cwd: Path, env: dict[str, str]) -> dict:
    km, kc = start_new_kernel(kernel_name=kernel_name, cwd=str(cwd), env=env)
    try:
        msg_id = kc.kernel_info()
        while (reply := kc.get_shell_msg(timeout=60))["parent_header"]["msg_id"] != msg_id:
            pass
        return reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_kernel_info_is_ipykernels_with_logician_in_banner_and_version(tmp_path: Path) -> None:
    env = clean_env(LOGICIAN_THREAD="identity", IPYTHONDIR=str(tmp_path / "ipython"))
    ours = _info("logician", tmp_path, env)
    theirs = _info("python3", tmp_path, env)
    for field in (
        "implementation",
        "implementation_version",
        "language_info",
        "help_links",
        "protocol_version",
        "supported_features",
    ):
        assert ours[field] == theirs[field], field
    assert ours["implementation"] == "ipython"
    # IPython's banner ends with a tip drawn at random; the lines before it are the same
    assert ours["banner"].startswith(theirs["banner"].split("Tip:")[0])
    assert f"Logician Kernel {__version__}" in ours["banner"]
    assert ours["logician_version"] == __version__ and "logician_version" not in theirs


def test_kernelspec_declares_what_ipykernels_python3_spec_declares() -> None:
    specs = KernelSpecManager()
    ours, theirs = specs.get_kernel_spec("logician"), specs.get_kernel_spec("python3")
    mine, native = ours.to_dict(), theirs.to_dict()
    # the argv starts this package, the name tells the two apart in a launcher; all else equal
    for field in sorted((set(mine) | set(native)) - {"argv", "display_name"}):
        assert mine.get(field) == native.get(field), field
    assert native["metadata"] == get_kernel_dict()["metadata"]  # the installed one is current
    assert ours.argv[1:] == ["-m", "logician_kernel", "-f", "{connection_file}"]
    logos = {p.name for p in Path(RESOURCES).glob("logo-*")}
    assert {p.name for p in Path(ours.resource_dir).glob("logo-*")} == logos


def test_jupyter_client_starts_it_with_encryption_required(tmp_path: Path) -> None:
    km = KernelManager(kernel_name="logician", transport_encryption="required")
    km.start_kernel(
        cwd=str(tmp_path), env=clean_env(LOGICIAN_THREAD="curve", IPYTHONDIR=str(tmp_path))
    )
    kc = km.client()
    kc.start_channels()
    try:
        assert km.curve_publickey and km.get_connection_info().get("curve_publickey")
        kc.wait_for_ready(timeout=120)
        reply = kc.execute_interactive("print(6 * 7)", timeout=120, output_hook=lambda m: None)
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _stdout(msg: dict) -> bool:
    return msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout"


def _history_files(ipython_dir: Path) -> list[Path]:
    return sorted(ipython_dir.rglob("history.sqlite"))


def test_nbclient_runs_keep_history_in_memory_and_write_no_database(tmp_path: Path) -> None:
    ipython_dir = tmp_path / "ipython"
    nb = new_notebook(cells=[new_code_cell("x = 1"), new_code_cell(f"print({HISTORY_FILE})")])
    saved = os.environ.copy()
    os.environ.update(IPYTHONDIR=str(ipython_dir), LOGICIAN_THREAD="headless")
    for interactive in ("JPY_SESSION_NAME", *VSCODE_ENV):  # a developer's terminal may set them
        os.environ.pop(interactive, None)
    try:
        NotebookClient(
            nb, kernel_name="logician", resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert nb.cells[1].outputs[0]["text"].strip() == ":memory:"
    assert _history_files(ipython_dir) == []


def test_logician_run_keeps_history_in_memory(tmp_path: Path) -> None:
    ipython_dir = tmp_path / "ipython"
    path = tmp_path / "nb.ipynb"
    cell = f"open('hist.txt', 'w').write({HISTORY_FILE})"
    nbformat.write(new_notebook(cells=[new_code_cell(cell)]), path)
    saved = os.environ.copy()
    os.environ["IPYTHONDIR"] = str(ipython_dir)
    try:
        summary = run_notebook(path)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert summary.failed is None
    assert (tmp_path / "hist.txt").read_text() == ":memory:"
    assert _history_files(ipython_dir) == []


def test_a_kernel_started_as_jupyterlab_starts_it_writes_history_to_disk(tmp_path: Path) -> None:
    """jupyter_server passes the notebook's path as JPY_SESSION_NAME (as JupyterLab's sessions
    do); such a kernel keeps IPython's history on disk, like ipykernel."""
    ipython_dir = tmp_path / "ipython"
    env = clean_env(IPYTHONDIR=str(ipython_dir), JPY_SESSION_NAME=str(tmp_path / "Untitled.ipynb"))
    km, kc = start_new_kernel(kernel_name="logician", cwd=str(tmp_path), env=env)
    try:
        outputs: list[dict] = []
        kc.execute_interactive(f"print({HISTORY_FILE})", timeout=120, output_hook=outputs.append)
        printed = "".join(m["content"]["text"] for m in outputs if _stdout(m))
        assert printed.strip() == str(ipython_dir / "profile_default" / "history.sqlite")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert _history_files(ipython_dir) == [ipython_dir / "profile_default" / "history.sqlite"]


def test_an_explicit_history_file_is_kept(tmp_path: Path) -> None:
    """A `--HistoryManager.hist_file` the launcher passes wins over the kernel's own choice."""
    chosen = tmp_path / "mine.sqlite"
    km = KernelManager(kernel_name="logician")
    km.start_kernel(
        cwd=str(tmp_path),
        env=clean_env(IPYTHONDIR=str(tmp_path / "ipython"), LOGICIAN_THREAD="explicit"),
        extra_arguments=[f"--HistoryManager.hist_file={chosen}"],
    )
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        outputs: list[dict] = []
        kc.execute_interactive(f"print({HISTORY_FILE})", timeout=120, output_hook=outputs.append)
        printed = "".join(m["content"]["text"] for m in outputs if _stdout(m))
        assert printed.strip() == str(chosen)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert chosen.is_file()
