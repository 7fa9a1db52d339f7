"""The diff tab in a real JupyterLab (headless Chromium): a cell changes a CSV, a figure, a
script, a notebook, a binary file and a 2,500-line text file, and deletes a file; the sidebar's
"N files" on its frame opens the tab. The CSV shows as a table with the changed cell marked
(old and new value), the figure as two images side by side, the script side by side (or
unified, as toggled and remembered), the notebook cell by cell as nbdime matched them, the
binary file by size and sha256, the long file a page at a time; the same in the dark theme.
The rewind dialog says "recreate" for the deleted file, and after the rewind the rewound
frame's files still open. One Lab and one kernel for the module. Screenshots land in
`test-artifacts/lab/` (and docs/images/ under `--update-screenshots`)."""

from __future__ import annotations

import hashlib
import json
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_server import ARTIFACTS, LabServer, checked_page, open_browser, screenshot, write_notebook
from test_lab_dark_theme import failing
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


def notebook(*cells: tuple[str, str]) -> str:
    """An nbformat 4 notebook of code cells (source, what it printed)."""
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": "code",
                    "metadata": {},
                    "execution_count": None,
                    "source": source,
                    "outputs": [{"output_type": "stream", "name": "stdout", "text": out}]
                    if out
                    else [],
                }
                for source, out in cells
            ],
        }
    )


ANALYSIS_BEFORE = notebook(
    ("import math", ""),
    ("print(2 + 2)", "4\n"),
    ("def area(r):\n    return 3.14 * r * r", ""),
    ("a = 1", ""),
    ("b = 2", ""),
)
# outputs changed, a source edited, a cell moved
ANALYSIS_AFTER = notebook(
    ("import math", ""),
    ("print(2 + 2)", "four\n"),
    ("def area(r):\n    return math.pi * r * r", ""),
    ("b = 2", ""),
    ("a = 1", ""),
)
TOOL_BEFORE = """import math


def total(rows):
    return sum(rows)


def mean(rows):
    return total(rows) / len(rows)


def spread(rows):
    return max(rows) - min(rows)
"""
TOOL_AFTER = """import math
import statistics


def total(rows):
    return sum(rows) * 2


def mean(rows):
    return statistics.fmean(rows)
"""
WEIGHTS = bytes(range(256)) * 64
LONG_BEFORE = "".join(f"line {n}\n" for n in range(1, 2501))

CELL = f"""from pathlib import Path
Path('sales.csv').write_text('region,units,price\\nnorth,12,3.5\\nsouth,40,3.5\\neast,7,4.0\\n')
Path('tool.py').write_text({TOOL_AFTER!r})
Path('figure.png').write_bytes({png((40, 120, 220))!r})
Path('analysis.ipynb').write_text({ANALYSIS_AFTER!r})
Path('weights.bin').write_bytes(bytes(range(256)) * 64)
lines = Path('long.txt').read_text().splitlines()
lines[9], lines[2299] = 'line 10 changed', 'line 2300 changed'
Path('long.txt').write_text('\\n'.join(lines) + '\\n')
Path('old.txt').unlink()
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
    (root / "tool.py").write_text(TOOL_BEFORE)
    (root / "analysis.ipynb").write_text(ANALYSIS_BEFORE)
    (root / "long.txt").write_text(LONG_BEFORE)
    (root / "old.txt").write_text("an old note\n")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home) as server:
        yield server


@pytest.fixture(scope="module")
def changed(lab: LabServer) -> LabServer:
    """The Lab once the cell ran: frame 1 changed every file of the module."""
    with open_browser() as browser, checked_page(browser, "diff-run") as page:
        open_notebook(page, lab, "diff.ipynb")
        run_in_place(page, 0)
        wait_count(page, 0, 1)
    return lab


@pytest.fixture
def page(changed: LabServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    with open_browser() as browser, checked_page(browser, request.node.name) as page:
        yield page


def open_frame_files(page: Any, lab: LabServer, status: str = "") -> None:
    """The notebook, its sidebar, and frame 1's "N files" (a diff tab of its files)."""
    open_notebook(page, lab, "diff.ipynb")
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)
    files = page.locator(f'.lk-FrameRow[data-frame="1"]{status} .lk-FrameRow-files.lk-mod-link')
    files.wait_for(timeout=60_000)
    files.click()
    page.locator(".lk-DiffView-count").last.wait_for(timeout=60_000)


