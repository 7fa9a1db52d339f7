"""The agent edits the open notebook in a real JupyterLab (headless Chromium), and a rewind
takes its edits back with the file and the variable of the same run.

A scripted model on loopback reads the outline, replaces a cell, inserts two and deletes one
(and writes a file and sets a variable); the notebook shows the edits at once. *Rewind to
before this cell* restores the notebook exactly (sources, order, types, ids); *Undo rewind*
brings the edits back; a cell the user edits afterwards is a conflict the next rewind leaves
alone. In a second notebook the model inserts `print(6*7)` and asks to run it: when the
agent's cell ends the new cell runs, shows 42 and is a frame of its own in the sidebar; a
rewind before the agent's cell takes the inserted cell out. A rewound (greyed) cell the agent
fixes and runs is live again, as when the user runs it. Screenshots land in
`test-artifacts/lab/`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from lab_server import ARTIFACTS, LabServer, open_browser, write_notebook
from loopback import LoopbackServer, text_reply, tool_reply

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

KERNEL_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""
CELLS_JS = """() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells
  .map(c => [c.id, c.cell_type, c.getSource()])"""
VARIABLE_JS = """async () => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let text = '';
  const future = k.requestExecute({ code: "print(repr(globals().get('value')))",
                                    store_history: false });
  future.onIOPub = msg => { if (msg.header.msg_type === 'stream') text += msg.content.text; };
  await future.done;
  return text.trim();
}"""
ORIGINAL = [
    ["setup", "code", "value = 1"],
    ["target", "code", "print('old')"],
    ["victim", "code", "x = 'delete me'"],
    ["agent", "code", "%%logician\nTidy this notebook."],
]
RUNS = [["ask", "code", "%%logician\nAdd a cell that prints 6*7 and run it."]]
AGAIN = [
    ["old", "code", "print('one')"],
    ["fix", "code", "%%logician\nFix the first cell and run it."],
]
OUTPUT_JS = """id => {
  const cell = window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells
    .find(c => c.id === id);
  return cell ? cell.getOutputs().map(o => [].concat(o.text || []).join('')).join('') : null;
}"""


@pytest.fixture(scope="module")
def model() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, model: LoopbackServer) -> Iterator[LabServer]:
    root = tmp_path_factory.mktemp("nbtools-root")
    home = tmp_path_factory.mktemp("nbtools-home")
    write_notebook(root / "edits.ipynb", [c[2] for c in ORIGINAL], ids=[c[0] for c in ORIGINAL])
    write_notebook(root / "runs.ipynb", [c[2] for c in RUNS], ids=[c[0] for c in RUNS])
    write_notebook(root / "again.ipynb", [c[2] for c in AGAIN], ids=[c[0] for c in AGAIN])
    model.script(
        tool_reply("r1", "notebook_read", {}),
        tool_reply(
            "e1",
            "notebook_edit",
            {"mode": "replace", "cell_id": "target", "source": "print('new')"},
        ),
        tool_reply(
            "e2",
            "notebook_edit",
            {"mode": "insert", "after_id": "setup", "cell_type": "markdown", "source": "## Added"},
        ),
        tool_reply("e3", "notebook_edit", {"mode": "insert", "index": 0, "source": "# first"}),
        tool_reply("e4", "notebook_edit", {"mode": "delete", "cell_id": "victim"}),
        tool_reply("w1", "write", {"path": "agent.txt", "content": "by the agent\n"}),
        tool_reply("p1", "python", {"code": "value = 2"}),
        text_reply("Tidied."),
        # runs.ipynb (the second test)
        tool_reply(
            "n1",
            "notebook_edit",
            {"mode": "insert", "after_id": "ask", "source": "print(6*7)", "run": True},
        ),
        text_reply("Added a cell that prints 6*7; it runs after this cell."),
        # again.ipynb (the third test)
        tool_reply(
            "n2",
            "notebook_edit",
            {"mode": "replace", "cell_id": "old", "source": "print('two')", "run": True},
        ),
        text_reply("Fixed the first cell; it runs after this cell."),
    )
    # LabServer serves this checkout's build of the extension (lab_server._serve_this_build).
    env = {
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": model.url + "/v1",
        "LOGICIAN_MODEL__API_KEY_ENV": "",
        "LOGICIAN_PERMISSIONS__MODE": "full-auto",
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with LabServer(root, home, env=env) as server:
        yield server


@pytest.fixture
def page(lab: LabServer) -> Iterator[Any]:
    with open_browser() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        try:
            yield page
        finally:
            page.screenshot(path=str(ARTIFACTS / "notebook-tools-final.png"))
            context.close()


def cells(page: Any) -> list[list[str]]:
    return page.evaluate(CELLS_JS)


def wait_cells(page: Any, want: Any, timeout: float = 60) -> list[list[str]]:
    deadline = time.monotonic() + timeout
    got = cells(page)
    while not want(got) and time.monotonic() < deadline:
        time.sleep(0.2)
        got = cells(page)
    assert want(got), got
    return got


def wait_idle(page: Any, timeout: float = 180_000) -> None:
    page.wait_for_function(f"() => ({KERNEL_JS})() === 'idle'", timeout=timeout)


def open_notebook(page: Any, lab: LabServer, name: str) -> None:
    """Open `name` in the Lab, wait for its kernel to be idle and open the Logician sidebar."""
    page.goto(lab.notebook_url(name))
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=90_000
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    wait_idle(page)
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)


def run_in_place(page: Any, index: int) -> None:
    """Ctrl+Enter in cell `index`: it runs, and no new cell appears below the last."""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+Enter")


def rewind_before(page: Any, cell_id: str) -> None:
    """The cell menu's *Rewind to before this cell*, confirmed."""
    index = [c[0] for c in cells(page)].index(cell_id)
    prompt = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt")
    prompt.click()
    prompt.click(button="right")
    page.locator(".lm-Menu-item", has_text="Rewind to before this cell").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    dialog.locator("button.jp-mod-warn").click()


