"""A save in the Lab editor during a running cell survives a rewind from the sidebar (issue 12
reproduction 1, as a user meets it): real JupyterLab, real Chromium, real kernel.

The user opens `mine.txt` in the text editor, runs a long cell in the notebook that writes
its own file, types and saves `mine.txt` while the cell runs, then rewinds the cell from the
sidebar: the dialog lists `mine.txt` as left alone (saved in JupyterLab), the rewind deletes
only the cell's file, and the notification says why `mine.txt` was kept.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from lab_server import ARTIFACTS, LabServer, open_browser, write_notebook
from test_lab_extension import open_notebook, open_sidebar, run_cell, wait_executed

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_a_save_in_the_editor_during_a_cell_survives_a_sidebar_rewind(tmp_path: Path) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    (root / "mine.txt").write_text("v1\n")
    write_notebook(
        root / "long.ipynb",
        [
            # the cell runs until the user's save has landed (bounded), however slow the machine
            "import time\nopen('cell.txt', 'w').write('c')\nend = time.monotonic() + 240\n"
            "while 'precious' not in open('mine.txt').read() and time.monotonic() < end:\n"
            "    time.sleep(0.1)"
        ],
        ids=["long-cell"],
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home) as lab, open_browser() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        try:
            _run(page, lab, root)
        finally:
            page.screenshot(path=str(ARTIFACTS / "attribution-final.png"))
            context.close()


def _run(page: Any, lab: LabServer, root: Path) -> None:
    open_notebook(page, lab, "long.ipynb")
    sidebar = open_sidebar(page)

    run_cell(page, 0)
    deadline = time.monotonic() + 20
    while not (root / "cell.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (root / "cell.txt").exists(), "the cell never started"

    # while the cell runs: open mine.txt in the editor, type, save (Ctrl+S)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'mine.txt'})")
    editor = page.locator(".jp-FileEditor .cm-content")
    editor.wait_for(timeout=30_000)
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.type("v2 my precious edit")
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 10
    while "precious" not in (root / "mine.txt").read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (root / "mine.txt").read_text().startswith("v2 my precious edit")
    page.screenshot(path=str(ARTIFACTS / "attribution-saved-during-cell.png"))

    # back to the notebook; the cell ends
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="long.ipynb").click()
    wait_executed(page, 0, timeout=60_000)

    row = sidebar.locator('.lk-FrameRow[data-cell-id="long-cell"]')
    row.wait_for()
    row.locator("button", has_text="Rewind to here").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert "delete cell.txt" in dialog.locator(".lk-RewindDialog-files").inner_text()
    kept = dialog.locator(".lk-RewindDialog-external").inner_text()
    # Left alone as another writer's, in the user's words: the Lab's `document.saved` message
    # is answered on the comm's subshell while the cell still runs, so the frame knows it.
    assert "mine.txt" in kept and "saved in JupyterLab" in kept, kept
    assert "mine.txt" not in dialog.locator(".lk-RewindDialog-files").inner_text()
    # reverting them is one deliberate click away, off by default
    include = dialog.locator(".lk-RewindDialog-include-external")
    assert "revert the changes made outside this kernel too" in include.inner_text()
    assert not include.locator("input").is_checked()
    page.screenshot(path=str(ARTIFACTS / "attribution-rewind-dialog.png"))
    dialog.locator("button.jp-mod-warn").click()

    deadline = time.monotonic() + 30
    while (root / "cell.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (root / "cell.txt").exists()
    assert (root / "mine.txt").read_text().startswith("v2 my precious edit")
    toast = page.locator(".Toastify__toast", has_text="left alone")
    toast.wait_for(timeout=15_000)
    assert "mine.txt" in toast.inner_text()
    page.screenshot(path=str(ARTIFACTS / "attribution-rewind-report.png"))
