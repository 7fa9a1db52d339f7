"""The lab extension in a real JupyterLab, driven in headless Chromium (Debian's) by Playwright.

What a user does: open a notebook on the Logician kernel, run a cell that writes a file, open
the Logician sidebar, see the frame, rewind from the sidebar, and find the file restored and
the cell greyed; approve an agent's tool call from the sidebar; see a 10,000-frame thread
open with a bounded timeline; see a plain Python kernel get the "not a Logician kernel" state.
Screenshots land in `test-artifacts/lab/`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab_server import (
    ARTIFACTS,
    LabServer,
    checked_page,
    copy_into,
    open_browser,
    screenshot,
    seed_thread,
    write_notebook,
)
from loopback import LoopbackServer

HERE = Path(__file__).resolve().parent
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

KERNEL_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""


def one_write_notebook(folder: Path, name: str, cell_id: str) -> None:
    """`folder/<folder name>.ipynb`: one cell rewriting `name`, which says "original"."""
    folder.mkdir()
    (folder / name).write_text("original\n")
    write_notebook(
        folder / f"{folder.name}.ipynb",
        [f"open({name!r}, 'w').write('changed by the cell\\n')"],
        ids=[cell_id],
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    (root / "data.txt").write_text("original\n")
    write_notebook(
        root / "rewind.ipynb",
        ["open('data.txt', 'w').write('changed by the cell\\n')", "x = 41 + 1"],
        ids=["writes-file", "no-files"],
    )
    one_write_notebook(root / "undo", "mine.txt", "undo-cell")
    copy_into(HERE / "lab-approval.ipynb", root / "agent" / "lab-approval.ipynb")
    copy_into(HERE / "recordings", root / "agent" / "recordings")
    copy_into(HERE / "lab-approval.ipynb", root / "prompt" / "prompt.ipynb")
    copy_into(HERE / "recordings", root / "prompt" / "recordings")
    (root / "plain").mkdir()
    plain = json.loads((root / "rewind.ipynb").read_text())
    plain["metadata"]["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    (root / "plain" / "plain.ipynb").write_text(json.dumps(plain))
    for name, frames in (("big", 10_000), ("small", 10)):
        nb = root / name / f"{name}.ipynb"
        write_notebook(nb, ["# type here\n"], ids=["typing"])
        seed_thread(nb, frames)
    write_notebook(
        root / "switch" / "switch.ipynb",
        ["open('s.txt', 'w').write('s')", "%logician thread use other-notebook"],
        ids=["switch-writes", "switch-use"],
    )
    seed_thread(root / "switch" / "other-notebook.ipynb", 1, thread="other-notebook")
    one_write_notebook(root / "prefs", "p.txt", "prefs-cell")
    write_notebook(
        root / "notices" / "notices.ipynb", ["gen = (i for i in range(3))"], ids=["makes-gen"]
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with open_browser() as b:
        yield b


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    with checked_page(browser, request.node.name) as page:
        yield page


def open_notebook(page: Any, lab: LabServer, path: str) -> None:
    page.goto(lab.notebook_url(path))
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=60_000
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    wait_kernel_idle(page)


def wait_kernel_idle(page: Any, timeout: float = 90_000) -> None:
    page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=timeout)


def run_cell(page: Any, index: int) -> None:
    """Click into cell `index` and press Shift+Enter, as a user does."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def wait_executed(page: Any, index: int, timeout: float = 90_000) -> None:
    prompt = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt")
    page.wait_for_function(
        "(el) => /\\[\\d+\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=timeout
    )
    wait_kernel_idle(page, timeout)


def open_sidebar(page: Any, state: str = "ready", timeout: float = 30_000) -> Any:
    """Show the Logician sidebar and wait until it says `state` (its `data-state`)."""
    tab = page.locator('.jp-SideBar li[data-id="logician-sidebar"]')
    tab.click()
    sidebar = page.locator("#logician-sidebar")
    sidebar.wait_for(state="visible")
    page.wait_for_selector(f'#logician-sidebar[data-state="{state}"]', timeout=timeout)
    return sidebar