def test_the_agent_edits_cells_and_rewind_and_undo_take_them_back_and_forth(
    page: Any, lab: LabServer
) -> None:
    open_notebook(page, lab, "edits.ipynb")
    assert cells(page) == ORIGINAL

    run_in_place(page, 0)  # value = 1
    wait_idle(page)
    assert page.evaluate(VARIABLE_JS) == "1"
    run_in_place(page, 3)
    edited = wait_cells(page, lambda c: len(c) == 5 and c[0][2] == "# first", timeout=180)
    # The agent's cell has ended when its answer shows. The kernel publishes no "idle" before
    # (test_kernel_notebook_tools checks its statuses), but under load the page's indicator
    # once read "idle" while the cell still ran its next tools (a reconnect, presumably).
    page.locator(".jp-Notebook .jp-Cell").nth(4).get_by_text("Tidied.").wait_for(timeout=180_000)
    wait_idle(page)
    page.screenshot(path=str(ARTIFACTS / "notebook-tools-edited.png"))
    ids = [c[0] for c in edited]
    assert [c[1:] for c in edited] == [
        ["code", "# first"],
        ["code", "value = 1"],
        ["markdown", "## Added"],
        ["code", "print('new')"],
        ["code", "%%logician\nTidy this notebook."],
    ]
    assert ids[1] == "setup" and ids[3] == "target" and ids[4] == "agent"
    assert (lab.root / "agent.txt").read_text() == "by the agent\n"
    assert page.evaluate(VARIABLE_JS) == "2"

    rewind_before(page, "agent")
    wait_cells(page, lambda c: c == ORIGINAL)  # sources, order, types and ids, exactly
    deadline = time.monotonic() + 30
    while (lab.root / "agent.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (lab.root / "agent.txt").exists()
    wait_idle(page)
    assert page.evaluate(VARIABLE_JS) == "1"
    page.screenshot(path=str(ARTIFACTS / "notebook-tools-rewound.png"))

    page.locator("#logician-sidebar button.lk-Timeline-undo", has_text="Undo rewind").click()
    wait_cells(page, lambda c: c == edited)  # the inserted cells keep their ids too
    assert (lab.root / "agent.txt").read_text() == "by the agent\n"

    # the user edits a cell the agent replaced: the next rewind leaves it, as a conflict
    page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells
          .find(c => c.id === 'target').setSource("print('mine')")"""
    )
    wait_idle(page)
    rewind_before(page, "agent")
    expected = [c if c[0] != "target" else ["target", "code", "print('mine')"] for c in ORIGINAL]
    wait_cells(page, lambda c: c == expected)
    ledger = next(lab.root.rglob(".logician/threads/*.jsonl"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        entries = [json.loads(line) for line in ledger.read_text().splitlines()]
        applied = [e for e in entries if e["kind"] == "cell_restore" and e["state"] == "applied"]
        if len(applied) == 3:
            break
        time.sleep(0.2)
    assert [a["direction"] for a in applied] == ["rewind", "undo", "rewind"]
    assert applied[-1]["conflicts"] == ["target"]
    page.screenshot(path=str(ARTIFACTS / "notebook-tools-conflict.png"))


def test_a_cell_the_agent_inserts_and_runs_runs_after_its_cell_as_its_own_frame(
    page: Any, lab: LabServer
) -> None:
    open_notebook(page, lab, "runs.ipynb")
    assert cells(page) == RUNS

    run_in_place(page, 0)
    got = wait_cells(page, lambda c: len(c) == 2 and c[1][2] == "print(6*7)", timeout=180)
    new = got[1][0]
    # the agent's cell ends, then the inserted cell runs in its place and shows 42
    shows = f"() => ({OUTPUT_JS})({json.dumps(new)}) === '42\\n'"
    page.wait_for_function(shows, timeout=180_000)
    wait_idle(page)
    sidebar = page.locator("#logician-sidebar")
    sidebar.locator(f'.lk-FrameRow[data-cell-id="{new}"]').wait_for(timeout=60_000)
    sidebar.locator('.lk-FrameRow[data-cell-id="ask"]').wait_for()
    assert sidebar.locator(".lk-FrameRow").count() == 2  # the agent's cell, then the run
    page.screenshot(path=str(ARTIFACTS / "notebook-tools-run.png"))

    rewind_before(page, "ask")
    wait_cells(page, lambda c: c == RUNS)  # the inserted cell is taken out


def test_a_rewound_cell_the_agent_runs_again_is_live_again(page: Any, lab: LabServer) -> None:
    open_notebook(page, lab, "again.ipynb")
    old = page.locator(".jp-Notebook .jp-Cell").nth(0)
    run_in_place(page, 0)
    page.wait_for_function(f"() => ({OUTPUT_JS})('old') === 'one\\n'", timeout=120_000)
    wait_idle(page)
    rewind_before(page, "old")
    old.and_(page.locator(".lk-mod-rewound")).wait_for(timeout=60_000)  # greyed: rewound
    wait_idle(page)

    run_in_place(page, 1)  # the agent replaces the rewound cell and runs it
    page.wait_for_function(f"() => ({OUTPUT_JS})('old') === 'two\\n'", timeout=180_000)
    wait_idle(page)
    page.wait_for_function(
        """() => !document.querySelectorAll('.jp-Notebook .jp-Cell')[0]
          .classList.contains('lk-mod-rewound')""",
        timeout=30_000,
    )
    page.screenshot(path=str(ARTIFACTS / "notebook-tools-live-again.png"))
