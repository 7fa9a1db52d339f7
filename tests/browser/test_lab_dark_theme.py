"""The sidebar and the rewind dialog in each of JupyterLab's themes (Light, Dark, Dark High
Contrast): screenshots of the Dark theme for the docs (`sidebar-dark.png`, `approval-dark.png`,
`rewind-dialog-dark.png`) and, in every theme, a WCAG AA contrast check, computed in the page,
of every visible text of the sidebar (with an approval card waiting) and of the rewind dialog
against the background it is drawn on: 4.5:1 for normal text, 3:1 for large text (24 px, or
18.66 px bold); disabled controls are exempt, as WCAG says.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_server import LabServer, checked_page, copy_into, open_browser, screenshot, write_notebook

HERE = Path(__file__).resolve().parent

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

THEMES = {
    "light": "JupyterLab Light",
    "dark": "JupyterLab Dark",
    "high-contrast": "JupyterLab Dark High Contrast",
}
"""Each theme's notebooks live in their own folder (their own kernels): a test's run never
depends on another theme's."""

KERNEL_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""

# Every element with text of its own under `root`, its colour composited over the first opaque
# background behind it (ancestors' backgrounds blended by their alpha and opacity).
CONTRAST_JS = """(selector) => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3] + bottom[3] * (1 - top[3]);
    if (a === 0) return [0, 0, 0, 0];
    const mix = i => (top[i] * top[3] + bottom[i] * bottom[3] * (1 - top[3])) / a;
    return [mix(0), mix(1), mix(2), a];
  };
  const lum = (c) => {
    const ch = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] >= 1) break;
    }
    let out = [255, 255, 255, 1];
    for (const layer of layers.reverse()) out = over(layer, out);
    return out;
  };
  const describe = (el) => {
    const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
    return el.tagName.toLowerCase() + cls;
  };
  const results = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      if (!own) continue;
      const style = getComputedStyle(el);
      if (style.visibility !== 'visible' || !el.getClientRects().length) continue;
      if (el.closest('[hidden], :disabled, [aria-disabled="true"]')) continue;
      let opacity = 1;
      for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
      const bg = background(el);
      const fg = parse(style.color);
      const text = over([fg[0], fg[1], fg[2], fg[3] * opacity], bg);
      const shown = over(bg, [255, 255, 255, 1]);
      const [hi, lo] = [lum(text), lum(shown)].sort((a, b) => b - a);
      const ratio = (hi + 0.05) / (lo + 0.05);
      const size = parseFloat(style.fontSize);
      const bold = Number(style.fontWeight) >= 700;
      const large = size >= 24 || (bold && size >= 18.66);
      results.push({
        element: describe(el), text: own.slice(0, 60), color: style.color,
        background: 'rgb(' + shown.slice(0, 3).map(Math.round).join(', ') + ')',
        ratio: Math.round(ratio * 100) / 100, needed: large ? 3 : 4.5
      });
    }
  }
  return results;
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    for theme in THEMES:
        (root / theme / "rewind" / "data.txt").parent.mkdir(parents=True)
        (root / theme / "rewind" / "data.txt").write_text("original\n")
        write_notebook(
            root / theme / "rewind" / "rewind.ipynb",
            ["open('data.txt', 'w').write('changed by the cell\\n')\nx = 42"],
            ids=["writes-file"],
        )
        copy_into(HERE / "lab-approval.ipynb", root / theme / "agent" / "lab-approval.ipynb")
        copy_into(HERE / "recordings", root / theme / "agent" / "recordings")
    with LabServer(root, home) as server:
        yield server


@pytest.fixture
def page(lab: LabServer, request: pytest.FixtureRequest) -> Iterator[Any]:
    with open_browser() as browser, checked_page(browser, request.node.name) as page:
        yield page


def open_themed(page: Any, lab: LabServer, theme: str, path: str) -> Any:
    """Open `theme`'s copy of `path` in that theme and show the Logician sidebar."""
    page.goto(lab.notebook_url(f"{theme}/{path}"))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.evaluate(
        "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', { theme })",
        THEMES[theme],
    )
    page.wait_for_function(
        "(theme) => document.body.dataset.jpThemeName === theme", arg=THEMES[theme]
    )
    page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=120_000)
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=120_000)
    return page.locator("#logician-sidebar")


def run_cell(page: Any, index: int) -> None:
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def failing(page: Any, selector: str) -> tuple[list[dict], int]:
    checked = page.evaluate(CONTRAST_JS, selector)
    assert checked, f"no text found under {selector}"
    return [c for c in checked if c["ratio"] < c["needed"]], len(checked)


def settled(sidebar: Any) -> None:
    """Until the frame list has loaded: its transient "…" placeholder row (in the theme's
    muted colour while the kernel answers, seconds on a loaded machine) is not what a
    reader reads; the rows that replace it are measured."""
    sidebar.locator(".lk-FrameRow.lk-mod-loading").first.wait_for(state="detached", timeout=120_000)


@pytest.mark.parametrize("theme", list(THEMES))
def test_the_sidebar_with_an_approval_card_reads_well_in_every_theme(
    page: Any, lab: LabServer, theme: str
) -> None:
    sidebar = open_themed(page, lab, theme, "agent/lab-approval.ipynb")
    run_cell(page, 0)
    page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=120_000)
    run_cell(page, 1)
    card = sidebar.locator(".lk-Approval")
    card.wait_for(timeout=120_000)
    if theme == "dark":
        screenshot(page, "sidebar-dark.png", docs=True)
        screenshot(card, "approval-dark.png", docs=True)  # the card alone
    settled(sidebar)
    bad, seen = failing(page, "#logician-sidebar")
    assert not bad, f"{len(bad)} of {seen} texts under 4.5:1 in the sidebar ({theme}): {bad}"
    card.locator("button", has_text="Allow once").click()  # the run ends; the kernel stays


@pytest.mark.parametrize("theme", list(THEMES))
def test_the_rewind_dialog_reads_well_in_every_theme(page: Any, lab: LabServer, theme: str) -> None:
    sidebar = open_themed(page, lab, theme, "rewind/rewind.ipynb")
    run_cell(page, 0)
    row = sidebar.locator('.lk-FrameRow[data-cell-id="writes-file"]')
    row.wait_for(timeout=120_000)
    row.locator("button", has_text="Rewind to here").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    dialog.locator(".lk-RewindDialog").wait_for()
    if theme == "dark":
        screenshot(page, "rewind-dialog-dark.png", docs=True)
    bad, seen = failing(page, ".jp-Dialog-content")
    assert not bad, f"{len(bad)} of {seen} texts under 4.5:1 in the rewind dialog ({theme}): {bad}"
    settled(sidebar)
    bad, seen = failing(page, "#logician-sidebar")
    assert not bad, f"{len(bad)} of {seen} texts under 4.5:1 in the sidebar ({theme}): {bad}"
    dialog.locator("button.jp-mod-reject").click()
