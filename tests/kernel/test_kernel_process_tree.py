"""A cell that runs a subprocess while another program writes: the rewind takes back the
subprocess's files and never another program's - through real kernels, for each mechanism the
machine allows (fanotify as root, `/proc` sampling always).

The other program is started by the test (not by the kernel), and everything waits on
conditions: the cell's subprocess writes its file, then waits for the other program's files.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kernel_harness import Kernel
from loopback import LoopbackServer, text_reply, tool_reply
from mcp_servers.helpers import wait_until
from test_kernel_mcp import stdio_server, wait_ready, write_servers

pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

OTHER = """
import os, sys, time
flags, ws, edited, how, text = sys.argv[1:6]
deadline = time.time() + 120
while not os.path.exists(os.path.join(flags, "started")) and time.time() < deadline:
    time.sleep(0.01)
open(os.path.join(ws, edited), how).write(text)
open(os.path.join(ws, "other_new.txt"), "w").write("another program's file")
open(os.path.join(flags, "done"), "w").close()
"""
"""Another program (an editor's save, `git pull` in a terminal): waits until the cell's
subprocess has started, edits one file (rewrites or appends), creates other_new.txt, then says
it is done."""


def subprocess_script(flags: Path) -> str:
    """The cell's subprocess: writes sub.txt (holding it open), waits for the other program,
    and holds the file a while longer before it exits (a stand-in for `!make` running while
    the user saves). The hold is for the sampling fallback, which looks every 50 ms: it sees
    files held open, never a write that opens and closes between two looks."""
    return (
        "exec 3>sub.txt; echo mine >&3; "
        f"touch {flags}/started; "
        f"while [ ! -e {flags}/done ]; do sleep 0.02; done; sleep 1"
    )


def start_other(
    flags: Path,
    workspace: Path,
    edit: tuple[str, str, str] = ("notes.txt", "w", "the user's edit"),
) -> subprocess.Popen[bytes]:
    """Start the other program; `edit` is (file, open mode, text) of its edit."""
    return subprocess.Popen([sys.executable, "-c", OTHER, str(flags), str(workspace), *edit])


def kernel_for(workspace: Path, env: dict[str, str], mechanism: str) -> Kernel:
    k = Kernel(workspace, {**env, "LOGICIAN_ATTRIBUTION": mechanism})
    status = k.run("%logician status").text
    want = {"fanotify": "exact (fanotify)", "sampling": "by process tree sampling"}[mechanism]
    if want not in status:
        k.shutdown()
        pytest.skip(f"{mechanism} is not available on this machine: {status}")
    return k


@pytest.mark.parametrize("mechanism", ["fanotify", "sampling"])
def test_a_subprocess_cell_rewinds_its_own_files_and_not_another_programs(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path, mechanism: str
) -> None:
    flags = tmp_path / "flags"
    flags.mkdir()
    (workspace / "notes.txt").write_text("v1")
    k = kernel_for(workspace, kernel_env, mechanism)
    try:
        other = start_other(flags, workspace)
        cell = f"import subprocess; subprocess.run(['sh', '-c', {subprocess_script(flags)!r}])"
        r = k.run(cell)
        assert other.wait(60) == 0
        assert r.status == "ok", r.text
        diff = k.run("%logician diff --last").text
        lines = {ln.split()[1]: ln for ln in diff.splitlines() if ln.startswith(("created", "mod"))}
        assert "by cell" in lines["sub.txt"] and "a process this kernel started" in lines["sub.txt"]
        assert "uncertain" not in lines["sub.txt"], diff

        if mechanism == "fanotify":
            # exact: the other program's writes are external, named by their writer
            for name in ("notes.txt", "other_new.txt"):
                assert "by external" in lines[name], diff
                assert "not a process of this kernel" in lines[name], diff
            r = k.run("%logician rewind --last")
        else:
            # the fallback cannot know: said in the cell at once, listed apart, kept on request
            assert "uncertain writer" in r.text and "--keep-uncertain" in r.text, r.text
            apart = diff.split("Uncertain - the writer could not be established", 1)
            assert len(apart) == 2 and "sub.txt" in apart[0], diff
            for name in ("notes.txt", "other_new.txt"):
                assert name in apart[1] and "written while `sh -c exec 3>sub.txt" in lines[name]
            dry = k.run("%logician rewind --last --dry-run").text
            assert "would restore notes.txt" in dry, dry  # reverted by default
            r = k.run("%logician rewind --last --keep-uncertain")
            assert "2 file(s) whose writer was uncertain were left alone" in r.text, r.text
            assert "external  notes.txt" in r.text and "--keep-uncertain" in r.text, r.text
        assert r.status == "ok", r.text
        assert not (workspace / "sub.txt").exists()
        assert (workspace / "notes.txt").read_text() == "the user's edit"
        assert (workspace / "other_new.txt").read_text() == "another program's file"
    finally:
        k.shutdown()


@pytest.mark.parametrize("mechanism", ["fanotify", "sampling"])
def test_an_agent_bash_call_rewinds_its_files_and_not_another_programs(
    workspace: Path,
    agent_env: dict[str, str],
    server: LoopbackServer,
    tmp_path: Path,
    mechanism: str,
) -> None:
    flags = tmp_path / "flags"
    flags.mkdir()
    (workspace / "notes.txt").write_text("v1")
    server.script(
        tool_reply("b1", "bash", {"command": subprocess_script(flags)}),
        text_reply("Done."),
    )
    k = kernel_for(workspace, agent_env, mechanism)
    try:
        other = start_other(flags, workspace)
        r = k.run("%%logician\nBuild it.")
        assert other.wait(60) == 0
        assert r.status == "ok", r.text
        diff = k.run("%logician diff --last").text
        lines = {ln.split()[1]: ln for ln in diff.splitlines() if ln.startswith(("created", "mod"))}
        assert "by tool bash (b1)" in lines["sub.txt"] and "uncertain" not in lines["sub.txt"]
        if mechanism == "fanotify":
            assert "by external" in lines["notes.txt"] and "by external" in lines["other_new.txt"]
            assert k.run("%logician rewind --last").status == "ok"
        else:  # written while the bash call ran: uncertain, kept when asked
            for name in ("notes.txt", "other_new.txt"):
                assert "by tool bash (b1)" in lines[name] and "uncertain" in lines[name], diff
            r = k.run("%logician rewind --last --keep-uncertain")
            assert r.status == "ok" and "whose writer was uncertain were left alone" in r.text
        assert not (workspace / "sub.txt").exists()
        assert (workspace / "notes.txt").read_text() == "the user's edit"
        assert (workspace / "other_new.txt").exists()
    finally:
        k.shutdown()


@pytest.mark.parametrize("mechanism", ["fanotify", "sampling"])
def test_a_file_an_mcp_server_wrote_during_its_call_rewinds_with_the_agent_cell(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer, mechanism: str
) -> None:
    """The server is a child the kernel started: its write during `notes__write_note` is that
    call's (exact with fanotify; uncertain but the call's with sampling, which cannot see a
    write that quick), and rewinding the agent cell takes it back."""
    env = {**agent_env, "LOGICIAN_PERMISSIONS__ALLOW": '["mcp(notes__*)"]'}
    write_servers(env, {"notes": stdio_server(env={"MCP_NOTES_DIR": str(workspace)})})
    server.script(
        tool_reply("m1", "notes__write_note", {"name": "note.md", "text": "from the server"}),
        text_reply("Saved."),
    )
    k = kernel_for(workspace, env, mechanism)
    try:
        wait_ready(k, "notes")
        r = k.run("%%logician\nSave a note.")
        assert r.status == "ok", r.text
        assert (workspace / "note.md").read_text() == "from the server"
        diff = k.run("%logician diff --last").text
        line = next(ln for ln in diff.splitlines() if " note.md " in ln)
        assert "by tool notes__write_note (m1)" in line, diff
        assert ("uncertain" in line) == (mechanism == "sampling"), diff
        assert k.run("%logician rewind --last").status == "ok"
        assert not (workspace / "note.md").exists()
    finally:
        k.shutdown()


def test_rewind_call_takes_back_one_bash_call_of_three_and_undo_brings_it_back(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("w1", "write", {"path": "a.txt", "content": "from write\n"}),
        tool_reply(
            "b1", "bash", {"command": "echo from-bash > b.txt; echo more >> data.csv; rm script.sh"}
        ),
        tool_reply("p1", "python", {"code": "open('c.txt', 'w').write('from python')"}),
        text_reply("Done."),
    )
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%%logician\nDo the three things.").status == "ok"
        dry = k.run("%logician rewind --call b1 --dry-run").text
        assert "would (its frame stays)" in dry and "delete b.txt" in dry, dry
        assert "restore data.csv" in dry and "a.txt" not in dry and "c.txt" not in dry, dry
        assert "recreate script.sh" in dry, dry  # the call deleted it: it comes back
        assert (workspace / "b.txt").exists()  # a dry run touches nothing
        r = k.run("%logician rewind --call b1")
        assert r.status == "ok", r.text
        assert "Rewound call b1" in r.text and "frames stay" in r.text, r.text
        assert not (workspace / "b.txt").exists()
        assert (workspace / "data.csv").read_text() == "a,b\n1,2\n"
        assert (workspace / "script.sh").read_text() == "#!/bin/sh\necho hi\n"
        assert (workspace / "a.txt").exists() and (workspace / "c.txt").exists()
        again = k.run("%logician rewind --call b1").text
        assert "already rewound" in again, again

        r = k.run("%logician undo")
        assert r.status == "ok", r.text
        assert (workspace / "b.txt").read_text() == "from-bash\n"
        assert (workspace / "data.csv").read_text().endswith("more\n")

        r = k.run("%logician rewind --call p1")  # a python call too
        assert r.status == "ok", r.text
        assert not (workspace / "c.txt").exists() and (workspace / "b.txt").exists()
        assert (workspace / "a.txt").exists()
    finally:
        k.shutdown()


def test_a_call_rewind_cut_short_by_kill9_resumes(
    workspace: Path, agent_env: dict[str, str], server: LoopbackServer
) -> None:
    server.script(
        tool_reply("w1", "write", {"path": "kept.txt", "content": "kept\n"}),
        tool_reply("b1", "bash", {"command": "for n in 1 2 3; do echo $n > out$n.txt; done"}),
        text_reply("Done."),
    )
    k = Kernel(workspace, agent_env)
    try:
        assert k.run("%%logician\nMake the outputs.").status == "ok"
        # Test-only hook: the kernel SIGKILLs itself after this many restored paths.
        k.run("import os; os.environ['LOGICIAN_TEST_REWIND_KILL_AFTER'] = '1'")
        k.send("%logician rewind --call b1")
        process = k.km.provisioner.process  # type: ignore[union-attr]
        wait_until(
            lambda: process.returncode is not None or process.poll() is not None, 120, "kill"
        )
        k.kc.stop_channels()
        k.km.cleanup_resources()
        assert sum((workspace / f"out{n}.txt").exists() for n in (1, 2, 3)) == 2
        k.start_again()
        first = k.run("print('alive')")
        assert "a rewind of call b1" in first.stderr + first.stdout
        r = k.run("%logician rewind --resume")
        assert r.status == "ok", r.text
        assert not any((workspace / f"out{n}.txt").exists() for n in (1, 2, 3))
        assert (workspace / "kept.txt").exists()
    finally:
        k.shutdown()
