"""The Logician kernel behind a real Jupyter Kernel Gateway: started from the gateway's own
directory, told the notebook's directory in KERNEL_WORKING_DIR, driven over the websocket."""

from __future__ import annotations

from pathlib import Path

import pytest
from gateway import Gateway
from kernel_harness import git

pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


def project(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "data.csv").write_text("a,b\n1,2\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    return path


def test_each_notebook_directory_gets_its_own_workspace_frames_and_rewind(tmp_path: Path) -> None:
    launch_dir = tmp_path / "gateway-home"
    launch_dir.mkdir()
    first, second = project(tmp_path / "team" / "first"), tmp_path / "team" / "second"
    (second / "nb").mkdir(parents=True)
    # As most gateways are deployed: the kernel gets the config location it is told to forward,
    # and no API key (the gateway's environment does not reach kernels by default).
    gw = Gateway(launch_dir, forward=("LOGICIAN_CONFIG_DIR", "JUPYTER_PLATFORM_DIRS")).start()
    kernels = []
    try:
        k1 = gw.start_kernel({"KERNEL_WORKING_DIR": str(first), "KERNEL_USERNAME": "test"})
        kernels.append(k1)
        r = k1.run("import os; print(os.getcwd())\nopen('data.csv', 'a').write('3,4\\n')")
        assert r.status == "ok", r.text
        assert r.stream("stdout").strip() == str(first)
        assert f"the workspace is {first} (from KERNEL_WORKING_DIR=" in r.stream("stderr")

        listing = k1.run("%logician frames").text
        assert "1 modified" in listing.splitlines()[1], listing
        assert (first / ".logician" / "threads").is_dir()
        assert not (launch_dir / ".logician").exists()

        r = k1.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (first / "data.csv").read_text() == "a,b\n1,2\n"

        # The agent's first error says which variable is missing and which gateway setting
        # forwards it, in one line, with no traceback.
        r = k1.run("%%logician\nsay hi")
        assert "OPENAI_API_KEY" in r.text and "KG_ENV_PROCESS_WHITELIST" in r.text, r.text
        assert "EG_INHERITED_ENVS" in r.text and "Traceback" not in r.text

        k2 = gw.start_kernel({"KERNEL_WORKING_DIR": str(second / "nb")})
        kernels.append(k2)
        r = k2.run("open('notes.txt', 'w').write('n')")
        assert r.status == "ok", r.text
        assert f"the workspace is {second / 'nb'}" in r.stream("stderr")
        assert (second / "nb" / ".logician" / "threads").is_dir()
        assert "1 created" in k2.run("%logician frames").text
        assert "created" not in k1.run("%logician frames").text  # the two never share frames
    finally:
        for k in kernels:
            k.shutdown()
        gw.stop()


def test_a_gateway_kernel_left_in_a_home_directory_runs_with_frames_off(tmp_path: Path) -> None:
    # The gateway runs in its account's home and no KERNEL_WORKING_DIR comes with the request
    # (an SSH process proxy's remote account, a misconfigured server): that home must not
    # become the workspace, with everything under it snapshotted and rewindable.
    home = tmp_path / "svc-home"
    home.mkdir()
    (home / "team").mkdir()  # a team folder mounted in it, as on the reported host
    # PYTHONPATH too: the kernel must run this tree's package, not whatever is installed.
    forward = ("LOGICIAN_CONFIG_DIR", "HOME", "PYTHONPATH")
    gw = Gateway(home, forward=forward, env={"HOME": str(home)}).start()
    kernel = None
    try:
        kernel = gw.start_kernel({"KERNEL_USERNAME": "test"})
        r = kernel.run("import os; print(os.getcwd()); open('x.txt', 'w').write('x')")
        assert r.status == "ok", r.text  # cells run as in a plain kernel
        assert r.stream("stdout").strip() == str(home)
        said = r.stream("stderr")
        assert f"frames are off for this session: a gateway started this kernel in {home}" in said
        assert "a home directory" in said and "no KERNEL_WORKING_DIR reached it" in said
        assert "workspace.root" in said and "restart the kernel" in said
        assert not (home / ".logician").exists()
        assert "frames are off" in kernel.run("%logician frames").text
    finally:
        if kernel is not None:
            kernel.shutdown()
        gw.stop()
