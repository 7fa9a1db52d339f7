"""The `logician` comm as the lab extension uses it, against a real kernel over a subshell.

Every message the kernel sends is checked against the shared schema
(`logician_kernel/jupyter/comm_schema.json`, which the extension's `protocol.ts` is tested
against too).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest
from kernel_harness import Kernel
from test_kernel_approvals import Sidebar, create_subshell

import logician_kernel.jupyter as jupyter_pkg

pytestmark = pytest.mark.kernel

SCHEMA = json.loads((Path(jupyter_pkg.__file__).parent / "comm_schema.json").read_text())
KERNEL_SIDE = jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA["kernel"]})


def run(k: Kernel, sidebar: Sidebar, code: str, cell_id: str) -> list[dict]:
    """Run a cell; the comm messages sent while it ran (they belong to its output)."""
    r = k.run(code, cell_id=cell_id)
    assert r.status == "ok", r.text
    sent = [
        m["content"]["data"]
        for m in r.messages
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == sidebar.comm_id
    ]
    sidebar.seen.extend(sent)
    return sent


def valid(messages: list[dict]) -> None:
    for data in messages:
        errors = list(KERNEL_SIDE.iter_errors(data))
        assert not errors, f"{data.get('type')}: {errors[0].message}"


def test_preview_and_rewind_a_cell_from_the_comm(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        sidebar = Sidebar(k, create_subshell(k))
        hello = sidebar.wait_for("hello")
        assert hello["status"]["phase"] == "idle"
        sent = run(k, sidebar, "open('data.csv', 'w').write('changed')", "cell-a")
        assert {"type": "frames.changed", "total": 1, "v": 1} in sent
        sent = run(k, sidebar, "open('new.txt', 'w').write('n')", "cell-b")
        assert [d["total"] for d in sent if d["type"] == "frames.changed"] == [2]
        # one status as the cell starts (running: the Lab turns its call buttons off), one after
        statuses = [(d["frames"], d["running_cell"]) for d in sent if d["type"] == "status"]
        assert statuses == [(1, True), (2, False)]

        sidebar.send({"type": "frames.preview", "cell_id": "cell-a", "id": "p1"})
        preview = sidebar.wait_for("frames.preview")
        assert preview["re"] == "p1" and preview["frame"] == 1 and preview["frames"] == [1, 2]
        assert {(f["action"], f["path"]) for f in preview["files"]} == {
            ("restore", "data.csv"),
            ("delete", "new.txt"),
        }
        assert (workspace / "data.csv").read_text() == "changed"  # a preview touches nothing

        sidebar.send({"type": "frames.rewind", "cell_id": "cell-b", "mode": "files", "id": 7})
        done = sidebar.wait_for("frames.rewind")
        assert done["re"] == 7 and done["frames"] == [2] and "new.txt" in done["summary"]
        assert not (workspace / "new.txt").exists()
        # the announcement goes out before the answer, to every open comm
        (announced,) = [d for d in sidebar.seen if d["type"] == "frames.rewound"]
        assert announced["cell_ids"] == ["cell-b"] and announced["frames"] == [2]
        assert done["headline"] == "Rewound In [2]: 1 file deleted"  # the user's words
        # its progress went out on the way: started, finished, the phase rewinding meanwhile
        progress = [d for d in sidebar.seen if d["type"] == "progress"]
        assert progress[0]["done"] == 0 and progress[0]["total"] == 1
        assert progress[-1] == {**progress[-1], "finished": True, "done": 1}
        phases = [d["phase"] for d in sidebar.seen if d["type"] == "status"]
        assert "rewinding" in phases and phases[-1] != "rewinding"
        valid(sidebar.seen)

        sidebar.send({"type": "frames.list", "offset": 0, "limit": 5, "id": "l"})
        rows = sidebar.wait_for("frames")["rows"]
        assert [(r["frame"], r["status"], r["cell_id"]) for r in rows] == [
            (2, "rewound", "cell-b"),
            (1, "active", "cell-a"),
        ]
        assert rows[0]["rewound_at"] and rows[0]["rewound_by"]

        # a cell rewound already has nothing left to rewind: said, not raised
        sidebar.send({"type": "frames.rewind", "cell_id": "cell-b", "id": "again"})
        error = sidebar.wait_for("error")
        assert error["re"] == "again" and "no frame left" in error["error"]
        assert (workspace / "data.csv").read_text() == "changed"
        valid(sidebar.seen)
    finally:
        k.shutdown()


def test_a_rewind_while_a_cell_runs_is_refused(workspace: Path, kernel_env: dict[str, str]) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        sidebar = Sidebar(k, create_subshell(k))
        sidebar.wait_for("hello")
        run(k, sidebar, "open('data.csv', 'w').write('one')", "cell-a")
        # an awaiting cell (as an agent run is): the kernel answers the comm meanwhile
        msg_id = k.send(
            "import asyncio\nopen('data.csv', 'w').write('two')\nawait asyncio.sleep(3)"
        )
        status = None
        for _ in range(50):  # the comm answers on its subshell while the cell runs
            sidebar.send({"type": "status"})
            status = sidebar.wait_for("status")
            if status["running_cell"]:
                break
            time.sleep(0.1)
        assert status is not None and status["running_cell"]
        sidebar.send({"type": "frames.rewind", "frame": 1})
        assert "a cell is running" in sidebar.wait_for("error")["error"]
        assert k.collect(msg_id, timeout=30).status == "ok"
        assert (workspace / "data.csv").read_text() == "two"
        sidebar.send({"type": "frames.rewind", "frame": 1})
        sidebar.wait_for("frames.rewind")
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        valid(sidebar.seen)
    finally:
        k.shutdown()


MALFORMED = [
    ({"type": "frames.rewind"}, "frame"),
    ({"type": "frames.rewind", "frame": 1, "cell_id": "x"}, "exactly one"),
    ({"type": "frames.rewind", "frame": "1"}, "frame must be an integer"),
    ({"type": "frames.rewind", "frame": True}, "frame must be an integer"),
    ({"type": "frames.rewind", "frame": 1, "mode": "all"}, "mode must be one of"),
    ({"type": "frames.rewind", "frame": 1, "force": "yes"}, "force"),
    ({"type": "frames.preview", "cell_id": ""}, "cell_id"),
    ({"type": "frames.rewind", "frame": 99}, "there is no frame 99"),
    ({"type": "frames.list", "offset": -1}, "offset"),
]


def test_malformed_frame_requests_are_answered_with_errors(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        sidebar = Sidebar(k)
        sidebar.wait_for("hello")
        run(k, sidebar, "open('data.csv', 'w').write('x')", "c")
        for i, (bad, names) in enumerate(MALFORMED):
            sidebar.send({**bad, "id": i})
            reply = sidebar.wait_for("error")
            assert reply["re"] == i and names in reply["error"], (bad, reply)
        sidebar.send({"type": "frames.preview", "frame": 99})
        assert "there is no frame 99" in sidebar.wait_for("error")["error"]
        assert (workspace / "data.csv").read_text() == "x"  # nothing was rewound
        assert "alive" in k.run("print('alive')").stdout
        valid(sidebar.seen)
    finally:
        k.shutdown()
