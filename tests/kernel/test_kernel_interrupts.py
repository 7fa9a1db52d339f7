"""Interrupted cells through a real kernel: `%logician frames`, `diff`, `rewind` and `undo` keep
working, whether the interrupt stopped the user's code (Python, or C code that raises when it
returns), or arrived while the kernel was opening or closing the cell's frame."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = pytest.mark.kernel


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str]):
    k = Kernel(workspace, kernel_env)
    yield k
    k.shutdown()


def interrupt(kernel: Kernel, code: str, started: str = "started") -> dict:
    """Run `code`, interrupt it once it printed `started`, and return its reply."""
    msg_id = kernel.send(code)
    kernel.wait_for_output(started)
    kernel.km.interrupt_kernel()
    return kernel.collect(msg_id, timeout=120).reply


def signal_delivered(kernel: Kernel) -> None:
    """Wait until no SIGINT is pending for the kernel process (its handler has been run)."""
    pid = kernel.km.provisioner.process.pid  # type: ignore[union-attr]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        pending = [int(ln.split()[1], 16) for ln in status.splitlines() if "Pnd:" in ln]
        if not any(mask & (1 << (signal.SIGINT - 1)) for mask in pending):
            return
        time.sleep(0.01)
    raise AssertionError("the kernel never took the SIGINT")


def frame_rows(kernel: Kernel) -> list[str]:
    r = kernel.run("%logician frames")
    assert r.status == "ok", r.text
    return r.text.splitlines()[1:]


def test_frames_diff_rewind_and_undo_work_after_interrupted_cells(
    kernel: Kernel, workspace: Path
) -> None:
    assert kernel.run("open('one.txt', 'w').write('1')").status == "ok"
    # Python code stopped in time.sleep (C code that checks for signals) ...
    reply = interrupt(
        kernel,
        "import time\nopen('two.txt', 'w').write('2')\nprint('started', flush=True)\n"
        "time.sleep(600)",
    )
    assert reply["ename"] == "KeyboardInterrupt"
    # ... and C code that never looks at signals: the interrupt is raised when it returns.
    reply = interrupt(
        kernel,
        "open('three.txt', 'w').write('3')\nprint('started', flush=True)\n"
        "total = sum(range(2 * 10**8))",
    )
    assert reply["status"] in ("ok", "error"), reply
    assert kernel.run("open('four.txt', 'w').write('4')").status == "ok"

    rows = frame_rows(kernel)
    assert [r.split()[0] for r in rows] == ["1", "2", "3", "4"], rows
    assert "interrupted" in rows[1] and "1 created" in rows[1]
    assert "1 created" in rows[2] and "1 created" in rows[3]
    diff = kernel.run("%logician diff 2").text
    assert "interrupted" in diff and "created      two.txt" in diff

    after = sorted(p.name for p in workspace.iterdir())
    r = kernel.run("%logician rewind 1")
    assert r.status == "ok" and "Rewound frame(s) 1..4" in r.text, r.text
    for name in ("one.txt", "two.txt", "three.txt", "four.txt"):
        assert not (workspace / name).exists(), name
    r = kernel.run("%logician undo")
    assert r.status == "ok", r.text
    assert sorted(p.name for p in workspace.iterdir()) == after
    assert kernel.run("time.sleep(0)").status == "ok"  # the name the rewind took is back


# The cell's code arms a slow snapshot for the next cell's frame: it waits, inside the bracket,
# until the test has interrupted and then created `go` (a real close over a large folder takes
# as long; the interrupt is the real one, sent to the kernel's process group).
SLOW_SNAPSHOT = """
import time
from pathlib import Path
_checkpoints = get_ipython().find_line_magic('logician').__self__.workspace.checkpoints
_checkpoints.wait_for_first_snapshot()  # later frames take their own pre-snapshot
_snapshot = _checkpoints._snapshot
def _slow_snapshot(*args, **kwargs):
    if kwargs.get('opening', False) == OPENING and Path('arm').exists() and not Path('go').exists():
        print('in the bracket', flush=True)
        while not Path('go').exists():
            time.sleep(0.05)
    return _snapshot(*args, **kwargs)
_checkpoints._snapshot = _slow_snapshot
"""


@pytest.mark.notices_in_cells  # the close's notice is read in the cell
@pytest.mark.parametrize("opening", [False, True], ids=["while-closing", "while-opening"])
@pytest.mark.parametrize("kernel_name", ["logician", "python3"], ids=["kernel", "load-ext"])
def test_an_interrupt_during_the_frames_own_work_leaves_a_whole_frame_and_a_reply(
    workspace: Path, kernel_env: dict[str, str], opening: bool, kernel_name: str
) -> None:
    """Before: the KeyboardInterrupt escaped the kernel's `do_execute`: the cell never got a
    reply (the frontend waited forever), its frame stayed `running` with its changes
    unrecorded, and a rewind left them behind. Under `%load_ext` the cell ran anyway."""
    kernel = Kernel(workspace, kernel_env, kernel_name=kernel_name)
    try:
        if kernel_name == "python3":
            assert kernel.run("%load_ext logician_kernel").status == "ok"
        interrupted_in_the_bracket(kernel, workspace, opening)
    finally:
        kernel.shutdown()


def interrupted_in_the_bracket(kernel: Kernel, workspace: Path, opening: bool) -> None:
    assert kernel.run(SLOW_SNAPSHOT.replace("OPENING", str(opening))).status == "ok"
    if opening:
        (workspace / "arm").write_text("")
    msg_id = kernel.send("open('arm', 'w').close()\nopen('made.txt', 'w').write('m')")
    kernel.wait_for_output("in the bracket")
    kernel.km.interrupt_kernel()
    signal_delivered(kernel)  # the kernel has seen it while still inside the bracket
    (workspace / "go").write_text("")
    r = kernel.collect(msg_id, timeout=60)
    if opening:  # stopped before its first statement, as the interrupt meant
        assert r.reply["ename"] == "KeyboardInterrupt", r.text
        assert not (workspace / "made.txt").exists()
    else:  # it had finished: its frame is recorded whole, and that is said
        assert r.status == "ok", r.text
        assert "interrupt arrived after this cell had finished" in r.text
    rows = frame_rows(kernel)
    assert len(rows) == 2, rows
    assert ("interrupted" if opening else "3 created") in rows[1], rows  # and `go`
    assert "running" not in rows[1]
    assert kernel.run("open('later.txt', 'w').write('l')").status == "ok"
    r = kernel.run("%logician rewind 2")
    assert r.status == "ok", r.text
    assert not (workspace / "made.txt").exists() and not (workspace / "later.txt").exists()
    assert (workspace / "arm").exists() == opening  # made before the kernel saw it, if opening
    r = kernel.run("%logician undo")
    assert r.status == "ok", r.text
    assert (workspace / "later.txt").exists()
    assert (workspace / "made.txt").exists() == (not opening)
