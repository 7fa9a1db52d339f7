"""Model output is inert in a real JupyterLab (issue 27, finding 0), in headless Chromium.

A scripted model on loopback answers with the payload list (tests/inert_payloads.py) in its
answer, its reasoning and a tool call that waits for approval (in the cell and in the
sidebar); a cell binds variables whose names and type are payloads and writes a file named
like one, and `%logician vars`, `frames` and `diff` show them; the sidebar lists the frames
and the rewind dialog lists the file (and the rewind is confirmed). Every payload that needs a click is clicked. Then the
notebook is saved, reopened, and clicked again. Nothing may run (`window.__pwned` and the
title stay untouched) and the beacon, a second loopback server every load points at, must
receive no request.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from inert_payloads import CLICKS, payloads  # tests/: on sys.path through tests/conftest.py
from lab_server import ARTIFACTS, LabServer, open_browser, write_notebook
from loopback import LoopbackServer, profile_reply

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

KERNEL_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""
RAN_JS = "() => [window.__pwned || null, document.title, window.parent.__pwned || null]"


def _cells() -> list[str]:
    marks = [f"<img src=x onerror=\"window.__pwned='var-{n}'\">" for n in range(2)]
    file_name = "<img src=x onerror=\"window.__pwned='file-name'\">.txt"
    math_name = "$\\href{javascript:window.__pwned=1}{varclick}$"
    hostile = (
        "import threading\n"
        f"Bad = type({marks[0]!r}, (), {{}})\n"
        "hostile = Bad(); hostile.lock = threading.Lock()\n"
        f"globals()[{marks[1]!r}] = threading.Lock()\n"
        f"globals()[{math_name!r}] = threading.Lock()\n"
        f"open({file_name!r}, 'w').write('x')  # <svg onload=\"window.__pwned='code'\">"
    )
    return [
        "%%logician\nWhat does payloads.txt say?",
        hostile,
        "%logician vars --last",
        "%logician frames",
        "%logician diff --last",
    ]


@pytest.fixture(scope="module")
def beacon() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, beacon: LoopbackServer, model: LoopbackServer
) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("inert-root")
    home = tmp_path_factory.mktemp("inert-home")
    port = int(beacon.url.rsplit(":", 1)[1])
    hostile = payloads(port)
    every = "\n\n".join(hostile)
    (root / "payloads.txt").write_text(every + "\n")
    comment = " ".join(hostile)
    model.script(
        profile_reply(
            "llamacpp",
            reasoning=every,
            calls=(("c1", "bash", {"command": f"cat payloads.txt  # {comment}"}),),
        ),
        profile_reply("llamacpp", reasoning=every, text=f"The file says:\n\n{every}\n"),
    )
    write_notebook(root / "inert.ipynb", _cells())
    env = {
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": model.url + "/v1",
        "LOGICIAN_MODEL__API_KEY_ENV": "",
        "LOGICIAN_PERMISSIONS__MODE": "ask",
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home, env=env) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with open_browser() as b:
        yield b


def _open(page: Any, lab: LabServer) -> None:
    page.goto(lab.notebook_url("inert.ipynb"))
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=90_000
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=120_000)


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _run(page: Any, index: int) -> None:
    _cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def _wait_executed(page: Any, index: int) -> None:
    prompt = _cell(page, index).locator(".jp-InputPrompt")
    page.wait_for_function(
        "(el) => /\\[\\d+\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=180_000
    )
    page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=180_000)


def _click_every_payload(page: Any) -> int:
    """Click each text a user might click (in outputs, the sidebar and dialogs); how many."""
    clicked = 0
    for text in (*CLICKS, "varclick", "toggled"):
        for handle in page.get_by_text(text, exact=False).element_handles():
            if handle.is_visible():
                # a click that would navigate is what the payload wanted; none may be a link
                href = handle.evaluate("el => el.closest('a') && el.closest('a').href")
                assert not href or href.startswith(("http:", "https:", "mailto:")), href
                if href:
                    continue  # an http link a user may follow: not a payload's effect
                handle.click(timeout=5_000)
                clicked += 1
    return clicked


def _assert_nothing_ran(page: Any, beacon: LoopbackServer, when: str) -> None:
    # A negative result needs a grace window, not a condition: a load the page started (an
    # <img>, an @import) reaches the beacon within milliseconds; one second is ample.
    page.wait_for_timeout(1_000)
    ran = page.evaluate(RAN_JS)
    assert ran[0] is None and ran[2] is None, f"{when}: a payload ran: {ran}"
    assert not str(ran[1]).startswith("PWNED"), f"{when}: a payload ran: {ran}"
    loads = page.evaluate(
        "(port) => performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(n => n.includes('127.0.0.1:' + port))",
        int(beacon.url.rsplit(":", 1)[1]),
    )
    assert loads == [], f"{when}: the page loaded {loads}"
    fetched = [r.path for r in beacon.requests + beacon.metadata_requests]
    assert fetched == [], f"{when}: the page fetched {fetched}"


def test_hostile_model_output_stays_inert_before_and_after_reopening(
    browser: Any, lab: LabServer, beacon: LoopbackServer, model: LoopbackServer
) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        _open(page, lab)
        page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
        sidebar = page.locator("#logician-sidebar")
        page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)

        # the agent cell: reasoning, then a bash call that waits for approval
        _run(page, 0)
        card = sidebar.locator(".lk-Approval")
        card.wait_for(timeout=120_000)
        assert "onerror=" in card.inner_text()  # the sidebar shows the command as text
        in_cell = _cell(page, 0).locator("button", has_text="Allow once")
        in_cell.wait_for(timeout=60_000)
        assert "onerror=" in _cell(page, 0).locator(".lk-approval-preview").inner_text()
        _assert_nothing_ran(page, beacon, "approval card shown")
        page.screenshot(path=str(ARTIFACTS / "inert-approval.png"))
        in_cell.click()
        _wait_executed(page, 0)
        answer = _cell(page, 0).locator(".jp-OutputArea-output", has_text="The file says")
        answer.first.wait_for(timeout=60_000)
        _assert_nothing_ran(page, beacon, "answer shown")
        answer = _cell(page, 0).locator(".lk-answer")
        assert "onerror=" in answer.inner_text() and "mathclick" in answer.inner_text()
        assert _cell(page, 0).locator(".lk-thinking").count() >= 1
        assert len(model.requests) == 2

        for index in range(1, 5):
            _run(page, index)
            _wait_executed(page, index)
        _assert_nothing_ran(page, beacon, "%logician vars, frames and diff shown")
        vars_out = _cell(page, 2).locator(".jp-OutputArea").inner_text()
        assert "onerror" in vars_out and "varclick" in vars_out, vars_out
        assert "file-name" in _cell(page, 4).locator(".jp-OutputArea").inner_text()

        # the sidebar: the hostile cell's frame row and the rewind dialog's file list
        row = sidebar.locator(".lk-FrameRow").filter(has_text="threading").first
        row.wait_for(timeout=60_000)
        row.locator("button", has_text="Rewind to here").click()
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for()
        assert "file-name" in dialog.inner_text()
        page.screenshot(path=str(ARTIFACTS / "inert-rewind-dialog.png"))
        _assert_nothing_ran(page, beacon, "rewind dialog")
        hostile_file = next(p for p in lab.root.iterdir() if "file-name" in p.name)
        dialog.locator("button.jp-mod-warn").click()  # rewind: the toasts name what it did
        dialog.wait_for(state="detached")
        deadline = time.monotonic() + 300  # a condition; the bound only for a stuck one
        while hostile_file.exists() and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        assert not hostile_file.exists()  # the rewind deleted the file the cell wrote
        _assert_nothing_ran(page, beacon, "rewind done")

        for details in page.locator(".lk-thinking summary").element_handles():
            details.click()  # open the reasoning: a <details ontoggle> inside must stay text
        assert _click_every_payload(page) >= len(CLICKS)
        _assert_nothing_ran(page, beacon, "after clicking every payload")
        page.screenshot(path=str(ARTIFACTS / "inert-output.png"), full_page=True)

        # save, reopen: the saved notebook is trusted (signed) and rendered again
        page.keyboard.press("Control+s")
        saved = lab.root / "inert.ipynb"
        deadline = time.monotonic() + 300  # a condition; the bound only for a stuck one
        while time.monotonic() < deadline and "lk-answer" not in saved.read_text():
            page.wait_for_timeout(250)
        notebook = json.loads(saved.read_text())
        kinds = {
            k for c in notebook["cells"] for o in c.get("outputs", []) for k in o.get("data", {})
        }
        assert "text/html" in kinds and "text/markdown" not in kinds
        # The file is on disk before the page has the server's answer: until then the
        # notebook is dirty, and leaving it asks "leave the page?" (dismissed here: the
        # reload is aborted, net::ERR_ABORTED under load). Leave once the page knows it saved.
        page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=120_000
        )
        _open(page, lab)
        _cell(page, 0).locator(".lk-answer").wait_for(timeout=60_000)
        _cell(page, 2).locator("table").wait_for(timeout=60_000)
        # signed on save, so trusted on reopening: its HTML goes in without Lab's sanitizer
        assert page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets[0].model.trusted"
        )
        _assert_nothing_ran(page, beacon, "reopened")
        page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
        page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)
        sidebar.locator(".lk-FrameRow").first.wait_for(timeout=60_000)
        for details in page.locator(".lk-thinking summary").element_handles():
            details.click()
        assert _click_every_payload(page) >= len(CLICKS)
        _assert_nothing_ran(page, beacon, "after save and reopen")
        page.screenshot(path=str(ARTIFACTS / "inert-output-reopened.png"), full_page=True)
        assert dialogs == []
    finally:
        context.close()
