"""A real JupyterLab server and headless Chromium, for the lab extension's tests and benchmark.

`LabServer` runs `jupyter lab` from this venv (where `pip install` put the prebuilt extension
and the kernelspec) on a free loopback port, in its own root, settings and runtime dirs.
`open_browser` starts Debian's Chromium through Playwright (never a downloaded browser).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat

import logician_kernel
from logician_kernel.ledger.thread_ledger import FrameClose, FrameOpen, ThreadLedger
from logician_kernel.workspace.open_thread import thread_id_for

START_TIMEOUT = 300.0
"""How long a JupyterLab server may take to answer its first request (a loaded machine's)."""

CHROMIUM = os.environ.get("LOGICIAN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "lab"
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
"""The README's pictures: written by the browser tests under `--update-screenshots`, so a
picture is always of the extension as the tests drive it."""


def screenshot(page: Any, name: str, *, docs: bool = False) -> Path:
    """A screenshot into test-artifacts/lab/; with `docs`, under `--update-screenshots` (which
    sets LOGICIAN_UPDATE_SCREENSHOTS), also into docs/images/."""
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    if docs and os.environ.get("LOGICIAN_UPDATE_SCREENSHOTS"):
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMAGES / name)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LabServer:
    """`jupyter lab` on loopback, rooted at `root`, with a throwaway token."""

    def __init__(
        self, root: Path, home: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
    ) -> None:
        self.root = root
        self.args = args
        """Extra command-line options, e.g. `--gateway-url=...`."""
        self.port = _free_port()
        self.token = uuid.uuid4().hex
        self.url = f"http://127.0.0.1:{self.port}"
        for name in ("settings", "workspaces", "runtime", "config", "logician"):
            (home / name).mkdir(parents=True, exist_ok=True)
        # no "get notified about Jupyter news?" toast over the page
        notification = home / "settings" / "@jupyterlab" / "apputils-extension"
        notification.mkdir(parents=True, exist_ok=True)
        (notification / "notification.jupyterlab-settings").write_text(
            '{"fetchNews": "false", "checkForUpdates": false}'
        )
        self.env = {
            **os.environ,
            "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "LOGICIAN_CONFIG_DIR": str(home / "logician"),
            **(env or {}),
        }
        for key in ("LOGICIAN_THREAD", "JPY_SESSION_NAME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            self.env.pop(key, None)
        self.log = home / "lab.log"
        _serve_this_build(self.env)
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LabServer:
        jupyter = Path(sys.executable).with_name("jupyter")
        self._log = self.log.open("wb")
        self._proc = subprocess.Popen(
            [
                str(jupyter),
                "lab",
                "--no-browser",
                "--allow-root",
                f"--port={self.port}",
                "--ip=127.0.0.1",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}",
                "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.expose_app_in_browser=True",
                "--ServerApp.disable_check_xsrf=True",
                *self.args,
            ],
            cwd=self.root,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        # A condition, not a time: at a load average of 20 the server's extensions took over
        # a minute to load; the bound is only for a server that never answers.
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: {self.log.read_text()[-3000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if (
                    httpx.get(f"{self.url}/api/status", params={"token": self.token}).status_code
                    == 200
                ):
                    return self
            time.sleep(0.25)
        self._proc.kill()  # not left running past the test that waited for it
        self._proc.wait()
        self._log.close()
        raise RuntimeError(
            f"jupyter lab did not start in {START_TIMEOUT:.0f} s: {self.log.read_text()[-3000:]}"
        )

    def __exit__(self, *exc: object) -> None:
        assert self._proc is not None
        with contextlib.suppress(httpx.HTTPError):  # shut kernels down cleanly first
            httpx.post(f"{self.url}/api/shutdown", params={"token": self.token}, timeout=10)
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._log.close()

    def notebook_url(self, path: str) -> str:
        return f"{self.url}/lab/tree/{path}?token={self.token}&reset"


def _serve_this_build(env: dict[str, str]) -> None:
    """The Lab loads the extension build of the tree under test (the `logician_kernel` this
    process imports), not whichever one `pip install` copied into the venv: linked first on the
    test session's own JUPYTER_PATH (conftest.py), where the Lab looks first."""
    built = Path(logician_kernel.__file__).resolve().parent / "labextension"
    first = (env.get("JUPYTER_PATH") or "").split(os.pathsep)[0]
    if not first or not (built / "package.json").is_file():
        return
    link = Path(first) / "labextensions" / "logician-kernel"
    if link.is_symlink() or link.exists():
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(built, target_is_directory=True)


@contextlib.contextmanager
def open_browser() -> Iterator[Any]:
    """A Playwright Chromium browser (Debian's, headless)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise RuntimeError(
            f"no Chromium at {CHROMIUM}: `apt-get install chromium` (scripts/setup.sh does it "
            "as root), or point LOGICIAN_CHROMIUM at one"
        )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def checked_page(browser: Any, name: str, *, height: int = 900) -> Iterator[Any]:
    """A page of its own (1400 px wide) whose last screenshot lands in the artifacts as
    `<name>-final.png`; the block fails when the extension raised in the page."""
    context = browser.new_context(viewport={"width": 1400, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}-final.png"))
        context.close()
    assert not [e for e in errors if "logician" in e.lower() or "lk-" in e], errors


def write_notebook(path: Path, sources: list[str], ids: list[str] | None = None) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "logician",
        "display_name": "Python 3 (Logician)",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
    for i, cell in enumerate(nb.cells):
        cell["id"] = ids[i] if ids else f"cell-{i}"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def seed_thread(notebook: Path, frames: int, thread: str | None = None) -> str:
    """Write `frames` closed frames into the thread the server will give `notebook`.

    The server names a notebook's thread by its path (`JPY_SESSION_NAME`); the kernel reopens
    the thread when it starts, so the sidebar sees a long history without running 10,000 cells.
    """
    if thread is None:
        thread, _ = thread_id_for({"JPY_SESSION_NAME": str(notebook)})
    ledger = ThreadLedger(notebook.parent / ".logician" / "threads", thread)
    try:
        for frame in range(1, frames + 1):
            ledger.append(
                FrameOpen,
                frame=frame,
                execution_count=frame,
                cell_id=f"old-{frame}",
                code=f"x = {frame}  # seeded frame",
                pre_tree=None,
            )
            ledger.append(FrameClose, frame=frame, outcome="ok", post_tree=None)
    finally:
        ledger.close()
    return thread


def copy_into(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        shutil.copy(src, dest)
