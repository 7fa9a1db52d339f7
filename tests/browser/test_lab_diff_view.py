"""The diff tab in a real JupyterLab (headless Chromium): a cell changes a CSV and a figure;
the sidebar's "N files" on its frame opens the tab, the CSV shows as a table with the changed
cell marked (old and new value), the figure as two images side by side; the same in the dark
theme. Screenshots land in `test-artifacts/lab/` (and docs/images/ under
`--update-screenshots`)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_server import ARTIFACTS, LabServer, checked_page, open_browser, screenshot, write_notebook
from test_lab_fix_button import open_notebook, run_in_place, wait_count

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]


def png(rgb: tuple[int, int, int], size: int = 48) -> bytes:
    """A plain `size`x`size` PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\0" + bytes(rgb) * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


CELL = f"""from pathlib import Path
Path('sales.csv').write_text('region,units,price\\nnorth,12,3.5\\nsouth,40,3.5\\neast,7,4.0\\n')
Path('tool.py').write_text('def total(rows):\\n    return sum(rows) * 2\\n')
Path('figure.png').write_bytes({png((40, 120, 220))!r})
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("diff-root")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[LabServer]:
    home = tmp_path_factory.mktemp("diff-home")
    write_notebook(root / "diff.ipynb", [CELL], ids=["change"])
    (root / "sales.csv").write_text("region,units,price\nnorth,12,3.5\nsouth,31,3.5\n")
    (root / "figure.png").write_bytes(png((220, 80, 40)))
    (root / "tool.py").write_text("def total(rows):\n    return sum(rows)\n")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home) as server:
        yield server


@pytest.fixture
def page(lab: LabServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    with open_browser() as browser, checked_page(browser, request.node.name) as page:
        yield page


def test_the_csv_shows_its_changed_cell_and_the_figure_both_images(
    page: Any, lab: LabServer
) -> None:
    open_notebook(page, lab, "diff.ipynb")
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)
    run_in_place(page, 0)
    wait_count(page, 0, 1)

    files = page.locator('.lk-FrameRow[data-frame="1"] .lk-FrameRow-files.lk-mod-link')
    files.wait_for(timeout=60_000)
    files.click()
    page.locator('.lk-DiffView-fileLink[data-path="sales.csv"]').click()
    changed = page.locator('.lk-DiffView-body[data-kind="csv"] .lk-DiffView-cell.lk-mod-changed')
    changed.first.wait_for(timeout=60_000)
    assert changed.count() == 1
    assert changed.locator(".lk-DiffView-was").inner_text() == "31"
    assert changed.locator(".lk-DiffView-now").inner_text() == "40"
    added = page.locator(".lk-DiffView-row.lk-mod-added")
    assert added.count() == 1 and "east" in added.inner_text()
    screenshot(page, "diff-csv.png", docs=True)

    page.locator('.lk-DiffView-fileLink[data-path="figure.png"]').click()
    images = page.locator('.lk-DiffView-body[data-kind="image"] .lk-DiffView-image img')
    images.nth(1).wait_for(timeout=60_000)
    assert images.count() == 2
    page.wait_for_function(
        "() => [...document.querySelectorAll('.lk-DiffView-image img')]"
        ".every(i => i.complete && i.naturalWidth === 48)",
        timeout=30_000,
    )
    screenshot(page, "diff-image.png", docs=True)

    # a script: a line diff coloured by JupyterLab's CodeMirror languages
    page.locator('.lk-DiffView-fileLink[data-path="tool.py"]').click()
    added_line = page.locator(".lk-DiffView-line.lk-mod-add .lk-DiffView-text")
    added_line.first.wait_for(timeout=60_000)
    assert added_line.inner_text() == "    return sum(rows) * 2"
    assert page.locator(".lk-DiffView-line.lk-mod-del .lk-DiffView-text").inner_text() == (
        "    return sum(rows)"
    )
    keyword = page.locator(".lk-DiffView-lines.cm-s-jupyter .lk-DiffView-text span", has_text="def")
    keyword.first.wait_for(timeout=30_000)

    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme',"
        " {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_selector('body[data-jp-theme-light="false"]', state="attached", timeout=60_000)
    page.locator('.lk-DiffView-fileLink[data-path="sales.csv"]').click()
    changed.first.wait_for(timeout=60_000)
    screenshot(page, "diff-csv-dark.png", docs=True)

    # the rewind dialog: a file opens what the rewind would change in it, and the dialog closes
    row = page.locator('.lk-FrameRow[data-frame="1"]')
    row.locator("button", has_text="Rewind to here").click()
    dialog = page.locator(".jp-Dialog .lk-RewindDialog")
    dialog.wait_for(timeout=60_000)
    dialog.locator('.lk-RewindDialog-fileLink[data-path="sales.csv"]').click()
    dialog.wait_for(state="detached", timeout=30_000)
    header = page.locator(".lk-DiffView-header", has_text="after the rewind").last
    header.wait_for(timeout=60_000)
    assert "now on disk" in header.inner_text()
    back = page.locator(".lk-DiffView-cell.lk-mod-changed").last
    assert back.locator(".lk-DiffView-was").inner_text() == "40"
    assert back.locator(".lk-DiffView-now").inner_text() == "31"
    assert (
        (lab.root / "sales.csv")
        .read_text()
        .startswith("region,units,price\nnorth,12,3.5\nsouth,40")
    )
