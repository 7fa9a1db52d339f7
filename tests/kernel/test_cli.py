"""The `logician` command as a user types it: install, run, config, trust - real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import RESOURCES
from kernel_harness import clean_env
from nbformat.v4 import new_code_cell, new_notebook

from logician_kernel.jupyter.kernelspec import LOGOS, kernel_json

# Past the 300 s each `logician` command may take (`logician`, below), so that a command
# which hangs is reported as its own timeout, with its output, not as the suite's.
pytestmark = [pytest.mark.kernel, pytest.mark.timeout(330)]
LOGICIAN = str(Path(sys.executable).parent / "logician")
REPO = Path(__file__).parents[2]


def _inherited() -> dict[str, str]:
    """This process's environment without keys or Logician settings, keeping the suite's
    isolated user config directory (conftest.py)."""
    return clean_env(LOGICIAN_CONFIG_DIR=os.environ["LOGICIAN_CONFIG_DIR"])


def logician(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LOGICIAN, *args],
        cwd=cwd,
        env=env or _inherited(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_install_into_a_prefix_writes_a_kernelspec_that_starts_this_interpreter(
    tmp_path: Path,
) -> None:
    r = logician("install", "--prefix", str(tmp_path / "env"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    spec = json.loads((tmp_path / "env/share/jupyter/kernels/logician/kernel.json").read_text())
    assert Path(spec["argv"][0]).resolve() == Path(sys.executable).resolve()
    assert spec["argv"][1:3] == ["-m", "logician_kernel"]
    assert spec["display_name"] == "Python 3 (Logician)"
    logo = tmp_path / "env/share/jupyter/kernels/logician/logo-64x64.png"
    # The launcher must tell the two kernels apart: our logo, not ipykernel's Python logo.
    assert logo.read_bytes() != (Path(RESOURCES) / "logo-64x64.png").read_bytes()


def test_the_shipped_kernelspec_has_the_kernels_own_logos() -> None:
    shipped = REPO / "share/jupyter/kernels/logician"
    for name in ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg"):
        assert (shipped / name).read_bytes() == (LOGOS / name).read_bytes(), name


def test_the_shipped_kernelspec_matches_the_one_the_code_writes() -> None:
    shipped = json.loads((REPO / "share/jupyter/kernels/logician/kernel.json").read_text())
    assert shipped == kernel_json()


def test_the_wheel_ships_the_kernelspec_and_the_lab_extension_without_nodejs(
    tmp_path: Path,
) -> None:
    """What makes `pip install .` register the kernel, the way ipykernel ships `python3`, and
    list the lab extension: built with only this interpreter's folder on PATH (no Node.js)."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    assert shutil.which("node", path=env["PATH"]) is None
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = tmp_path.glob("logician_kernel-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        spec = next(n for n in names if n.endswith("share/jupyter/kernels/logician/kernel.json"))
        assert ".data/data/share/jupyter/kernels/logician/" in spec
        assert json.loads(zf.read(spec)) == kernel_json()
        assert any(
            n.endswith("entry_points.txt") and b"logician = logician_kernel.cli:main" in zf.read(n)
            for n in names
        )
        lab = ".data/data/share/jupyter/labextensions/logician-kernel/"
        built = {n.split(lab, 1)[1] for n in names if lab in n}
        assert {"package.json", "install.json", "static/style.js"} <= built
        assert any(n.startswith("static/remoteEntry.") for n in built)


def _notebook(path: Path, *sources: str) -> Path:
    nb = new_notebook(
        cells=[new_code_cell(s) for s in sources],
        metadata={
            "kernelspec": {
                "name": "logician",
                "display_name": "Python 3 (Logician)",
                "language": "python",
            }
        },
    )
    nbformat.write(nb, path)
    return path


def test_run_executes_headless_and_summarises_frames(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "work.ipynb", "open('out.txt', 'w').write('x')", "print('done')")
    r = logician("run", str(nb), "-o", str(tmp_path / "executed.ipynb"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "2 code cell(s), 2 frame(s)" in r.stdout
    assert "created out.txt" in r.stdout
    executed = nbformat.read(tmp_path / "executed.ipynb", as_version=4)
    assert executed.cells[1].outputs[0]["text"] == "done\n"


def test_run_keeps_every_line_of_a_cell_that_prints_thousands(tmp_path: Path) -> None:
    """Each flushed `print` is one IOPub message: ZMQ's bound of 1,000 queued messages dropped
    lines from the middle of the saved output (over IPC), and nbclient's 4 s wait after the
    reply cut its end on a loaded machine. Every line is kept, in order, and the cell after."""
    lines = 3000
    nb = _notebook(
        tmp_path / "chatty.ipynb",
        f"for i in range({lines}):\n    print(i, flush=True)",
        "print('after')",
    )
    r = logician("run", str(nb), "-o", str(tmp_path / "out.ipynb"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cells = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells
    printed = "".join(o.get("text", "") for o in cells[0].outputs).splitlines()
    assert len(cells[0].outputs) == 1  # one stream output, as JupyterLab saves it
    assert printed == [str(i) for i in range(lines)], f"{len(printed)} of {lines} lines kept"
    assert [o.get("text") for o in cells[1].outputs] == ["after\n"]


def test_run_in_a_team_folder_summarises_the_members_own_frames(tmp_path: Path) -> None:
    """A team's shared `.logician/` (another owner, sticky, group-writable): the run's frames
    live in this account's `users/<uid>/` folder, and the summary reads them from there."""
    if os.geteuid() != 0:
        pytest.skip("giving .logician/ another owner needs root")
    shared = tmp_path / ".logician"
    shared.mkdir()
    os.chown(shared, 4242, 4242)
    shared.chmod(0o3770)
    users = shared / "users"  # made by the owner, as docs/deploy.md says
    users.mkdir()
    os.chown(users, 4242, 4242)
    users.chmod(0o3770)
    nb = _notebook(tmp_path / "team.ipynb", "open('mine.txt', 'w').write('x')")
    r = logician("run", str(nb), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "1 code cell(s), 1 frame(s)" in r.stdout, r.stdout
    assert "created mine.txt" in r.stdout
    assert (users / str(os.geteuid()) / "threads").is_dir()
    assert not (shared / "threads").exists()


def test_run_talks_to_its_kernel_over_ipc_and_shuts_it_down_quietly(tmp_path: Path) -> None:
    """No kernel port on the network, no "unencrypted TCP" warning, and no kernel left behind
    to log "Parent appears to have exited" after the command returned."""
    nb = _notebook(
        tmp_path / "ipc.ipynb",
        "import json, os, ipykernel.connect\n"
        "info = json.load(open(ipykernel.connect.get_connection_file()))\n"
        "born = open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19]\n"
        "print(info['transport'], os.getpid(), born)",
    )
    r = logician("run", str(nb), "-o", str(tmp_path / "out.ipynb"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    transport, pid, born = (
        nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[0].outputs[0]["text"].split()
    )
    assert transport == "ipc"
    # the kernel is gone, not orphaned; a process with its pid and another start time is a
    # later one that reuses the pid (beside a second suite, pid_max 32768 wraps in minutes)
    try:
        still = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19] == born
    except OSError:
        still = False
    assert not still, f"the kernel (pid {pid}) still runs after `logician run` returned"
    assert "without encryption" not in r.stderr, r.stderr
    assert "Parent appears to have exited" not in r.stderr, r.stderr


def test_run_exits_non_zero_when_a_cell_fails(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "bad.ipynb", "raise RuntimeError('broken cell')", "print('never')")
    r = logician("run", str(nb), cwd=tmp_path)
    assert r.returncode == 1
    assert "broken cell" in r.stderr
    r = logician("run", str(tmp_path / "missing.ipynb"), cwd=tmp_path)
    assert r.returncode == 2 and "no such notebook" in r.stderr


def test_a_failed_run_names_the_error_and_its_notebook_shows_where_it_stopped(
    tmp_path: Path,
) -> None:
    """The error's name, value and traceback in the terminal (not a row of dashes), and in the
    -o notebook the failing cell marked and the cells below it cleared, never stale outputs
    from an earlier run under a fresh failure."""
    nb = _notebook(
        tmp_path / "sales.ipynb",
        "print('loaded')",
        "def total(d):\n    return d['sales']\n\ntotal({})",
        "print('after')",
    )
    stale = nbformat.read(nb, as_version=4)
    stale.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="STALE\n")]
    stale.cells[2].execution_count = 99
    nbformat.write(stale, nb)
    r = logician("run", str(nb), "-o", str(tmp_path / "out.ipynb"), cwd=tmp_path)
    assert r.returncode == 1
    first = r.stderr.strip().splitlines()
    assert first[0] == "logician run: In [2]: KeyError: 'sales'", r.stderr
    assert any("return d['sales']" in line for line in first), r.stderr
    assert "\x1b[" not in r.stderr
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert [c.cell_type for c in out.cells] == ["code", "markdown", "code", "code"]
    assert "KeyError: 'sales'" in out.cells[1].source
    assert "logician-run-failed" in out.cells[2].metadata["tags"]
    assert out.cells[3].outputs == [] and out.cells[3].execution_count is None


def test_config_and_trust_commands(tmp_path: Path) -> None:
    env = clean_env(LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg"))
    ws = tmp_path / "ws"
    (ws / ".logician").mkdir(parents=True)
    (ws / ".logician" / "config.toml").write_text('[model]\nname = "proj"\n')
    r = logician("config", "show", "--json", cwd=ws, env=env)
    assert r.returncode == 0, r.stderr
    assert "not applied" in r.stderr.lower() and "logician trust" in r.stderr
    assert json.loads(r.stdout)
    r = logician("trust", str(ws), cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    r = logician("config", "get", "model.name", cwd=ws, env=env)
    assert '"proj"' in r.stdout and "project" in r.stdout
    r = logician("config", "get", "model.nam", cwd=ws, env=env)
    assert r.returncode == 2 and "model.name" in r.stderr
    r = logician("config", "schema", cwd=ws, env=env)
    assert json.loads(r.stdout)["title"]
