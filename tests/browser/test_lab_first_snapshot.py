"""The first snapshot of a big workspace in a real JupyterLab: while it reads the files, the
status bar says "scanning 1,200 / 3,000 files (40%)" and the sidebar "First snapshot:
scanning ...", then both hide. The snapshot is held until the page is watching and slowed so it
lasts a few seconds (test hooks); everything is asserted from the DOM, recorded as it changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_server import LabServer, checked_page, open_browser, screenshot, write_notebook

from logician_kernel.durable.test_hooks import HOLD_FULL_SCAN, SLOW_FIRST_SNAPSHOT

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

FILES = 3000

RECORD_JS = """() => {
  window.lkSeen = [];
  const look = () => {
    const bar = document.querySelector('#logician-sidebar .lk-Sidebar-progress');
    const item = document.querySelector('.lk-StatusItem .lk-Progress');
    window.lkSeen.push({
      sidebar: bar && !bar.hidden ? bar.textContent : null,
      statusbar: item && !item.hidden ? item.textContent : null
    });
  };
  look();
  new MutationObserver(look).observe(document.body, {
    subtree: true, childList: true, characterData: true, attributes: true,
    attributeFilter: ['hidden', 'data-done']
  });
}"""

COUNT = re.compile(r"^scanning ([\d,]+) / ([\d,]+) files \((\d+)%\)$")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    for i in range(FILES):
        d = root / "data" / f"d{i // 100:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:04d}.txt").write_text(f"{i}\n")
    write_notebook(root / "scan.ipynb", ["print(6 * 7)"], ids=["first"])
    release = root.parent / f"{root.name}-release"
    env = {HOLD_FULL_SCAN: str(release), SLOW_FIRST_SNAPSHOT: "0.003"}
    with LabServer(root, home, env=env) as server:
        server.release = release  # type: ignore[attr-defined]
        yield server


@pytest.fixture
def page(lab: LabServer) -> Iterator[Any]:
    with open_browser() as browser, checked_page(browser, "first-snapshot") as page:
        yield page


def test_the_status_bar_counts_the_first_snapshot(page: Any, lab: LabServer) -> None:
    release: Path = lab.release  # type: ignore[attr-defined]
    page.goto(lab.notebook_url("scan.ipynb"))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=120_000)
    # Opened while the snapshot is held: it shows the work under way at once.
    page.wait_for_function(
        r"""() => {
          const item = document.querySelector('.lk-StatusItem .lk-Progress');
          return item && !item.hidden && /^scanning 0 \/ 3,0\d\d files \(0%\)$/.test(item.textContent);
        }""",
        timeout=120_000,
    )
    page.evaluate(RECORD_JS)
    release.touch()
    page.wait_for_function(
        """() => window.lkSeen.some(s => s.statusbar && !s.statusbar.startsWith('scanning 0 '))""",
        timeout=120_000,
    )
    screenshot(page, "first-snapshot-progress.png", docs=True)
    page.wait_for_function(
        "() => document.querySelector('.lk-StatusItem .lk-Progress').hidden", timeout=300_000
    )

    seen = page.evaluate("() => window.lkSeen")
    shown = [s["statusbar"] for s in seen if s["statusbar"]]
    counts = []
    for text in shown:
        match = COUNT.match(text)
        assert match, text
        counts.append(int(match.group(1).replace(",", "")))
        total = int(match.group(2).replace(",", ""))  # the data and the notebook's files
        assert FILES <= total < FILES + 10, text
        assert int(match.group(3)) == counts[-1] * 100 // total, text
    assert counts == sorted(counts), counts  # it only moves forward
    assert any(0 < n < FILES for n in counts), counts  # a count in between was shown
    sidebar = [s["sidebar"] for s in seen if s["sidebar"]]
    assert sidebar and all(t.startswith("First snapshot: scanning ") for t in sidebar), sidebar
    assert seen[-1]["statusbar"] is None and seen[-1]["sidebar"] is None
