"""Rewind takes the kernel's variables back with the files: through a real kernel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, Reply, openai_chunks, sse

pytestmark = pytest.mark.kernel

SETUP = """\
import numpy as np, pandas as pd
lst = [1, 2, 3]
d = {'k': 1}
a = [1, 2]
b = a
x = 1
class P:
    def __init__(self, v):
        self.v = v
p = P(1)
f = lambda v: v + 1
arr = np.arange(5.0)
df = pd.DataFrame({'a': [1, 2]}, index=['r', 's'])
gone = 'bye'
"""

CHANGE = """\
lst.append(4)
d['k'] = 2
a.append(3)
x = 2
p.v = 9
f = lambda v: v * 100
arr += 1
df['c'] = df['a'] * 1.5
del gone
new = 1
gen = (i for i in range(3))
open('v.txt', 'w').write('v')
"""

CHECK = """\
assert lst == [1, 2, 3], lst
assert d == {'k': 1}, d
assert a == [1, 2] and b is a
assert x == 1 and p.v == 1 and f(1) == 2
assert np.array_equal(arr, np.arange(5.0))
pd.testing.assert_frame_equal(df, pd.DataFrame({'a': [1, 2]}, index=['r', 's']))
assert gone == 'bye'
assert 'new' not in globals() and 'gen' not in globals()
print('namespace as before')
"""


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str]):
    k = Kernel(workspace, kernel_env)
    yield k
    k.shutdown()


def ok(k: Kernel, code: str) -> str:
    r = k.run(code)
    assert r.status == "ok", r.text
    return r.text


def test_rewind_brings_every_kind_of_variable_back_with_the_files(
    kernel: Kernel, workspace: Path
) -> None:
    ok(kernel, SETUP)
    changed = ok(kernel, CHANGE)
    assert "not captured" not in changed  # a notice, not the cell's output (ui.notices)
    said = ok(kernel, "%logician notices")
    assert "variable(s) not captured" in said and "gen (cannot be pickled" in said
    listing = ok(kernel, "%logician vars --last")
    for line in ("lst ", "d ", "a ", "b ", "arr ", "df ", "p ", "f "):
        assert line in listing, listing
    assert "new" in listing and "created" in listing and "np " not in listing
    assert "not captured: cannot be pickled" in listing
    plan = ok(kernel, "%logician rewind --last --dry-run")
    assert "would delete v.txt" in plan
    assert "would restore variable lst" in plan and "would delete variable new" in plan
    report = ok(kernel, "%logician rewind --last")
    assert "restored  variable df" in report and "deleted   variable gen" in report
    assert not (workspace / "v.txt").exists()
    assert "namespace as before" in ok(kernel, CHECK)
    # Reading a restored value is no change.
    ok(kernel, "print(len(lst), arr.sum())")
    assert "no user variable" in ok(kernel, "%logician vars --last")


def test_three_frames_only_modes_and_the_size_cap(kernel: Kernel, workspace: Path) -> None:
    for command, expected in [
        ("%logician vars --last", "no frame of this notebook is recorded yet"),
        ("%logician vars 9", "there is no frame '9'"),
        ("%logician vars", "give one frame id (or --last)"),
        ("%logician rewind --last --variables-only --files-only", "not allowed with argument"),
    ]:
        r = kernel.run(command)
        assert r.status == "error" and expected in r.text, (command, r.text)
        assert r.text.count("\n") <= 1, r.text
    ok(kernel, "y = [0]")
    ok(kernel, "y.append(1)")
    ok(kernel, "y.append(2)")
    ok(kernel, "y.append(3)")
    frames = ok(kernel, "%logician frames")
    assert "y.append(1)" in frames
    ok(kernel, "%logician rewind 2")
    assert ok(kernel, "print(y)").strip() == "[0]"

    ok(kernel, "z = [1]")
    ok(kernel, "z.append(2)\nopen('w.txt', 'w').write('w')")
    report = ok(kernel, "%logician rewind --last --variables-only")
    assert (
        "Rewound the variables" in report and "files, frames and conversation untouched" in report
    )
    assert "restored  variable z" in report
    assert (workspace / "w.txt").exists()
    ok(kernel, "%logician rewind --last --files-only")
    assert not (workspace / "w.txt").exists()
    assert ok(kernel, "print(z)").strip() == "[1]"

    ok(kernel, "%logician config set checkpoints.max_variable_bytes 10000")
    assert ok(kernel, "big = bytes(50_000)\nsmall = 1") == ""  # the notice is not the cell's
    capped = ok(kernel, "%logician notices")
    assert "big (50,0" in capped and "max_variable_bytes" in capped
    assert "small" not in capped
    ok(kernel, "big = 2\nsmall = 2")
    report = ok(kernel, "%logician rewind --last")
    assert "not-restored variable big" in report and "re-run In [" in report
    assert "restored  variable small" in report
    ok(kernel, "%logician config set checkpoints.variables false")
    ok(kernel, "unseen = [1]")
    assert "no user variable" in ok(kernel, "%logician vars --last")


def test_restart_then_rewind_restores_from_disk(kernel: Kernel) -> None:
    ok(kernel, "keep = 5\nq = [1]")
    ok(kernel, "q.append(2)")
    kernel.restart()
    report = ok(kernel, "%logician rewind --last")
    assert "restored  variable q" in report
    assert "not-live  variable keep" in report and "not in the live namespace" in report
    assert ok(kernel, "print(q)").strip() == "[1]"


def test_the_agents_python_tool_changes_rewind_with_its_cell(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    args = json.dumps({"code": "made_by_agent = 42\nlst.append(99)"})
    tool = Reply(
        pieces=[sse(*openai_chunks(tool=("c1", "python", [args]), finish="tool_calls"), done=True)]
    )
    done = Reply(pieces=[sse(c) for c in openai_chunks(text=["Done."])] + [b"data: [DONE]\n\n"])
    with LoopbackServer() as server:
        server.script(tool, done)
        env = dict(
            kernel_env,
            LOGICIAN_MODEL__PROVIDER="openai",
            LOGICIAN_MODEL__NAME="m",
            LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
            OPENAI_API_KEY="test-key",
            LOGICIAN_PERMISSIONS__MODE="full-auto",
        )
        k = Kernel(workspace, env)
        try:
            ok(k, "lst = [1]")
            ok(k, "%%logician\nAdd to the list.")
            assert ok(k, "print(made_by_agent, lst)").strip() == "42 [1, 99]"
            listing = ok(k, "%logician vars 2")
            assert "made_by_agent" in listing and "lst" in listing
            ok(k, "%logician rewind 2")
            assert ok(k, "print('made_by_agent' in globals(), lst)").strip() == "False [1]"
        finally:
            k.shutdown()
