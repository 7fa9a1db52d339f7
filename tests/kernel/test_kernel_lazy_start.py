"""A kernel that starts like ipykernel: after start and plain cells, the agent's machinery (the
loop, the providers and httpx, the permission policy, MCP), the magics' implementation, the
comm handler with its message models and ipywidgets are not loaded, nor the conversation's
message models, compaction, the config commands, tomlkit and difflib. The frame commands (`frames`, `diff`, `rewind`, `undo`...) run
without loading them; any other `%logician`, or the sidebar opening the `logician` comm, loads
them and they work as before.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from queue import Empty

import pytest
from kernel_harness import Kernel
from test_kernel_approvals import Sidebar, create_subshell

pytestmark = pytest.mark.kernel

REWIND_PARTS = (
    "logician_kernel.frames.frame_rewind",
    "logician_kernel.frames.rewind_plan",
    "logician_kernel.frames.undo",
    "logician_kernel.frames.call_plan",
    "logician_kernel.frames.late_saves",
    "logician_kernel.workspace.call_rows",
)

HEAVY = (
    "httpx",
    "ipywidgets",
    "mcp",
    "logician_kernel.agent.session",
    "logician_kernel.loop",
    "logician_kernel.providers",
    "logician_kernel.policy",
    "logician_kernel.mcp",
    "logician_kernel.jupyter.magics",
    "logician_kernel.jupyter.frame_magics",
    "logician_kernel.jupyter.comm",
    "logician_kernel.jupyter.comm_sources",
    "logician_kernel.jupyter.comm_messages",
    "logician_kernel.jupyter.comm_base",
    "logician_kernel.jupyter.comm_requests",
    "logician_kernel.jupyter.comm_frames",
    "logician_kernel.jupyter.comm_answers",
    "logician_kernel.jupyter.call_buttons",
    "logician_kernel.jupyter.rewind_words",
    # a prompt's and a command's pieces: the message models, compaction, the notebook tools'
    # access rules, the config commands, tomlkit (read and written only for a config file)
    # and difflib (diffs and "did you mean")
    "logician_kernel.types.messages",
    "logician_kernel.compaction",
    "logician_kernel.agent.notebook_access",
    "logician_kernel.config.commands",
    "tomlkit",
    "difflib",
    # the rewind's machinery: loaded by the first rewind, preview, undo or call listing
    *REWIND_PARTS,
)

LOADED = f"import sys, json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"


def loaded(k: Kernel) -> list[str]:
    r = k.run(LOADED)
    assert r.status == "ok", r.text
    return json.loads(r.stdout.strip().splitlines()[-1])


FRAME_PARTS = {"difflib", "logician_kernel.jupyter.frame_magics", *REWIND_PARTS}
"""What the frame commands may load: the diff, their handlers and the rewind's machinery."""


