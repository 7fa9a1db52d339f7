"""`%load_ext logician_kernel` behaves like the Logician kernel: variables rewind, `%logician
vars` tells the truth, frames carry the number the prompt shows, and the "loaded" notice is a
display, not stderr. In a stock ipykernel (kernelspec `python3`, through jupyter_client) and in
the IPython terminal (a real `python -m IPython` fed a script on stdin).

And the three entry points share one frame bracket (`Workspace.frame`): the same cells run in
the Logician kernel and under `%load_ext` leave the same frame records, and a script's
`AgentSession.run` records its frame the same way."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply

pytestmark = pytest.mark.kernel

CELLS = [
    "a = 1\nxs = [1]\nys = xs\ngone = 'bye'",
    "a = 2\nxs.append(2)\ndel gone\nnew = 'made'\nopen('f.txt', 'w').write('two')",
]
"""Two cells: the second changes a value, mutates a list two names share, deletes a name,
creates one and writes a file."""

CHECK = (
    "print('a =', a, '| xs =', xs, '| ys is xs:', ys is xs, '| gone =', gone, '| new' in globals())"
)


def ledger(workspace: Path, thread: str = "test-thread") -> list[dict[str, Any]]:
    text = (workspace / ".logician" / "threads" / f"{thread}.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def frame_records(workspace: Path, thread: str = "test-thread") -> list[tuple[Any, ...]]:
    """The frame records of a thread, without what differs between two runs (times, ids,
    hashes): what each frame opened on, captured of the variables, and closed with."""
    out: list[tuple[Any, ...]] = []
    for e in ledger(workspace, thread):
        if e["kind"] == "frame_open":
            out.append(("open", e["frame"], e["code"]))
        elif e["kind"] == "variables":
            out.append(("vars", e["frame"], sorted((r["name"], r["action"]) for r in e["records"])))
        elif e["kind"] == "frame_close":
            changes = sorted(
                (c["path"], c["before"]["kind"], c["after"]["kind"], c.get("by"))
                for c in e.get("changes", [])
            )
            out.append(("close", e["frame"], e["outcome"], changes))
    return out


def ok(k: Kernel, code: str) -> Any:
    r = k.run(code)
    assert r.status == "ok", r.text
    return r


def test_variables_rewind_under_load_ext_in_a_stock_ipykernel(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env, kernel_name="python3")
    try:
        ok(k, "1 + 1")  # In [1]: the stock kernel's numbering runs on before the load
        loaded = ok(k, "%load_ext logician_kernel")
        assert "Logician loaded" in loaded.text and "Unlike the Logician kernel" in loaded.text
        assert loaded.stderr == ""  # a display: the Lab shows stderr in pink, like an error
        first, second = (ok(k, cell) for cell in CELLS)
        counts = [first.reply["execution_count"], second.reply["execution_count"]]
        assert counts == [3, 4]

        frames = ok(k, "%logician frames").text
        assert f"In [{counts[0]}]" in frames and f"In [{counts[1]}]" in frames, frames
        assert "In [5]" not in frames  # numbered as the prompts are, not one too high

        listing = ok(k, "%logician vars 2").text
        assert "no user variable" not in listing, listing
        for name, action in (("a", "changed"), ("new", "created"), ("gone", "deleted")):
            assert re.search(rf"\b{name}\s+{action}\b", listing), listing
        assert re.search(r"\bxs\b", listing) and re.search(r"\bys\b", listing), listing

        rewound = ok(k, "%logician rewind --last").text
        assert "variables:" in rewound, rewound
        after = ok(k, CHECK).stdout
        assert after == "a = 1 | xs = [1] | ys is xs: True | gone = bye False\n", after
        assert not (workspace / "f.txt").exists()
    finally:
        k.shutdown()


def test_variables_rewind_under_load_ext_in_the_ipython_terminal(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    lines = [
        "%load_ext logician_kernel",
        *(cell.replace("\n", "; ") for cell in CELLS),
        "%logician frames",
        "%logician vars 2",
        "%logician rewind --last",
        CHECK,
        "exit",
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--simple-prompt",
            "--quick",
            "--no-banner",
            "--colors=NoColor",
            "--HistoryManager.enabled=False",
        ],
        input="\n".join(lines) + "\n",
        cwd=workspace,
        env=kernel_env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    out = done.stdout
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "Logician loaded" in out and "asked at this terminal's prompt" in out
    assert "Logician loaded" not in done.stderr
    # The prompts: In [1] loaded, In [2] and In [3] are the two cells; the frames say so.
    assert "In [2]: " in out and "In [3]: " in out
    frames = [e for e in ledger(workspace) if e["kind"] == "frame_open"]
    assert [f["execution_count"] for f in frames[:2]] == [2, 3]
    assert re.search(r"\bnew\s+created\b", out) and re.search(r"\ba\s+changed\b", out), out
    assert "a = 1 | xs = [1] | ys is xs: True | gone = bye False" in out, out


def test_the_kernel_load_ext_and_a_script_share_one_frame_bracket(
    tmp_path: Path, kernel_env: dict[str, str], server: LoopbackServer
) -> None:
    records = {}
    for name, spec in (("kernel", "logician"), ("load_ext", "python3")):
        ws = tmp_path / name
        ws.mkdir()
        k = Kernel(ws, kernel_env, kernel_name=spec)
        try:
            if spec == "python3":
                ok(k, "%load_ext logician_kernel")
            for cell in CELLS:
                ok(k, cell)
        finally:
            k.shutdown()
        records[name] = [(r[0], *r[2:]) for r in frame_records(ws)]  # frame ids aside
    assert records["kernel"] == records["load_ext"]
    assert [r[0] for r in records["kernel"]] == ["open", "vars", "close", "open", "vars", "close"]

    # A script: the agent's write in `AgentSession.run` is framed by the same bracket.
    server.script(
        tool_reply("w1", "write", {"path": "f.txt", "content": "two"}),
        text_reply("Wrote it."),
    )
    ws = tmp_path / "script"
    ws.mkdir()
    script = (
        "from logician_kernel.agent import AgentSession\n"
        "with AgentSession.open('.') as s:\n"
        "    r = s.run('Write f.txt.', approve=lambda call: True)\n"
        "    print('frame', r.frame, r.text)\n"
    )
    env = {
        **kernel_env,
        "LOGICIAN_MODEL__PROVIDER": "openai",
        "LOGICIAN_MODEL__NAME": "loop-model",
        "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "test-key-not-secret",
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "frame 1 Wrote it." in done.stdout
    assert frame_records(ws) == [
        ("open", 1, "Write f.txt."),
        ("close", 1, "ok", [("f.txt", "absent", "blob", "tool")]),
    ]