def run_and_rewind_from_the_row(page: Any, sidebar: Any, cell_id: str, data: Path) -> None:
    """Run the notebook's one cell (it rewrites `data`), then click its frame's *Rewind to
    here* in the sidebar."""
    run_cell(page, 0)
    wait_executed(page, 0)
    assert data.read_text() == "changed by the cell\n"
    row = sidebar.locator(f'.lk-FrameRow[data-cell-id="{cell_id}"]')
    row.wait_for()
    row.locator("button", has_text="Rewind to here").click()


def test_rewind_from_the_sidebar_restores_the_file_and_greys_the_cell(
    page: Any, lab: LabServer
) -> None:
    data = lab.root / "data.txt"
    open_notebook(page, lab, "rewind.ipynb")
    sidebar = open_sidebar(page)

    run_cell(page, 0)
    wait_executed(page, 0)
    assert data.read_text() == "changed by the cell\n"
    run_cell(page, 1)  # Shift+Enter moved to the second cell; it changes no file
    wait_executed(page, 1)

    row = sidebar.locator('.lk-FrameRow[data-cell-id="writes-file"]')
    row.wait_for()
    assert "1 file" in row.inner_text()
    assert "In [1]" in row.inner_text()
    screenshot(page, "sidebar-timeline.png", docs=True)

    # clicking a frame goes to its cell
    row.locator(".lk-FrameRow-code").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex === 0"
    )

    # the timeline by keyboard: each row says what it is, the arrows move between rows, Enter
    # goes to the cell and Tab to the row's buttons
    active_label = "() => document.activeElement.getAttribute('aria-label') || ''"
    row.focus()
    assert page.evaluate(active_label).startswith("In [1], ok, 1 file, ")
    page.keyboard.press("ArrowDown" if row.get_attribute("data-index") == "0" else "ArrowUp")
    assert page.evaluate(active_label).startswith("In [2], ok, no files, ")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex === 1"
    )
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent") == "Rewind to here"

    row.locator("button", has_text="Rewind to here").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert "Rewind to before In [1]?" in dialog.inner_text()  # the cell as the user knows it
    assert "restore data.txt" in dialog.locator(".lk-RewindDialog-files").inner_text()
    # the second cell's `x` goes too: the dialog names the variables next to the files
    assert "delete x" in dialog.locator(".lk-RewindDialog-variables").inner_text()
    screenshot(page, "rewind-confirmation.png", docs=True)
    dialog.locator("button.jp-mod-warn").click()

    deadline = time.monotonic() + 30
    while data.read_text() != "original\n" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert data.read_text() == "original\n"

    first = page.locator(".jp-Notebook .jp-Cell").nth(0)
    page.wait_for_function(
        "(el) => el.classList.contains('lk-mod-rewound')", arg=first.element_handle()
    )
    assert "Rewound at" in (first.get_attribute("title") or "")
    assert "lk-mod-rewound" in (
        page.locator(".jp-Notebook .jp-Cell").nth(1).get_attribute("class") or ""
    )
    sidebar.locator('.lk-FrameRow.lk-mod-rewound[data-cell-id="writes-file"]').wait_for()
    screenshot(page, "rewound-cells.png", docs=True)

    # running the cell again makes it live, and it is a new frame
    run_cell(page, 0)
    wait_executed(page, 0)
    page.wait_for_function(
        "(el) => !el.classList.contains('lk-mod-rewound')", arg=first.element_handle()
    )
    assert data.read_text() == "changed by the cell\n"

    # the cell command rewinds the same cell's latest frame, with the same confirmation
    first.locator(".jp-InputPrompt").click()
    first.locator(".jp-InputPrompt").click(button="right")
    page.locator(".lm-Menu-item", has_text="Rewind to before this cell").click()
    page.screenshot(path=str(ARTIFACTS / "cell-command.png"))
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert "restore data.txt" in dialog.inner_text()
    dialog.locator("button.jp-mod-warn").click()
    deadline = time.monotonic() + 30
    while data.read_text() != "original\n" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert data.read_text() == "original\n"
    page.wait_for_function(
        "(el) => el.classList.contains('lk-mod-rewound')", arg=first.element_handle()
    )


def save_settings(page: Any, raw: str) -> None:
    """Write the extension's user settings as the Settings Editor does (server side)."""
    page.evaluate(
        "raw => window.jupyterapp.serviceManager.settings.save('logician-kernel:plugin', raw)",
        raw,
    )


