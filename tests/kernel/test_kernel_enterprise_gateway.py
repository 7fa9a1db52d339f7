"""The Logician kernel behind a real Jupyter Enterprise Gateway 3.3.0: launched by EG's own
Python launcher selecting our kernel class (`--kernel-class-name`), from a gateway started
in a directory of its own, told the notebook's directory in KERNEL_WORKING_DIR, driven over
the websocket (see tests/enterprise_gateway.py for why EG has a venv of its own)."""

from __future__ import annotations

from pathlib import Path

import pytest
from enterprise_gateway import EnterpriseGateway, missing, write_kernelspec
from kernel_harness import git

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.notices_in_cells,  # reads the workspace notice of the first cell
    pytest.mark.skipif(missing() is not None, reason=missing() or ""),
]


def project(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "data.csv").write_text("a,b\n1,2\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    return path


@pytest.mark.parametrize("proxy", ["launcher", "local"])
def test_enterprise_gateway_kernel_works_in_the_notebooks_workspace(
    tmp_path: Path, proxy: str
) -> None:
    launch_dir = tmp_path / "eg-home"
    launch_dir.mkdir()
    spec = write_kernelspec(tmp_path / "eg-data", proxy)
    ws = project(tmp_path / "team" / "proj")
    # Enterprise Gateway hands a kernel only the variables EG_INHERITED_ENVS names (not even
    # PATH or HOME) plus the client's KERNEL_*: here the config location and no API key, so
    # the agent's first error must say how to forward one.
    eg = EnterpriseGateway(launch_dir, spec.parent.parent, inherited=("LOGICIAN_CONFIG_DIR",))
    kernel = None
    try:
        eg.start()
        assert spec.name in eg.kernelspecs()
        # KERNEL_USERNAME as JupyterLab's gateway client sends it (EG refuses 'root').
        kernel = eg.start_kernel(
            spec.name, {"KERNEL_WORKING_DIR": str(ws), "KERNEL_USERNAME": "test"}
        )
        r = kernel.run(
            "import os; print(os.getcwd()); print(type(get_ipython().kernel).__name__)\n"
            "open('data.csv', 'a').write('3,4\\n')"
        )
        assert r.status == "ok", r.text + eg.tail()
        cwd, kernel_class = r.stream("stdout").split()
        assert (cwd, kernel_class) == (str(ws), "LogicianKernel")
        assert f"the workspace is {ws} (from KERNEL_WORKING_DIR=" in r.stream("stderr")

        listing = kernel.run("%logician frames").text
        assert "1 modified" in listing, listing
        assert (ws / ".logician" / "threads").is_dir()
        assert not (launch_dir / ".logician").exists()

        r = kernel.run("open('new.txt', 'w').write('n')")
        assert r.status == "ok", r.text
        r = kernel.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert not (ws / "new.txt").exists()
        r = kernel.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (ws / "data.csv").read_text() == "a,b\n1,2\n"

        # The gateway's environment did not reach the kernel: one line naming the variable
        # and EG_INHERITED_ENVS, no traceback.
        r = kernel.run("%%logician\nsay hi")
        assert "OPENAI_API_KEY" in r.text and "EG_INHERITED_ENVS" in r.text, r.text
        assert "Traceback" not in r.text
    finally:
        if kernel is not None:
            kernel.shutdown()
        eg.stop()