def test_plain_cells_load_nothing_of_the_agent_and_logician_then_works(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("x = 1").status == "ok"
        assert loaded(k) == []
        # a cell that changes a file: the store's object reader may start (a process, not a
        # module), nothing else
        r = k.run("open('data.csv', 'w').write('changed')")
        assert r.status == "ok", r.text
        assert k.run("1 / 0").status == "error"
        assert loaded(k) == []
        # the frame commands need only the workspace: they run, and the agent stays unloaded
        frames = k.run("%logician frames")
        assert frames.status == "ok", frames.text
        assert "In [3]" in frames.text, frames.text
        diff = k.run("%logician diff 3")  # In [3] wrote data.csv
        assert diff.status == "ok", diff.text
        assert "data.csv" in diff.text, diff.text
        assert [m for m in loaded(k) if m not in FRAME_PARTS] == []
        rewind = k.run("%logician rewind 3")
        assert rewind.status == "ok", rewind.text
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        assert "rewound" in k.run("%logician frames --all").text
        undo = k.run("%logician undo")
        assert undo.status == "ok", undo.text
        assert (workspace / "data.csv").read_text() == "changed"
        mistake = k.run("%logician rewind 3 --last")  # a user's mistake: one line, no traceback
        assert mistake.status == "error" and "Traceback" not in mistake.text, mistake.text
        assert "give one of a frame id, --last or --cell N" in mistake.text, mistake.text
        assert [m for m in loaded(k) if m not in FRAME_PARTS] == []
        # any other command loads the rest; the cells before it were recorded: the error is
        # in the context
        context = k.run("%logician context")
        assert context.status == "ok", context.text
        assert "In [4], raised an error" in context.text, context.text
        assert "logician_kernel.jupyter.magics" in loaded(k)
        # the loaded magics see what the light ones did: frame 3 is active again
        after = k.run("%logician frames")
        assert "In [3]" in after.text, after.text
    finally:
        k.shutdown()


def test_a_rewind_of_an_agent_call_loads_the_agent(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run("%logician rewind --call nosuchcall")
        assert r.status == "error" and "Traceback" not in r.text, r.text
        assert "logician_kernel.jupyter.magics" in loaded(k)
    finally:
        k.shutdown()


AGENT = (
    "httpx",
    "mcp",
    "logician_kernel.agent.session",
    "logician_kernel.loop",
    "logician_kernel.mcp",
    "logician_kernel.providers._http",
    "logician_kernel.jupyter.magics",
    "logician_kernel.compaction",
)
"""What the agent's load brings: a frontend opening the comm must not need it."""


def ask(sidebar: Sidebar, data: dict, kind: str, timeout: float = 60) -> dict:
    """Send `data` on the sidebar's comm and wait for its answer (`kind`, echoing its id)."""
    ask.asked += 1  # type: ignore[attr-defined]
    sidebar.send({**data, "id": ask.asked})  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = sidebar.wait_for(kind, timeout=max(0.5, deadline - time.monotonic()))
        if answer.get("re") == ask.asked:  # type: ignore[attr-defined]
            return answer
    raise AssertionError(f"no answer to {data}")


ask.asked = 0  # type: ignore[attr-defined]


def test_the_sidebar_opening_its_comm_loads_the_handler_not_the_agent(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        assert k.run("open('data.csv', 'w').write('changed')").status == "ok"
        assert loaded(k) == []
        sidebar = Sidebar(k, create_subshell(k))
        hello = sidebar.wait_for("hello")
        assert hello["status"]["frames"] == 2, hello  # the write, and the look at sys.modules
        assert hello["status"]["phase"] == "idle" and hello["status"]["turn"] == 0, hello
        # what the sidebar asks as the page opens is answered from the workspace alone
        frames = ask(sidebar, {"type": "frames.list", "offset": 0, "limit": 20}, "frames")
        assert frames["total"] == 2, frames
        models = ask(sidebar, {"type": "models.list"}, "models")
        assert models["current"], models
        status = ask(sidebar, {"type": "status"}, "status")
        assert status["frames"] == 2 and status["mcp"] == [], status
        now = loaded(k)
        assert "logician_kernel.jupyter.comm" in now
        assert [m for m in AGENT if m in now] == [], now
        # the agent loads with the next command that needs it, on the same comm: the sidebar
        # keeps its handler, and the status it is pushed gains the agent's fields
        r = k.run("%logician status")
        assert r.status == "ok", r.text
        assert "logician_kernel.agent.session" in loaded(k)
        after = ask(sidebar, {"type": "status"}, "status")
        assert after["phase"] == "idle" and after["model"] == hello["status"]["model"], after
        again = ask(sidebar, {"type": "frames.list", "offset": 0, "limit": 20}, "frames")
        assert after["frames"] == again["total"] >= 4, (after, again)  # the cells since
    finally:
        k.shutdown()


def _control_answer(k: Kernel, comm_id: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            m = k.kc.get_iopub_msg(timeout=0.5)
        except Empty:
            continue
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id:
            return m["content"]["data"]
    raise AssertionError(f"the widget control comm {comm_id} never answered")


def _request_states(k: Kernel, comm_id: str, *, open_it: bool) -> dict:
    session, shell = k.kc.session, k.kc.shell_channel
    if open_it:
        opened = {"comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}}
        shell.send(session.msg("comm_open", opened, metadata={"version": "1.0.0"}))
    ask = {"comm_id": comm_id, "data": {"method": "request_states"}}
    shell.send(session.msg("comm_msg", ask))
    return _control_answer(k, comm_id)


def test_the_widget_managers_request_is_answered_without_ipywidgets_until_a_widget_exists(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    """JupyterLab's widget manager opens `jupyter.widget.control` as the page opens and asks
    for every widget's state. No widget can exist before ipywidgets is imported: the empty
    answer comes without importing it. Once a cell made a widget, the same comm (asked again)
    and a new one (a page reload) get it, from ipywidgets."""
    k = Kernel(workspace, kernel_env)
    try:
        first = _request_states(k, "wm1", open_it=True)
        assert first == {"method": "update_states", "states": {}, "buffer_paths": []}, first
        assert "ipywidgets" not in json.loads(
            k.run("import sys, json; print(json.dumps(list(sys.modules)))").stdout
        )
        assert k.run("import ipywidgets as w\nslider = w.IntSlider(value=5)").status == "ok"
        for comm_id, open_it in (("wm1", False), ("wm2", True)):
            states = _request_states(k, comm_id, open_it=open_it)["states"]
            assert [s["model_name"] for s in states.values()].count("IntSliderModel") == 1, states
        # approvals still know the page renders widgets: the comm stays registered
        widgets = k.run(
            "from logician_kernel.jupyter.answer import widgets_render\n"
            "print(widgets_render(get_ipython().kernel))"
        )
        assert widgets.stdout.strip() == "True", widgets.text
    finally:
        k.shutdown()


def test_the_control_protocol_major_is_the_one_ipywidgets_speaks() -> None:
    from ipywidgets._version import __control_protocol_version__

    from logician_kernel.jupyter.kernel_parts import CONTROL_PROTOCOL_MAJOR

    assert __control_protocol_version__.split(".")[0] == CONTROL_PROTOCOL_MAJOR
