"""Shared fixtures: isolated user config, a `logician` kernelspec for this interpreter, and a
real kernel subprocess driven through jupyter_client."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Before any of our models is created: the tests read field descriptions (types/field_docs.py);
# kernels they start run without it (kernel_harness.clean_env drops LOGICIAN_*), as users' do.
os.environ["LOGICIAN_FIELD_DOCS"] = "1"
sys.path.insert(0, str(Path(__file__).parent))

from kernel_harness import NOTICES_IN_CELLS, git, make_kernel_env  # noqa: E402
from loopback import LoopbackServer  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-screenshots",
        action="store_true",
        help="the browser tests also write the README's screenshots into docs/images/",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-screenshots", default=False):
        os.environ["LOGICIAN_UPDATE_SCREENSHOTS"] = "1"


@pytest.fixture(autouse=True)
def _notices_in_cells(request: pytest.FixtureRequest):
    """`@pytest.mark.notices_in_cells`: this test reads Logician's notices in the output of
    the cells they are about, so its kernels run with `ui.notices = "cell"`."""
    NOTICES_IN_CELLS["on"] = request.node.get_closest_marker("notices_in_cells") is not None
    yield
    NOTICES_IN_CELLS["on"] = False


@pytest.fixture(autouse=True, scope="session")
def _isolated_jupyter_and_config(tmp_path_factory: pytest.TempPathFactory):
    """Never read the developer's own config or kernelspecs; never write outside tmp."""
    from logician_kernel.jupyter.kernelspec import write_kernel_spec

    root = tmp_path_factory.mktemp("jupyter")
    write_kernel_spec(root / "data" / "kernels" / "logician", executable=sys.executable)
    saved = {
        k: os.environ.get(k)
        for k in ("JUPYTER_PATH", "LOGICIAN_CONFIG_DIR", "JUPYTER_PLATFORM_DIRS")
    }
    os.environ["JUPYTER_PATH"] = str(root / "data")
    os.environ["LOGICIAN_CONFIG_DIR"] = str(root / "user-config")
    os.environ["JUPYTER_PLATFORM_DIRS"] = "1"
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A git repository with one commit, as most users' projects are."""
    ws = tmp_path / "project"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "data.csv").write_text("a,b\n1,2\n")
    (ws / "script.sh").write_text("#!/bin/sh\necho hi\n")
    (ws / ".gitignore").write_text("*.log\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "init")
    return ws


@pytest.fixture
def kernel_env(tmp_path: Path) -> dict[str, str]:
    return make_kernel_env(tmp_path)


@pytest.fixture
def server():
    """A scripted model server on loopback (tests/loopback.py), for the agent's tests."""
    with LoopbackServer() as s:
        yield s


@pytest.fixture
def model_env(kernel_env: dict[str, str], server: LoopbackServer) -> dict[str, str]:
    """A kernel environment whose agent talks to `server`, in the default permission mode."""
    return {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "test-key-not-secret",
    }


@pytest.fixture
def agent_env(model_env: dict[str, str]) -> dict[str, str]:
    """`model_env` in full-auto: for tests about the loop, not approvals (test_kernel_approvals.py
    is)."""
    return {**model_env, "LOGICIAN_PERMISSIONS__MODE": "full-auto"}
