"""Frames and rewind through a real kernel subprocess, the way a notebook user meets them."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from kernel_harness import Kernel, git, make_kernel_env, user_git_state

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]


@pytest.fixture
def detector() -> str:
    """checkpoints.change_detection for the kernel; the tests marked BOTH_DETECTORS run twice."""
    return "auto"


# The rewind tests a stat scan must pass exactly as inotify does (shared volumes use the scan).
BOTH_DETECTORS = pytest.mark.parametrize("detector", ["inotify", "scan"])


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str], detector: str):
    k = Kernel(workspace, {**kernel_env, "LOGICIAN_CHECKPOINTS__CHANGE_DETECTION": detector})
    yield k
    k.shutdown()


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@BOTH_DETECTORS
def test_cells_that_create_modify_chmod_delete_and_shell_out_are_rewound_exactly(
    kernel: Kernel, workspace: Path
) -> None:
    before_git = user_git_state(workspace)
    original_csv = (workspace / "data.csv").read_bytes()
    original_mode = mode(workspace / "script.sh")

    r = kernel.run(
        "from pathlib import Path\n"
        "Path('new.txt').write_bytes(b'created\\x00bytes')\n"
        "Path('data.csv').write_text('a,b\\n9,9\\n')\n"
        "import os; os.chmod('script.sh', 0o755)\n"
        "os.remove('.gitignore')\n"
        "os.makedirs('out', exist_ok=True); Path('out/report.md').write_text('# r')\n",
        cell_id="cell-1",
    )
    assert r.status == "ok", r.text
    r = kernel.run("!rm data.csv && echo shell > shell.txt")
    assert r.status == "ok", r.text
    r = kernel.run(
        "import subprocess\n"
        "subprocess.run(['sh', '-c', 'printf sub > sub.txt; printf more >> new.txt'], check=True)"
    )
    assert r.status == "ok", r.text
    assert not (workspace / "data.csv").exists()
    assert mode(workspace / "script.sh") & 0o111

    frames = kernel.run("%logician frames")
    assert frames.status == "ok"
    listing = frames.text
    assert [ln.split()[0] for ln in listing.splitlines()[1:]] == ["1", "2", "3"], listing
    assert "In [1]" in listing and "In [3]" in listing

    diff = kernel.run("%logician diff 1").text
    assert "created      new.txt" in diff and "modified     data.csv" in diff
    assert "deleted      .gitignore" in diff
    assert "-1,2" in diff and "+9,9" in diff  # a real text diff of the small CSV

    r = kernel.run("%logician rewind 1")
    assert r.status == "ok", r.text
    assert "Rewound frame(s) 1..3:" in r.text
    assert (workspace / "data.csv").read_bytes() == original_csv
    assert mode(workspace / "script.sh") == original_mode
    assert (workspace / ".gitignore").read_text() == "*.log\n"
    for created in ("new.txt", "shell.txt", "sub.txt", "out/report.md"):
        assert not (workspace / created).exists(), created
    assert user_git_state(workspace) == before_git

    after = kernel.run("%logician frames").text
    assert "No frames yet" in after
    assert "(rewound)" in kernel.run("%logician frames --all").text


@BOTH_DETECTORS
def test_management_cells_are_not_frames_and_rewind_last_means_last_working_cell(
    kernel: Kernel, workspace: Path
) -> None:
    kernel.run("open('one.txt', 'w').write('1')")
    kernel.run("open('two.txt', 'w').write('2')")
    kernel.run("%logician frames")
    kernel.run("%logician diff --last\n# a comment\n%logician frames")
    r = kernel.run("%logician rewind --last")
    assert r.status == "ok", r.text
    assert (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    kernel.run("%logician rewind --last")
    assert not (workspace / "one.txt").exists()
    r = kernel.run("%logician rewind --last")
    assert r.status == "error"
    assert "nothing to rewind" in r.text


def test_frames_record_cell_id_outcome_and_interrupt(kernel: Kernel, workspace: Path) -> None:
    kernel.run("open('a.txt', 'w').write('a'); 1/0", cell_id="abc-123")
    msg_id = kernel.send(
        "import time\nopen('b.txt', 'w').write('b')\nprint('started', flush=True)\ntime.sleep(60)"
    )
    kernel.wait_for_output("started")
    kernel.km.interrupt_kernel()
    r = kernel.collect(msg_id)
    assert r.reply["ename"] == "KeyboardInterrupt"
    listing = kernel.run("%logician frames").text
    rows = listing.splitlines()[1:]
    assert "error" in rows[0] and "1 created" in rows[0]
    assert "interrupted" in rows[1] and "1 created" in rows[1]
    ledger = (workspace / ".logician" / "threads" / "test-thread.jsonl").read_text()
    assert '"cell_id":"abc-123"' in ledger
    kernel.run("%logician rewind 1")
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()


@BOTH_DETECTORS
def test_conflicting_outside_edit_is_left_alone_unless_forced(
    kernel: Kernel, workspace: Path
) -> None:
    kernel.run("open('data.csv', 'w').write('by the cell')")
    (workspace / "data.csv").write_text("edited in the Lab editor")
    r = kernel.run("%logician rewind --last")
    assert "conflict" in r.text and "data.csv" in r.text
    assert (workspace / "data.csv").read_text() == "edited in the Lab editor"
    # The frame was popped even though its conflicting file was left: rewinding it again is
    # an error, and --force on a fresh frame overwrites.
    kernel.run("open('data.csv', 'w').write('by the cell again')")
    (workspace / "data.csv").write_text("edited again")
    r = kernel.run("%logician rewind --last --force")
    assert r.status == "ok", r.text
    assert (workspace / "data.csv").read_text() == "edited in the Lab editor"


def test_bad_rewind_requests_get_one_line_answers(kernel: Kernel) -> None:
    r = kernel.run("%logician rewind --last")
    assert r.status == "error" and "nothing to rewind" in r.text
    kernel.run("x = 1")
    for command, expected in [
        ("%logician rewind 999", "there is no frame 999 (frames are 1..1)"),
        ("%logician rewind abc", "'abc' is not a frame id"),
        ("%logician rewind", "give one of a frame id, --last or --cell N"),
        ("%logician rewind --cell 77", "no frame left for cell In [77]"),
        ("%logician diff 42", "there is no frame 42"),
        ("%logician --bogus", "unknown command '--bogus'"),
    ]:
        r = kernel.run(command)
        assert r.status == "error", command
        assert expected in r.text, (command, r.text)
        assert r.text.count("\n") <= 1, r.text
    kernel.run("%logician rewind 1")
    r = kernel.run("%logician rewind 1")
    assert r.status == "error" and "already rewound" in r.text


@BOTH_DETECTORS
def test_restart_reopens_the_thread_and_rewind_still_works(kernel: Kernel, workspace: Path) -> None:
    kernel.run("open('data.csv', 'a').write('3,4\\n')")
    kernel.restart()
    table = kernel.run("%logician frames").text.splitlines()  # after the takeover's notice
    assert any(line.split()[:2] == ["1", "In"] for line in table), table
    kernel.run("open('later.txt', 'w').write('x')")
    r = kernel.run("%logician rewind 1")
    assert r.status == "ok", r.text
    assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
    assert not (workspace / "later.txt").exists()


def test_kill9_mid_cell_is_recovered_and_rewindable(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        k.run("open('kept.txt', 'w').write('kept')")
        k.send(
            "open('data.csv', 'w').write('half-written by a dying cell')\n"
            "print('written', flush=True)\nimport time; time.sleep(60)"
        )
        k.wait_for_output("written")
        k.kill9()
        k.start_again()
        r = k.run("print('alive')")
        assert "never closed" in r.stderr and "killed" in r.stderr
        listing = k.run("%logician frames").text
        assert "killed" in listing
        r = k.run("%logician rewind 2")
        assert r.status == "ok", r.text
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        assert (workspace / "kept.txt").read_text() == "kept"
    finally:
        k.shutdown()


def test_files_over_the_limit_and_ignored_files_are_reported_not_silently_dropped(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    kernel = Kernel(workspace, {**kernel_env, "LOGICIAN_CHECKPOINTS__MAX_FILE_BYTES": "1000000"})
    try:
        _over_the_limit(kernel, workspace)
    finally:
        kernel.shutdown()


def _over_the_limit(kernel: Kernel, workspace: Path) -> None:
    r = kernel.run(
        "open('big.bin', 'wb').write(b'x' * 1_500_000)\nopen('run.log', 'w').write('log')"
    )
    assert "2 changed path(s) not captured" in r.stderr
    diff = kernel.run("%logician diff --last").text
    assert "big.bin" in diff and "larger than" in diff
    assert "run.log" in diff and "ignored" in diff
    r = kernel.run("%logician rewind --last")
    assert "skipped" in r.text and "big.bin" in r.text
    assert (workspace / "big.bin").exists()  # not captured means not touched


def test_workspace_that_is_not_a_git_repository(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "notes.txt").write_text("v1")
    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        k.run("open('notes.txt', 'w').write('v2'); open('new.txt', 'w').write('n')")
        r = k.run("%logician rewind --last")
        assert r.status == "ok", r.text
        assert (ws / "notes.txt").read_text() == "v1" and not (ws / "new.txt").exists()
        assert not (ws / ".git").exists()
    finally:
        k.shutdown()


def test_git_repository_without_commits_and_subdirectory_start(tmp_path: Path) -> None:
    ws = tmp_path / "fresh"
    (ws / "notebooks").mkdir(parents=True)
    git(ws, "init", "-q")
    (ws / "top.txt").write_text("top")
    k = Kernel(ws / "notebooks", make_kernel_env(tmp_path))
    try:
        k.run("open('../top.txt', 'w').write('changed')")
        k.run("%logician rewind --last")
        assert (ws / "top.txt").read_text() == "top"
        assert (ws / ".logician").is_dir() and not (ws / "notebooks" / ".logician").exists()
        assert git(ws, "status", "--porcelain") == "?? top.txt\n"
    finally:
        k.shutdown()


def test_unusable_state_dir_leaves_cells_working_with_one_clear_notice(tmp_path: Path) -> None:
    ws = tmp_path / "blocked"
    ws.mkdir()
    (ws / ".logician").write_text("a file where the state directory should be")
    k = Kernel(ws, make_kernel_env(tmp_path))
    try:
        r = k.run("print(1 + 1)")
        assert r.status == "ok" and "2" in r.stdout
        assert "frames are off for this session" in r.stderr and ".logician" in r.stderr
        r = k.run("%logician rewind --last")
        assert r.status == "error" and "frames are off" in r.text
        assert k.run("print(3)").stderr == ""  # said once, not on every cell
    finally:
        k.shutdown()


def test_git_failure_during_capture_never_breaks_the_cell(kernel: Kernel, workspace: Path) -> None:
    kernel.run("x = 1")
    store = workspace / ".logician" / "git"
    (store / "logician-index-test-thread").write_bytes(b"garbage")
    r = kernel.run("open('a.txt', 'w').write('a'); print('ran')")
    assert r.status == "ok" and "ran" in r.stdout
    assert "not captured" in r.stderr
    assert "capture failed" in kernel.run("%logician frames").text


def test_user_git_is_untouched_by_many_frames_and_rewinds(kernel: Kernel, workspace: Path) -> None:
    (workspace / "untracked.txt").write_text("mine")
    git(workspace, "add", "untracked.txt")  # a staged change the user is in the middle of
    before = user_git_state(workspace)
    for i in range(4):
        kernel.run(f"open('f{i}.txt', 'w').write('{i}'); open('data.csv', 'a').write('{i}\\n')")
    kernel.run("%logician rewind 3")
    kernel.run("!git stash list > /dev/null")
    kernel.run("%logician rewind 1")
    time.sleep(0.05)
    assert user_git_state(workspace) == before


def test_the_rewind_control_previews_rewinds_and_follows_the_ledger(
    kernel: Kernel, workspace: Path
) -> None:
    r = kernel.run("%logician")
    views = [m for m in r.messages if m["msg_type"] == "display_data"]
    assert any("application/vnd.jupyter.widget-view+json" in m["content"]["data"] for m in views)
    kernel.run("open('data.csv', 'w').write('changed by frame 1')")
    kernel.run("open('new.txt', 'w').write('frame 2')")
    # The control refreshed after each cell: drive it as its buttons would.
    r = kernel.run(
        "ctl = get_ipython().kernel.parts.load()._controls[-1]\n"
        "print([label for label, _ in ctl.frames.options])\n"
        "ctl.frames.value = 1\n"
        "print(ctl.preview.value)\n"
        "ctl.rewind('files')\n"
        "print('RESULT', ctl.status)"
    )
    assert "restore data.csv" in r.stdout and "delete new.txt" in r.stdout
    # The driving cell is itself an open frame: the rewind pops the two closed ones.
    assert "RESULT Rewound frame(s) 1, 2: 1 deleted, 1 restored (conversation kept)" in r.stdout
    assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
    assert not (workspace / "new.txt").exists()
