"""*Fix with Logician* in a real JupyterLab (headless Chromium): a cell raises a KeyError, the
button shows under its error output, and a click inserts a `%logician fix` cell below it and
runs it; the scripted model (loopback) is asked about that error and the agent cell completes.
An older error's button names its cell in the fix's note; the palette command fixes the
newest error. A plain Python kernel shows no button. Screenshots land in `test-artifacts/lab/`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from lab_server import ARTIFACTS, LabServer, checked_page, open_browser, screenshot, write_notebook
from loopback import LoopbackServer, text_reply

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

KERNEL_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""
SOURCES_JS = """() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells
  .map(c => c.getSource())"""
FAILING = ["sales = {'total': 3}\nsales['sales']", "1 / 0"]


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, model: LoopbackServer) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("fix-root")
    home = tmp_path_factory.mktemp("fix-home")
    write_notebook(root / "fix.ipynb", FAILING, ids=["key-error", "zero-division"])
    write_notebook(root / "plain" / "plain.ipynb", FAILING[:1], ids=["plain-error"])
    plain = json.loads((root / "plain" / "plain.ipynb").read_text())
    plain["metadata"]["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    (root / "plain" / "plain.ipynb").write_text(json.dumps(plain))
    # LabServer serves this checkout's build of the extension (lab_server._serve_this_build).
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


def open_notebook(page: Any, lab: LabServer, path: str) -> None:
    page.goto(lab.notebook_url(path))
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=90_000
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    wait_idle(page)


def wait_idle(page: Any, timeout: float = 180_000) -> None:
    page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=timeout)


def cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def run_in_place(page: Any, index: int) -> None:
    """Ctrl+Enter in cell `index`, as a user does: it runs, no cell is added."""
    cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+Enter")


def wait_count(page: Any, index: int, count: int, timeout: float = 180_000) -> None:
    """Cell `index` shows `In [count]` (ran to its end), and the kernel is idle."""
    prompt = cell(page, index).locator(".jp-InputPrompt")
    page.wait_for_function(
        f"(el) => el.textContent.includes('[{count}]')",
        arg=prompt.element_handle(),
        timeout=timeout,
    )
    wait_idle(page, timeout)


def test_the_button_on_an_error_runs_a_fix_cell_below_it(
    page: Any, lab: LabServer, model: LoopbackServer
) -> None:
    model.script(
        text_reply("The dict has no 'sales' key: ", "use sales['total']."),
        text_reply("That older cell asked for a missing key."),
        text_reply("Divide by zero: check the divisor."),
    )
    open_notebook(page, lab, "fix.ipynb")
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)
    assert cell(page, 0).locator("button.lk-FixButton").count() == 0  # no error yet

    run_in_place(page, 0)
    wait_count(page, 0, 1)
    assert "KeyError" in cell(page, 0).locator(".jp-OutputArea").inner_text()
    button = cell(page, 0).locator("button.lk-FixButton")
    button.wait_for(timeout=30_000)
    assert button.inner_text() == "Fix with Logician"
    assert cell(page, 1).locator("button.lk-FixButton").count() == 0  # not run: no error
    screenshot(page, "fix-button.png", docs=True)

    button.click()
    page.wait_for_function(f"() => ({SOURCES_JS})().length === 3")
    assert page.evaluate(SOURCES_JS) == [FAILING[0], "%logician fix", FAILING[1]]
    wait_count(page, 1, 2)
    out = cell(page, 1).locator(".jp-OutputArea").inner_text()
    assert "use sales['total']" in out
    assert "completed" in out
    asked = json.dumps(model.requests[0].body)
    assert "KeyError" in asked and "sales" in asked  # the model was given the error

    # A newer error elsewhere: the older cell's button names its own cell in the fix's note.
    run_in_place(page, 2)
    wait_count(page, 2, 3)
    cell(page, 2).locator("button.lk-FixButton").wait_for(timeout=30_000)
    cell(page, 0).locator("button.lk-FixButton").click()
    page.wait_for_function(f"() => ({SOURCES_JS})().length === 4")
    older = page.evaluate(SOURCES_JS)[1]
    assert older.startswith("%logician fix ") and "In [1]" in older and "key-error" in older
    wait_count(page, 1, 4)
    assert "That older cell" in cell(page, 1).locator(".jp-OutputArea").inner_text()
    assert "In [1]" in json.dumps(model.requests[-1].body)

    # The palette's command fixes the newest error (1 / 0, now the last cell), below its cell.
    page.keyboard.press("Control+Shift+C")
    page.keyboard.type("Fix the last error")
    item = page.locator(".lm-CommandPalette-item", has_text="Fix the last error with Logician")
    item.wait_for()
    item.click()
    page.wait_for_function(f"() => ({SOURCES_JS})().length === 5")
    assert page.evaluate(SOURCES_JS)[3:] == [FAILING[1], "%logician fix"]
    wait_count(page, 4, 5)
    assert "Divide by zero" in cell(page, 4).locator(".jp-OutputArea").inner_text()
    assert "ZeroDivisionError" in json.dumps(model.requests[-1].body)


def test_a_plain_python_kernel_shows_no_fix_button(page: Any, lab: LabServer) -> None:
    open_notebook(page, lab, "plain/plain.ipynb")
    run_in_place(page, 0)
    wait_count(page, 0, 1)
    assert "KeyError" in cell(page, 0).locator(".jp-OutputArea").inner_text()
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="not-logician"]', timeout=60_000)
    assert cell(page, 0).locator("button.lk-FixButton").count() == 0
