"""*Rewind this call* in the agent cell's own output, in a real JupyterLab (headless Chromium):
an agent cell makes three calls (bash writing a.txt, a write of b.txt, a read), and once it has
ended the two that changed files have a button in the cell, the read none. The bash one, after
the confirmation, puts back only a.txt and then says `Rewound`. While a `time.sleep` loop runs
every *Rewind this call* button (the cell's and the sidebar dialog's) is off, saying why, and
on again once the cell has finished. Screenshots land in `test-artifacts/lab/`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jupyter_client import BlockingKernelClient
from lab_server import LabServer, screenshot, write_notebook
from loopback import LoopbackServer, text_reply, tool_reply
from mcp_servers.helpers import wait_until
from test_lab_call_rewind import lab, model, page, root  # noqa: F401 - the same Lab fixtures
from test_lab_fix_button import cell, open_notebook, run_in_place, wait_count

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

SLEEP = "import os, time\nwhile not os.path.exists('stop.flag'):\n    time.sleep(0.1)"
BUSY = "A cell is running"
CALL_MIME = "application/vnd.logician.call-rewind+json"


def wait_button(tab: Any, button: Any, *, disabled: bool, title: str = "") -> None:
    tab.wait_for_function(
        "([b, off, title]) => b.disabled === off && b.title.includes(title)",
        arg=[button.element_handle(), disabled, title],
        timeout=120_000,
    )


def test_the_cell_shows_a_button_per_changing_call_and_they_are_off_while_a_cell_runs(
    page: Any,  # noqa: F811
    lab: LabServer,  # noqa: F811
    model: LoopbackServer,  # noqa: F811
    root: Path,  # noqa: F811
) -> None:
    write_notebook(
        root / "cell-calls.ipynb",
        ["%%logician\nDo the three things.", SLEEP],
        ids=["agent", "sleep"],
    )
    model.script(
        tool_reply("b1", "bash", {"command": "echo from-bash > a.txt"}),
        tool_reply("w1", "write", {"path": "b.txt", "content": "from write\n"}),
        tool_reply("r1", "read", {"path": "data.csv"}),
        text_reply("Done."),
    )
    open_notebook(page, lab, "cell-calls.ipynb")
    page.locator('.jp-SideBar li[data-id="logician-sidebar"]').click()
    page.wait_for_selector('#logician-sidebar[data-state="ready"]', timeout=60_000)
    run_in_place(page, 0)
    wait_count(page, 0, 1)
    agent = cell(page, 0)
    assert "Done." in agent.locator(".jp-OutputArea").inner_text()

    bash = agent.locator('.lk-CallOutput[data-call="b1"] button.lk-CallOutput-rewind')
    write = agent.locator('.lk-CallOutput[data-call="w1"] button.lk-CallOutput-rewind')
    bash.wait_for(timeout=60_000)
    write.wait_for(timeout=60_000)
    assert agent.locator(".lk-CallOutput").count() == 2  # the read changed nothing: no button
    assert "echo from-bash > a.txt" in agent.locator('.lk-CallOutput[data-call="b1"]').inner_text()
    wait_button(page, bash, disabled=False, title="a.txt")
    screenshot(page, "call-buttons-in-cell.png")

    bash.click()
    confirm = page.locator(".jp-Dialog", has_text="Rewind the bash call b1?")
    confirm.wait_for(timeout=30_000)
    assert "a.txt" in confirm.inner_text() and "b.txt" not in confirm.inner_text()
    confirm.locator("button.jp-mod-warn").click()
    wait_until(lambda: not (root / "a.txt").exists(), 120, "a.txt deleted by the call rewind")
    assert (root / "b.txt").read_text() == "from write\n"  # the other call's file stays
    result = agent.locator('.lk-CallOutput[data-call="b1"] .lk-CallOutput-result')
    page.wait_for_function(
        "(el) => el.textContent.includes('Rewound call b1')",
        arg=result.element_handle(),
        timeout=60_000,
    )
    page.wait_for_function(
        "(b) => b.disabled && b.textContent === 'Rewound'", arg=bash.element_handle()
    )

    # a cell runs: the cell's buttons are off, saying why, and on again after it
    run_in_place(page, 1)
    wait_button(page, write, disabled=True, title=BUSY)
    screenshot(page, "call-buttons-busy.png")
    (root / "stop.flag").write_text("")
    wait_count(page, 1, 2)
    wait_button(page, write, disabled=False, title="b.txt")
    page.wait_for_function("(b) => b.disabled", arg=bash.element_handle())  # still Rewound

    # the sidebar dialog's too: open while idle, then a cell runs (a second client runs it,
    # the dialog being modal; a blocked kernel could not list the calls for a dialog opened
    # during the cell)
    (root / "stop.flag").unlink()
    page.locator('.lk-FrameRow[data-frame="1"] button.lk-FrameRow-calls').click()
    listed = page.locator('.lk-CallLine[data-call="w1"] button.lk-CallLine-rewind')
    listed.wait_for(timeout=60_000)
    wait_button(page, listed, disabled=False, title="b.txt")
    other = second_client(lab)
    try:
        msg_id = other.execute(SLEEP)
        wait_button(page, listed, disabled=True, title=BUSY)
        wait_button(page, write, disabled=True, title=BUSY)
        (root / "stop.flag").write_text("")
        reply = other.get_shell_msg(timeout=120)
        assert reply["parent_header"]["msg_id"] == msg_id and reply["content"]["status"] == "ok"
    finally:
        other.stop_channels()
    wait_button(page, listed, disabled=False, title="b.txt")
    page.keyboard.press("Escape")
    wait_button(page, write, disabled=False, title="b.txt")

    # saved, the controls are their data and the hint (no widget state); reopened, the rewound
    # call still says Rewound (read from the kernel's ledger)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    saved = root / "cell-calls.ipynb"
    wait_until(lambda: CALL_MIME in saved.read_text(), 60, "the notebook saved")
    stored = [
        o["data"]
        for o in json.loads(saved.read_text())["cells"][0]["outputs"]
        if CALL_MIME in o.get("data", {})
    ]
    assert [sorted(d) for d in stored] == [[CALL_MIME, "text/plain"]] * 2
    assert "`%logician rewind --call w1`" in "".join(stored[1]["text/plain"])
    open_notebook(page, lab, "cell-calls.ipynb")
    again = cell(page, 0).locator('.lk-CallOutput[data-call="b1"] button.lk-CallOutput-rewind')
    again.wait_for(timeout=60_000)
    page.wait_for_function(
        "(b) => b.disabled && b.textContent === 'Rewound'", arg=again.element_handle()
    )


def second_client(server: LabServer) -> Any:
    """Another client of the notebook's kernel (its connection file, the only kernel's)."""
    runtime = Path(server.env["JUPYTER_RUNTIME_DIR"])
    (path,) = runtime.glob("kernel-*.json")
    client = BlockingKernelClient()
    client.load_connection_file(str(path))
    client.start_channels()
    client.wait_for_ready(timeout=60)
    return client
