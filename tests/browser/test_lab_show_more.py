"""*Show more* when the kernel cannot answer, in a real JupyterLab (headless Chromium).

A cell writes 1,200 files. The diff tab lists them 500 at a time and the rewind dialog's
directory 200 at a time. The kernel is stopped between two pages: *Show more* says why the
next page could not be read, the files already listed stay, and the button offers to try
again. Once a kernel runs again, trying again lists the next page, the first file of that
page included (a failed page used to shift the dialog's list by one and skip a file).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_server import LabServer, checked_page, open_browser, write_notebook
from test_lab_extension import open_sidebar
from test_lab_fix_button import open_notebook, run_in_place, wait_count

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

FILES = 1_200
WRITE = (
    "import os\n"
    "os.makedirs('data/parts', exist_ok=True)\n"
    f"for i in range({FILES}):\n"
    "    with open(f'data/parts/p{i:04d}.csv', 'w') as f:\n"
    "        f.write(f'{i}\\n')\n"
)

# The notebook's session, whatever tab is in front.
SESSION_JS = """() => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w.sessionContext) { return w.sessionContext; }
  }
  return null;
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    write_notebook(root / "more.ipynb", [WRITE], ids=["writes"])
    with LabServer(root, home) as server:
        yield server


@pytest.fixture
def page(lab: LabServer) -> Iterator[Any]:
    with open_browser() as browser, checked_page(browser, "show-more") as page:
        yield page


def stop_kernel(page: Any) -> None:
    """Shut the notebook's kernel down, as the Kernel menu's *Shut Down Kernel* does; wait
    until the sidebar says no kernel runs."""
    page.evaluate(f"async () => {{ await ({SESSION_JS})().shutdown(); }}")
    page.wait_for_selector('#logician-sidebar[data-state="no-kernel"]', timeout=60_000)


def start_kernel(page: Any) -> None:
    """Start a new Logician kernel for the notebook; wait until the sidebar is connected."""
    page.evaluate(f"async () => {{ await ({SESSION_JS})().changeKernel({{ name: 'logician' }}); }}")
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=120_000)


def count(page: Any, selector: str, n: int) -> None:
    page.wait_for_function(
        f"() => document.querySelectorAll({selector!r}).length === {n}", timeout=120_000
    )


def fail_then_retry(
    page: Any, more: Any, error: Any, items: str, listed: int, next_item: str
) -> None:
    """With the first page (`listed` rows of `items`) shown, stop the kernel and click `more`:
    `error` says why, what was listed stays, the button offers to try again. Then start a
    kernel and click again: the next page comes from its first row (`next_item`)."""
    stop_kernel(page)
    more.click()
    error.wait_for(timeout=60_000)
    assert error.inner_text() == "Could not list the files: no kernel is running"
    assert page.locator(items).count() == listed  # what was listed stays
    assert more.inner_text() == f"Try again ({FILES - listed:,} left)" and more.is_enabled()
    start_kernel(page)
    more.click()
    count(page, items, 2 * listed)
    assert page.locator(items).nth(listed).inner_text() == next_item
    assert more.inner_text() == f"Show more ({FILES - 2 * listed:,} left)"


def test_show_more_says_why_a_page_failed_and_tries_again_without_skipping_a_file(
    page: Any, lab: LabServer
) -> None:
    parts = lab.root / "data" / "parts"
    open_notebook(page, lab, "more.ipynb")
    sidebar = open_sidebar(page, timeout=120_000)
    run_in_place(page, 0)
    wait_count(page, 0, 1, timeout=600_000)
    row = sidebar.locator('.lk-FrameRow[data-cell-id="writes"]')
    row.wait_for(timeout=120_000)
    assert "1,200 files" in row.inner_text()

    # The diff tab: 500 listed; the kernel stops; Show more fails and says why.
    row.locator(".lk-FrameRow-files.lk-mod-link").click()
    listed = page.locator(".lk-DiffView-count")
    listed.wait_for(timeout=120_000)
    assert listed.inner_text() == "1,200 files (500 listed)"
    error = page.locator(".lk-DiffView-fileBox .lk-DiffView-error")
    fail_then_retry(
        page,
        page.locator("button.lk-DiffView-more"),
        error,
        ".lk-DiffView-fileLink",
        500,
        "data/parts/p0500.csv",
    )
    assert listed.inner_text() == "1,200 files (1,000 listed)"
    assert error.count() == 0  # the error goes with the page that came

    # The rewind dialog's directory: 200 listed; the kernel stops between two pages.
    row.locator("button", has_text="Rewind to here").click()
    dialog = page.locator(".jp-Dialog")
    group = dialog.locator(".lk-RewindDialog-group")
    group.wait_for(timeout=120_000)
    assert group.locator("summary").inner_text() == "data/parts/ — 1,200 files created → delete"
    group.locator("summary").click()
    count(page, ".lk-RewindDialog-groupFiles li", 200)
    failed = group.locator(".lk-RewindDialog-pageError")
    fail_then_retry(
        page,
        group.locator("button.lk-RewindDialog-more"),
        failed,
        ".lk-RewindDialog-groupFiles li",
        200,
        "delete data/parts/p0200.csv",
    )
    assert failed.is_hidden()

    # Nothing was rewound: the dialog is closed without a rewind.
    dialog.locator("button.jp-mod-reject").click()
    dialog.wait_for(state="detached")
    assert sum(1 for _ in parts.iterdir()) == FILES