def test_with_confirmation_and_greying_turned_off_a_rewind_goes_at_once_and_cells_keep_colour(
    page: Any, lab: LabServer
) -> None:
    data = lab.root / "prefs" / "p.txt"
    open_notebook(page, lab, "prefs/prefs.ipynb")
    save_settings(page, '{"confirmRewind": false, "greyRewoundCells": false}')
    try:
        open_notebook(page, lab, "prefs/prefs.ipynb")  # the page reads its settings anew
        sidebar = open_sidebar(page)
        run_and_rewind_from_the_row(page, sidebar, "prefs-cell", data)
        wait_text(data, "original\n")  # no dialog asked first
        assert page.locator(".jp-Dialog").count() == 0
        first = page.locator(".jp-Notebook .jp-Cell").nth(0)
        page.wait_for_function(
            "(el) => el.classList.contains('lk-mod-rewound')", arg=first.element_handle()
        )
        # rewound, and said so in its prompt, but not greyed out
        assert first.evaluate("el => getComputedStyle(el).opacity") == "1"
        assert "rewound" in first.evaluate(
            "el => getComputedStyle(el.querySelector('.jp-InputPrompt'), '::after').content"
        )
    finally:
        save_settings(page, "{}")


def wait_text(path: Path, text: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while path.read_text() != text and time.monotonic() < deadline:
        time.sleep(0.1)
    assert path.read_text() == text


def test_a_notice_goes_to_the_sidebar_not_the_cell(page: Any, lab: LabServer) -> None:
    open_notebook(page, lab, "notices/notices.ipynb")
    sidebar = open_sidebar(page)
    run_cell(page, 0)
    wait_executed(page, 0)
    status = page.locator(".lk-StatusItem")
    page.wait_for_function(
        "() => /\\d+ notices?/.test(document.querySelector('.lk-StatusItem')?.textContent || '')"
    )
    # the cell's outputs are ipykernel's: none for an assignment
    assert (
        page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-OutputArea-output").count() == 0
    )
    notices = sidebar.locator(".lk-Notices")
    notices.locator("summary").click()  # reading them marks them read, here and in the kernel
    item = notices.locator(".lk-Notice", has_text="not captured").first
    item.wait_for()
    assert "gen" in item.inner_text() and "frame 1" in item.inner_text()
    page.screenshot(path=str(ARTIFACTS / "notices.png"))
    page.wait_for_function(
        "() => !/notice/.test(document.querySelector('.lk-StatusItem')?.textContent || '')"
    )
    assert "notice" not in status.inner_text()


def test_undo_rewind_in_the_sidebar_brings_the_files_back(page: Any, lab: LabServer) -> None:
    data = lab.root / "undo" / "mine.txt"
    open_notebook(page, lab, "undo/undo.ipynb")
    sidebar = open_sidebar(page)
    undo = sidebar.locator("button.lk-Timeline-undo")
    page.wait_for_function(
        "() => document.querySelector('#logician-sidebar .lk-Timeline-undo').disabled",
        timeout=30_000,
    )
    assert (
        undo.get_attribute("title") == "Nothing to undo: no cell of this notebook was rewound yet"
    )
    run_and_rewind_from_the_row(page, sidebar, "undo-cell", data)
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    dialog.locator("button.jp-mod-warn").click()
    wait_text(data, "original\n")
    first = page.locator(".jp-Notebook .jp-Cell").nth(0)
    page.wait_for_function(
        "(el) => el.classList.contains('lk-mod-rewound')", arg=first.element_handle()
    )

    sidebar.locator("button.lk-Timeline-undo", has_text="Undo rewind").click()
    wait_text(data, "changed by the cell\n")
    # the frame is active again: the cell is live and the row offers a rewind again
    page.wait_for_function(
        "(el) => !el.classList.contains('lk-mod-rewound')", arg=first.element_handle()
    )
    sidebar.locator('.lk-FrameRow.lk-mod-active[data-cell-id="undo-cell"]').wait_for()
    page.screenshot(path=str(ARTIFACTS / "undo-rewind.png"))

    # with nothing left to undo, the button is off and its tooltip says why
    page.wait_for_function(
        "() => document.querySelector('#logician-sidebar .lk-Timeline-undo').disabled",
        timeout=30_000,
    )
    assert undo.get_attribute("title") == "Nothing to undo: the last rewind was already undone"
    assert data.read_text() == "changed by the cell\n"

    # the palette has Logician's commands, each with its default shortcut
    keys = page.evaluate(
        """() => Object.fromEntries(window.jupyterapp.commands.keyBindings
          .filter(b => b.command.startsWith('logician:')).map(b => [b.command, b.keys.join(' ')]))"""
    )
    assert keys == {
        "logician:rewind-last-cell": "Ctrl Alt Shift Z",
        "logician:rewind-before-cell": "Ctrl Alt Shift R",
        "logician:undo-rewind": "Ctrl Alt Shift U",
        "logician:resume-rewind": "Ctrl Alt Shift E",
        "logician:open-sidebar": "Ctrl Alt Shift O",
        "logician:focus-prompt": "Ctrl Shift L",
        "logician:fix-last-error": "Ctrl Alt Shift F",
    }
    page.keyboard.press("Control+Shift+C")
    page.keyboard.type("Logician")
    listed = page.locator(".lm-CommandPalette-item", has_text="Rewind the last cell")
    listed.wait_for()
    assert page.locator(".lm-CommandPalette-item", has_text="Undo the last rewind").count() == 1
    page.keyboard.press("Escape")
    # its shortcut asks to rewind the last cell, named as the user knows it
    page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Shift+Alt+Z")
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert "Rewind to before In [1]?" in dialog.inner_text()
    dialog.locator("button.jp-mod-reject").click()
    assert data.read_text() == "changed by the cell\n"


def test_a_frame_whose_large_files_were_evicted_says_so_in_the_timeline(
    browser: Any, tmp_path: Path
) -> None:
    # Its own server: a tiny disk budget (1 MB, files over 100 kB to the side store, only the
    # newest frame protected), so the fourth 300 kB version evicts frame 2's pre-image.
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    write = "open('f.bin', 'wb').write(bytes([{v}]) * 300_000)"
    # the last cell's frame opens after v4's background copy (and its eviction) is done
    write_notebook(
        root / "evict.ipynb",
        [*(write.format(v=v) for v in (1, 2, 3, 4)), "x = 1"],
        ids=["v1", "v2", "v3", "v4", "after"],
    )
    env = {
        "LOGICIAN_CHECKPOINTS__LARGE_FILE_BYTES": "100000",
        "LOGICIAN_CHECKPOINTS__MAX_STORE_BYTES": "1000000",
        "LOGICIAN_CHECKPOINTS__KEEP_RECENT_FRAMES": "1",
    }
    with LabServer(root, home, env=env) as server:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        try:
            open_notebook(page, server, "evict.ipynb")
            sidebar = open_sidebar(page)
            for i in range(5):
                run_cell(page, i)
                wait_executed(page, i)
            files = sidebar.locator('.lk-FrameRow[data-cell-id="v2"] .lk-FrameRow-files')
            files.wait_for()
            page.wait_for_function(
                "(el) => el.textContent.includes('large files evicted')",
                arg=files.element_handle(),
                timeout=30_000,
            )
            assert "f.bin" in (files.get_attribute("title") or "")
            v3 = sidebar.locator('.lk-FrameRow[data-cell-id="v3"] .lk-FrameRow-files')
            assert "evicted" not in v3.inner_text()
            page.screenshot(path=str(ARTIFACTS / "timeline-large-files-evicted.png"))
        finally:
            context.close()


def test_approve_an_agent_tool_call_from_the_sidebar(page: Any, lab: LabServer) -> None:
    approved = lab.root / "agent" / "approved.txt"
    open_notebook(page, lab, "agent/lab-approval.ipynb")
    sidebar = open_sidebar(page)
    run_cell(page, 0)
    wait_executed(page, 0)
    run_cell(page, 1)

    card = sidebar.locator(".lk-Approval")
    card.wait_for(timeout=60_000)
    assert "bash" in card.inner_text()
    assert "approved.txt" in card.inner_text()
    # the in-cell card asks the same question
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(
        ".jp-OutputArea", has_text="Allow once"
    ).wait_for()
    status = page.locator(".lk-StatusItem")
    assert "to approve" in status.inner_text()
    page.screenshot(path=str(ARTIFACTS / "approval-in-sidebar.png"))
    assert not approved.exists()

    card.locator("button", has_text="Allow once").click()
    wait_executed(page, 1)
    assert approved.read_text() == "approved from the sidebar\n"
    assert sidebar.locator(".lk-Approval").count() == 0
    out = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea").inner_text()
    assert "Allowed once" in out  # deciding in the sidebar resolved the in-cell card too
    assert "completed" in out
    # the status shows the run's model and tokens
    page.wait_for_function(
        "() => /tok/.test(document.querySelector('.lk-StatusItem')?.textContent || '')"
    )
    assert "in /" in sidebar.locator('dd[data-field="tokens"]').inner_text()
    assert sidebar.locator('dd[data-field="audit"]').count() == 0  # an intact log says nothing

    # Tampering with the audit log shows in the sidebar and the status bar after the next cell.
    audit = next(lab.root.rglob(".logician/audit.jsonl"))
    first, rest = audit.read_bytes().split(b"\n", 1)
    middle = len(first) // 2
    flipped = b"a" if first[middle : middle + 1] != b"a" else b"b"
    audit.write_bytes(first[:middle] + flipped + first[middle + 1 :] + b"\n" + rest)
    run_cell(page, 0)
    wait_kernel_idle(page, 60_000)
    warning = sidebar.locator('dd[data-field="audit"]')
    warning.wait_for(timeout=30_000)
    assert "run %logician audit" in warning.inner_text()
    assert "audit log damaged" in status.inner_text()


PROMPT = 'Write approved.txt with the line "approved from the sidebar", then show its size.'


def test_the_prompt_box_runs_the_prompt_as_an_agent_cell(page: Any, lab: LabServer) -> None:
    approved = lab.root / "prompt" / "approved.txt"
    open_notebook(page, lab, "prompt/prompt.ipynb")
    sidebar = open_sidebar(page)
    run_cell(page, 0)  # the loopback (replayed) model and `permissions.mode = ask`
    wait_executed(page, 0)
    cells = page.locator(".jp-Notebook .jp-Cell")
    before = cells.count()

    page.keyboard.press("Control+Shift+L")  # focuses the prompt box
    page.wait_for_function("() => document.activeElement?.classList.contains('lk-PromptBox-input')")
    page.keyboard.type(PROMPT)
    page.keyboard.press("Enter")
    # a %%logician cell with the prompt, below the active cell, running
    page.wait_for_function(
        f"() => document.querySelectorAll('.jp-Notebook .jp-Cell').length === {before + 1}"
    )
    new = cells.nth(2)
    assert new.locator(".jp-InputArea-editor").inner_text() == f"%%logician\n{PROMPT}"
    assert page.locator(".lk-PromptBox-input").input_value() == ""
    card = sidebar.locator(".lk-Approval")
    card.wait_for(timeout=60_000)
    assert not sidebar.locator("button.lk-PromptBox-stop").is_disabled()  # a run to stop
    screenshot(page, "prompt-box.png", docs=True)
    card.locator("button", has_text="Allow once").click()
    wait_executed(page, 2)
    assert approved.read_text() == "approved from the sidebar\n"
    assert "completed" in new.locator(".jp-OutputArea").inner_text()
    page.wait_for_function(
        "() => document.querySelector('#logician-sidebar .lk-PromptBox-stop').disabled"
    )
    # the prompt is in the box's history: up brings it back
    page.locator(".lk-PromptBox-input").click()
    page.keyboard.press("ArrowUp")
    assert page.locator(".lk-PromptBox-input").input_value() == PROMPT


def test_the_model_picker_lists_the_servers_models_and_switches_the_session(
    page: Any, lab: LabServer
) -> None:
    with LoopbackServer() as server:
        server.route("GET", "/v1/models", {"data": [{"id": "qwen3-coder"}, {"id": "llama3"}]})
        write_notebook(
            lab.root / "models" / "models.ipynb",
            [f"%logician config set model.base_url {server.url}/v1"],
            ids=["set-url"],
        )
        open_notebook(page, lab, "models/models.ipynb")
        sidebar = open_sidebar(page)
        run_cell(page, 0)
        wait_executed(page, 0)
        picker = sidebar.locator("select.lk-ModelPicker-select")
        picker.focus()  # opening the list asks the kernel, which asks the server
        page.wait_for_function(
            "() => [...document.querySelectorAll('.lk-ModelPicker-select option')]"
            ".some(o => o.textContent === 'llama3 (served)')",
            timeout=30_000,
        )
        picker.select_option("llama3")
        page.wait_for_function(
            """() => document.querySelector('#logician-sidebar dd[data-field="model"]')"""
            "?.textContent === 'llama3'",
            timeout=30_000,
        )
        screenshot(page, "model-picker.png")


def test_a_plain_python_kernel_gets_the_not_logician_state(page: Any, lab: LabServer) -> None:
    open_notebook(page, lab, "plain/plain.ipynb")
    sidebar = open_sidebar(page, "not-logician")
    assert "Not a Logician kernel" in sidebar.inner_text()
    assert sidebar.locator(".lk-FrameRow").count() == 0


def _typing_ms(page: Any) -> float:
    """Median time from a key press to the character on screen, over 60 keys."""
    editor = page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".cm-content")
    editor.click()
    page.keyboard.press("End")
    return page.evaluate(
        """async () => {
          const content = document.querySelector('.jp-Notebook .jp-Cell .cm-content');
          const samples = [];
          for (let i = 0; i < 60; i++) {
            const before = content.textContent.length;
            const t0 = performance.now();
            document.activeElement.dispatchEvent(new KeyboardEvent('keydown', {key: 'a', bubbles: true}));
            document.execCommand('insertText', false, 'a');
            await new Promise(r => requestAnimationFrame(() => r()));
            if (content.textContent.length <= before) { throw new Error('the key did not arrive'); }
            samples.push(performance.now() - t0);
          }
          samples.sort((a, b) => a - b);
          return samples[Math.floor(samples.length / 2)];
        }"""
    )