def test_the_csv_shows_its_changed_cell_and_the_figure_both_images(
    page: Any, lab: LabServer
) -> None:
    open_frame_files(page, lab)
    # the cell's seven files (and whatever else it touched, e.g. the notebook's checkpoint)
    links = page.locator(".lk-DiffView-fileLink").count()
    assert links >= 7 and page.locator(".lk-DiffView-count").last.inner_text() == f"{links} files"
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

    # a script side by side: the changed line faces its replacement, coloured by JupyterLab's
    # CodeMirror languages
    page.locator('.lk-DiffView-fileLink[data-path="tool.py"]').click()
    pair = page.locator(
        '.lk-DiffView-body[data-layout="side-by-side"] .lk-DiffView-pair.lk-mod-changed',
        has_text="return sum(rows)",
    )
    pair.wait_for(timeout=60_000)
    assert pair.locator(".lk-DiffView-before.lk-mod-del").inner_text() == "    return sum(rows)"
    assert pair.locator(".lk-DiffView-after.lk-mod-add").inner_text() == "    return sum(rows) * 2"
    assert [n.inner_text() for n in pair.locator(".lk-DiffView-num").all()] == ["5", "6"]
    # the added import faces a blank on the left, and the rows below stay aligned
    added = page.locator(".lk-DiffView-pair.lk-mod-add", has_text="import statistics")
    assert added.locator(".lk-DiffView-before.lk-mod-blank").count() == 1
    keyword = page.locator(
        ".lk-DiffView-split.cm-s-jupyter .lk-DiffView-before span", has_text="def"
    )
    keyword.first.wait_for(timeout=30_000)
    screenshot(page, "diff-side-by-side.png", docs=True)
    low, checked = failing(page, '.lk-DiffView-body[data-path="tool.py"]')
    assert checked > 20 and low == [], {(c["element"], c["text"], c["ratio"]) for c in low}

    # unified, as toggled: remembered in the extension's settings
    page.locator('.lk-DiffView-layoutButton[data-layout="unified"]').click()
    unified = page.locator('.lk-DiffView-body[data-layout="unified"] .lk-DiffView-lines')
    unified.wait_for(timeout=60_000)
    added_line = unified.locator(".lk-DiffView-line.lk-mod-add", has_text="sum(rows)")
    assert added_line.locator(".lk-DiffView-text").inner_text() == "    return sum(rows) * 2"
    removed_line = unified.locator(".lk-DiffView-line.lk-mod-del", has_text="sum(rows)")
    assert removed_line.locator(".lk-DiffView-text").inner_text() == "    return sum(rows)"
    saved = (
        Path(lab.env["JUPYTERLAB_SETTINGS_DIR"]) / "logician-kernel" / "plugin.jupyterlab-settings"
    )
    deadline = time.monotonic() + 30
    while '"unified"' not in (saved.read_text() if saved.exists() else ""):
        assert time.monotonic() < deadline, "the layout was not saved in the settings"
        time.sleep(0.1)
    page.locator('.lk-DiffView-layoutButton[data-layout="side-by-side"]').click()
    pair.wait_for(timeout=30_000)

    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme',"
        " {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_selector('body[data-jp-theme-light="false"]', state="attached", timeout=60_000)
    page.locator('.lk-DiffView-fileLink[data-path="sales.csv"]').click()
    changed.first.wait_for(timeout=60_000)
    screenshot(page, "diff-csv-dark.png", docs=True)
    # the side-by-side view and its toggle read well on the dark background (WCAG AA)
    page.locator('.lk-DiffView-fileLink[data-path="tool.py"]').first.click()
    pair.wait_for(timeout=60_000)
    keyword.first.wait_for(timeout=30_000)
    low, checked = failing(page, '.lk-DiffView-body[data-path="tool.py"]')
    assert checked > 20 and low == [], {(c["element"], c["text"], c["ratio"]) for c in low}

    # the rewind dialog: a file opens what the rewind would change in it, and the dialog closes
    row = page.locator('.lk-FrameRow[data-frame="1"]')
    row.locator("button", has_text="Rewind to here").click()
    dialog = page.locator(".jp-Dialog .lk-RewindDialog")
    dialog.wait_for(timeout=60_000)
    # the file the cell deleted comes back: "recreate"; every file is listed, so no "Show more"
    recreated = dialog.locator('.lk-RewindDialog-file[data-action="recreate"]')
    assert recreated.inner_text().strip() == "recreate old.txt"
    assert "1 file deleted → recreate" in dialog.locator(".lk-RewindDialog-groupLabel").inner_text()
    assert dialog.locator(".lk-RewindDialog-more").is_hidden()
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

    # rewound, the frame's files still open: what the cell had changed
    row.locator("button", has_text="Rewind to here").click()
    page.locator(".jp-Dialog .lk-RewindDialog").wait_for(timeout=60_000)
    page.locator(".jp-Dialog button.jp-mod-warn").click()
    files = page.locator(
        '.lk-FrameRow[data-frame="1"].lk-mod-rewound .lk-FrameRow-files.lk-mod-link'
    )
    files.wait_for(timeout=60_000)
    assert (lab.root / "old.txt").read_text() == "an old note\n"
    files.click()
    # the new tab's link: until it opens, `.last` may be the older tab's, hidden (under load)
    page.locator('.lk-DiffView-fileLink[data-path="old.txt"]:visible').last.click()
    gone = page.locator('.lk-DiffView-body[data-path="old.txt"] .lk-DiffView-pair.lk-mod-del')
    gone.wait_for(timeout=60_000)
    assert gone.locator(".lk-DiffView-before").inner_text() == "an old note"


