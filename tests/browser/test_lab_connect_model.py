"""*Connect a model*, *Make default* and the *Effective configuration* in a real JupyterLab
(headless Chromium): a wrong key is refused beside the key field; the right one connects the
loopback server, whose models the picker then lists; picking one and *Make default* writes the
user config file; the configuration section lists the stored key's profile and its layer, and
an edit is applied (or refused beside the field). The next agent request reaches the loopback
server with the picked model and the stored key, and the key is nowhere else: not in the
notebook, `.logician/`, the Lab's settings, the browser's storage or the server's log.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_server import ARTIFACTS, LabServer, checked_page, open_browser, screenshot, write_notebook
from loopback import LoopbackServer, text_reply
from test_lab_extension import open_notebook, open_sidebar, run_cell, wait_executed

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

KEY = "sk-browser-test-8c4f2a9e61d7"


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.require_key = KEY
        server.route("GET", "/v1/models", {"data": [{"id": "m-small"}, {"id": "m-big"}]})
        yield server


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("connect-root")
    home = tmp_path_factory.mktemp("connect-home")
    write_notebook(root / "connect.ipynb", ["%%logician\nSay hello."], ids=["ask"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home, env={"LOGICIAN_PERMISSIONS__MODE": "full-auto"}) as server:
        yield server


@pytest.fixture
def page(lab: LabServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    with open_browser() as browser, checked_page(browser, request.node.name, height=1000) as page:
        yield page


def wait_text(page: Any, selector: str, text: str, timeout: float = 30_000) -> None:
    page.wait_for_function(
        "([s, t]) => (document.querySelector(s)?.textContent ?? '').includes(t)",
        arg=[selector, text],
        timeout=timeout,
    )


def wait_file_holds(path: Path, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while text not in (path.read_text() if path.exists() else ""):
        assert time.monotonic() < deadline, f"{path} never held {text!r}"
        time.sleep(0.1)


def test_connect_pick_make_default_configure_and_the_next_request_uses_them(
    page: Any, lab: LabServer, model: LoopbackServer
) -> None:
    open_notebook(page, lab, "connect.ipynb")
    sidebar = open_sidebar(page)
    sidebar.locator(".lk-Connect > summary").click()
    form = sidebar.locator(".lk-Connect-form")
    form.locator(".lk-Connect-base_url").fill(f"{model.url}/v1")
    form.locator(".lk-Connect-api_key").fill("sk-wrong-key-000000")
    form.locator(".lk-Connect-submit").click()
    wait_text(page, '.lk-Connect-error[data-field="api_key"]', "refused the key")
    assert not (Path(lab.env["LOGICIAN_CONFIG_DIR"]) / "credentials.json").exists()

    form.locator(".lk-Connect-api_key").fill(KEY)
    form.locator(".lk-Connect-api_key").press("Enter")  # as the button does
    wait_text(page, ".lk-Connect-result", "Connected: profile")
    key_field = form.locator(".lk-Connect-api_key")
    assert key_field.input_value() == ""  # the key left the page; only its masked form stays
    assert key_field.get_attribute("placeholder") == "Stored: sk-…61d7"
    assert page.locator('.lk-Connect-error[data-field="api_key"]').inner_text() == ""
    screenshot(page, "connect-model.png", docs=True)

    picker = sidebar.locator("select.lk-ModelPicker-select")
    picker.focus()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-ModelPicker-select option')]"
        ".some(o => o.textContent === 'm-big (served)')",
        timeout=30_000,
    )
    picker.select_option("m-big")
    page.wait_for_function(
        """() => document.querySelector('#logician-sidebar dd[data-field="model"]')"""
        "?.textContent === 'm-big'",
        timeout=30_000,
    )
    sidebar.locator(".lk-ModelPicker-default").click()
    user_file = Path(lab.env["LOGICIAN_CONFIG_DIR"]) / "config.toml"
    wait_text(page, ".lk-ModelPicker-saved", str(user_file))
    assert 'name = "m-big"' in user_file.read_text()
    assert "m-big" in sidebar.locator(".lk-ModelPicker-saved").inner_text()

    sidebar.locator(".lk-Connect > summary").click()  # folded: room for the configuration
    sidebar.locator(".lk-Config > summary").click()
    page.wait_for_selector('.lk-Config-row[data-key="model.key_name"]', timeout=30_000)
    layer = sidebar.locator('.lk-Config-row[data-key="model.key_name"] .lk-Config-layer')
    assert layer.inner_text() == "profile"
    name = sidebar.locator('.lk-Config-row[data-key="model.name"] .lk-Config-value')
    assert name.input_value() == '"m-big"'
    assert sidebar.locator(".lk-Config-apiKey").inner_text().startswith("api key: stored key")
    turns = sidebar.locator('.lk-Config-row[data-key="budget.max_turns"]')
    turns.locator(".lk-Config-value").fill('"lots"')
    turns.locator(".lk-Config-value").press("Enter")
    wait_text(page, '.lk-Config-row[data-key="budget.max_turns"] .lk-Config-error', "max_turns")
    turns.locator(".lk-Config-value").fill("12")
    turns.locator(".lk-Config-value").press("Enter")
    page.wait_for_function(
        """() => document.querySelector('.lk-Config-row[data-key="budget.max_turns"] """
        """.lk-Config-layer')?.textContent === 'session'""",
        timeout=30_000,
    )
    screenshot(page, "effective-configuration.png", docs=True)

    model.script(text_reply("Hello from m-big."))
    run_cell(page, 0)
    wait_executed(page, 0)
    (request,) = model.requests
    assert request.body["model"] == "m-big"
    assert request.headers["authorization"] == f"Bearer {KEY}"

    page.keyboard.press("Control+s")
    wait_file_holds(lab.root / "connect.ipynb", "Hello from m-big.")
    home = Path(lab.env["JUPYTERLAB_SETTINGS_DIR"]).parent
    storage = page.evaluate(
        "() => JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage})"
    )
    places = {
        "the notebook and .logician/": [lab.root],
        "the Lab's settings and workspaces": [home / "settings", home / "workspaces"],
        "the server's log": [lab.log],
    }
    assert (lab.root / ".logician").is_dir()
    for place, roots in places.items():
        for root in roots:
            files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
            for file in files:
                assert KEY not in file.read_bytes().decode("utf-8", "replace"), f"{place}: {file}"
    assert KEY not in storage
    assert KEY in (Path(lab.env["LOGICIAN_CONFIG_DIR"]) / "credentials.json").read_text()