def test_ten_thousand_frames_open_with_a_bounded_timeline(page: Any, lab: LabServer) -> None:
    timings: dict[str, float] = {}
    for name, frames in (("small", 10), ("big", 10_000)):
        open_notebook(page, lab, f"{name}/{name}.ipynb")
        sidebar = open_sidebar(page)
        sidebar.locator(".lk-Timeline-count", has_text=f"({frames:,})").wait_for()
        sidebar.locator(f'.lk-FrameRow[data-frame="{frames}"]').wait_for()
        rendered = sidebar.locator(".lk-FrameRow").count()
        assert rendered <= min(frames, 60), f"{rendered} rows in the DOM for {frames} frames"
        timings[name] = _typing_ms(page)
        if name == "big":
            page.screenshot(path=str(ARTIFACTS / "ten-thousand-frames.png"))
            # scroll to the oldest frame: its page is fetched on demand; the DOM stays bounded
            page.eval_on_selector(".lk-Timeline", "el => { el.scrollTop = el.scrollHeight; }")
            sidebar.locator('.lk-FrameRow[data-frame="1"]').wait_for(timeout=30_000)
            assert sidebar.locator(".lk-FrameRow").count() <= 60
            held = page.evaluate("() => document.querySelectorAll('.lk-FrameRow').length")
            assert held <= 60
    ratio = timings["big"] / max(timings["small"], 1e-3)
    report = (
        f"typing latency (median key to frame): {timings['small']:.2f} ms with 10 frames, "
        f"{timings['big']:.2f} ms with 10,000 frames; ratio {ratio:.2f}\n"
    )
    (ARTIFACTS / "typing-ratio.txt").write_text(report)
    print(report)


def test_the_sidebar_follows_thread_use_to_the_other_timeline(page: Any, lab: LabServer) -> None:
    open_notebook(page, lab, "switch/switch.ipynb")
    sidebar = open_sidebar(page)
    run_cell(page, 0)
    wait_executed(page, 0)
    sidebar.locator('.lk-FrameRow[data-cell-id="switch-writes"]').wait_for()
    run_cell(page, 1)
    wait_executed(page, 1)
    # The other thread's frame replaces this notebook's (as many: only the thread differs).
    sidebar.locator(".lk-Timeline-count", has_text="(1)").wait_for(timeout=30_000)
    sidebar.locator(".lk-FrameRow-code", has_text="seeded frame").first.wait_for(timeout=30_000)
    assert sidebar.locator('.lk-FrameRow[data-cell-id="switch-writes"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / "thread-use.png"))


def test_the_extension_is_installed_enabled_and_ok() -> None:
    out = subprocess.run(
        [str(Path(sys.executable).with_name("jupyter")), "labextension", "list"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = out.stdout + out.stderr
    line = next((ln for ln in text.splitlines() if "logician-kernel" in ln), "")
    assert "enabled" in line and "OK" in line, text