def test_a_notebook_cell_by_cell_a_binary_file_by_hash_and_a_long_file_by_pages(
    page: Any, lab: LabServer
) -> None:
    open_frame_files(page, lab)

    # the notebook, matched by nbdime: outputs changed, a source edited, a cell moved
    page.locator('.lk-DiffView-fileLink[data-path="analysis.ipynb"]').last.click()
    cells = page.locator(
        '.lk-DiffView-body[data-kind="notebook"] .lk-DiffView-notebook[data-matcher="nbdime"]'
    )
    cells.wait_for(timeout=60_000)
    labels = [n.inner_text() for n in cells.locator(".lk-DiffView-nbLabel").all()]
    assert "cell 2 (outputs changed)" in labels
    assert "cell 3 (changed)" in labels
    assert any("moved from cell" in label for label in labels), labels
    edited = cells.locator(
        '.lk-DiffView-nbCell[data-status="changed"] .lk-DiffView-pair.lk-mod-changed'
    )
    assert "math.pi" in edited.locator(".lk-DiffView-after").inner_text()
    screenshot(page, "diff-notebook.png")

    # a binary file: its size and sha256, no content
    page.locator('.lk-DiffView-fileLink[data-path="weights.bin"]').last.click()
    facts = page.locator('.lk-DiffView-body[data-kind="binary"] .lk-DiffView-binary')
    facts.wait_for(timeout=60_000)
    text = facts.inner_text()
    assert "no file" in text and "16,384 bytes" in text
    assert f"sha256 {hashlib.sha256(WEIGHTS).hexdigest()}" in text

    # 2,500 lines: the kernel sends 2,000 a page; the next page holds the later change
    page.locator('.lk-DiffView-fileLink[data-path="long.txt"]').last.click()
    body = page.locator('.lk-DiffView-body[data-path="long.txt"]')
    body.locator(".lk-DiffView-pageOf", has_text="page 1 of 2").wait_for(timeout=60_000)
    first = body.locator(".lk-DiffView-pair.lk-mod-changed")
    assert (
        first.count() == 1 and first.locator(".lk-DiffView-after").inner_text() == "line 10 changed"
    )
    assert body.locator(".lk-DiffView-pair").count() == 2000
    body.locator(".lk-DiffView-next").click()
    body.locator(".lk-DiffView-pageOf", has_text="page 2 of 2").wait_for(timeout=60_000)
    later = body.locator(".lk-DiffView-pair.lk-mod-changed")
    assert later.count() == 1
    assert [n.inner_text() for n in later.locator(".lk-DiffView-num").all()] == ["2300", "2300"]
    assert later.locator(".lk-DiffView-after").inner_text() == "line 2300 changed"
    assert body.locator(".lk-DiffView-next").is_disabled()
