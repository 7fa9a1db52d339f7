"""JupyterLab with `--gateway-url` against a real Jupyter Kernel Gateway: the kernel runs in the
gateway's process tree, started elsewhere, and the extension still lists frames and rewinds,
everything over the kernel's comm."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from gateway import Gateway
from lab_server import ARTIFACTS, LabServer, open_browser, write_notebook
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_lab_extension import (
    open_notebook,
    open_sidebar,
    run_cell,
    wait_executed,
    wait_kernel_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def open_through_gateway(page: Any, lab: LabServer, path: str) -> None:
    """Open the notebook and wait for its kernel. JupyterLab's gateway client at times opens the
    kernel's websocket twice at once; Kernel Gateway keeps one ("Replacing stale connection" in
    its log) and the page never hears the kernel's status. A user reloads; the test does, once."""
    page.goto(lab.notebook_url(path))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    try:
        wait_kernel_idle(page, timeout=45_000)
    except PlaywrightTimeout:
        page.reload()
        open_notebook(page, lab, path)


def test_lab_through_a_kernel_gateway_lists_the_frame_and_rewinds_from_the_cell_menu(
    tmp_path: Path,
) -> None:
    root, home, launch = tmp_path / "lab-root", tmp_path / "lab-home", tmp_path / "gateway-home"
    for d in (root, home, launch):
        d.mkdir()
    project = root / "project"
    project.mkdir()
    data = project / "data.txt"
    data.write_text("original\n")
    write_notebook(
        project / "gw.ipynb", ["open('data.txt', 'w').write('changed\\n')"], ids=["writes-file"]
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    gw = Gateway(
        launch,
        forward=("LOGICIAN_CONFIG_DIR",),
        # JupyterLab lists kernels (Kernel Gateway refuses that unless told otherwise).
        args=("--JupyterWebsocketPersonality.list_kernels=True",),
    ).start()
    try:
        lab = LabServer(root, home, args=(f"--gateway-url={gw.url}",))
        with lab, open_browser() as browser:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page: Any = context.new_page()
            try:
                open_through_gateway(page, lab, "project/gw.ipynb")
                sidebar = open_sidebar(page, timeout=60_000)
                run_cell(page, 0)
                wait_executed(page, 0)
                assert data.read_text() == "changed\n"
                # The kernel was told the notebook's directory; the gateway's stays clean.
                assert (project / ".logician" / "threads").is_dir()
                assert not (launch / ".logician").exists()

                row = sidebar.locator('.lk-FrameRow[data-cell-id="writes-file"]')
                row.wait_for(timeout=60_000)
                assert "1 file" in row.inner_text()

                first = page.locator(".jp-Notebook .jp-Cell").nth(0)
                first.locator(".jp-InputPrompt").click()
                first.locator(".jp-InputPrompt").click(button="right")
                page.locator(".lm-Menu-item", has_text="Rewind to before this cell").click()
                dialog = page.locator(".jp-Dialog")
                dialog.wait_for()
                assert "restore data.txt" in dialog.inner_text()
                dialog.locator("button.jp-mod-warn").click()
                deadline = time.monotonic() + 30
                while data.read_text() != "original\n" and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert data.read_text() == "original\n"
                sidebar.locator(
                    '.lk-FrameRow.lk-mod-rewound[data-cell-id="writes-file"]'
                ).wait_for()
                page.screenshot(path=str(ARTIFACTS / "gateway-rewound.png"))
            finally:
                context.close()
    finally:
        gw.stop()
