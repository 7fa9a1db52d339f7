"""*Rewind this call* in a real JupyterLab (headless Chromium): an agent cell makes three tool
calls (write, bash, python; the scripted loopback model), the sidebar's `Calls` on its frame
lists them, and the bash call's button, after the confirmation, puts back only that call's
files; the sidebar's *Undo rewind* brings them back. The agent's last answer is held back
while the user looks at another notebook and comes back: the sidebar reads the cell's frame
while it still runs, and must read it again when the cell ends (its Calls button comes then).
Screenshots land in `test-artifacts/lab/`."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab_server import ARTIFACTS, LabServer, checked_page, open_browser, screenshot, write_notebook
from loopback import LoopbackServer, text_reply, tool_reply
from mcp_servers.helpers import wait_until
from test_lab_fix_button import cell, open_notebook, run_in_place, wait_count

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

DATA = "a,b\n1,2\n"


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("calls-root")


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, root: Path, model: LoopbackServer
) -> Iterator[LabServer]:
    home = tmp_path_factory.mktemp("calls-home")
    write_notebook(root / "calls.ipynb", ["%%logician\nDo the three things."], ids=["agent"])
    other = nbformat.v4.new_notebook()  # on plain ipykernel: the sidebar says so
    other.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(other, root / "other.ipynb")
    (root / "data.csv").write_text(DATA)
    env = {
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": model.url + "/v1",
        "LOGICIAN_MODEL__API_KEY_ENV": "",
        "LOGICIAN_PERMISSIONS__MODE": "full-auto",
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home, env=env) as server:
        yield server


@pytest.fixture
def page(lab: LabServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    with open_browser() as browser, checked_page(browser, request.node.name) as page:
        yield page


def test_the_button_rewinds_only_the_bash_call_and_undo_brings_it_back(
    page: Any, lab: LabServer, model: LoopbackServer, root: Path
) -> None:
    thinking = threading.Event()
    done = text_reply("Done.")
    done.gate = thinking
    model.script(
        tool_reply("w1", "write", {"path": "a.txt", "content": "from write\n"}),
        tool_reply("b1", "bash", {"command": "echo from-bash > b.txt; echo more >> data.csv"}),
        tool_reply("p1", "python", {"code": "open('c.txt', 'w').write('from python')"}),
        done,
    )
    open_notebook(page, lab, "calls.ipynb")
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)
    run_in_place(page, 0)
    try:
        # the cell runs on, the last answer held back: the user looks at another notebook
        # and comes back, and the sidebar reads frame 1 while it is still open
        wait_until(lambda: len(model.requests) == 4, 180, "the agent's last model call")
        show_notebook(page, "other.ipynb")
        show_notebook(page, "calls.ipynb")
        running = page.locator('.lk-FrameRow[data-frame="1"]')
        running.wait_for(timeout=60_000)
        assert "running" in running.inner_text()
        assert running.locator("button.lk-FrameRow-calls").count() == 0
    finally:
        thinking.set()
    wait_count(page, 0, 1)
    assert "Done." in cell(page, 0).locator(".jp-OutputArea").inner_text()
    assert (root / "b.txt").exists() and (root / "data.csv").read_text().endswith("more\n")

    # frames.changed after the cell (still one frame): the row is read again, now with Calls
    calls = page.locator('.lk-FrameRow[data-frame="1"] button.lk-FrameRow-calls')
    calls.wait_for(timeout=60_000)
    calls.click()
    line = page.locator('.lk-CallLine[data-call="b1"]')
    line.wait_for(timeout=60_000)
    assert "bash: echo from-bash" in line.inner_text()
    assert page.locator(".lk-CallLine").count() == 3
    screenshot(page, "call-rewind-list.png")
    line.locator("button.lk-CallLine-rewind").click()

    confirm = page.locator(".jp-Dialog", has_text="Rewind the bash call b1?")
    confirm.wait_for(timeout=30_000)
    assert "data.csv" in confirm.inner_text()
    confirm.locator("button.jp-mod-warn").click()
    # the toast comes once the whole rewind is done (b.txt goes before data.csv is put back)
    page.locator(".Toastify__toast", has_text="Rewound call b1").wait_for(timeout=120_000)
    assert not (root / "b.txt").exists()
    assert (root / "data.csv").read_text() == DATA
    assert (root / "a.txt").exists() and (root / "c.txt").exists()

    undo = page.locator("button.lk-Timeline-undo")
    page.wait_for_function("(b) => !b.disabled", arg=undo.element_handle(), timeout=60_000)
    undo.click()
    # the undo re-creates b.txt before it puts data.csv back: wait for both
    wait_until(
        lambda: (root / "b.txt").exists() and (root / "data.csv").read_text().endswith("more\n"),
        120,
        "b.txt and data.csv back after the undo",
    )


def show_notebook(page: Any, path: str) -> None:
    """Open `path` (or bring its tab to the front) and wait until the sidebar follows it."""
    page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", path)
    page.wait_for_function(
        "(path) => document.querySelector('#logician-sidebar .lk-Sidebar-notebook')"
        "?.textContent === path",
        arg=path,
        timeout=90_000,
    )
