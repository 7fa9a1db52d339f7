"""One timeline per notebook: which thread a kernel opens, the listing, and switching
(workspace/threads.py, agent/threads.py), on the Jupyter-free core."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from logician_kernel.agent import AgentError, AgentSession
from logician_kernel.ledger.thread_ledger import SessionStart, read_entries
from logician_kernel.workspace.open_thread import OpenThread, held_thread_fork
from logician_kernel.workspace.threads import (
    choose_thread,
    list_threads,
    named_thread,
    notebook_thread_id,
    render_threads,
)


def test_the_thread_comes_from_the_server_then_vs_code_then_logician_thread() -> None:
    nb = "/home/u/proj/analysis.ipynb"
    both = {"JPY_SESSION_NAME": nb, "LOGICIAN_THREAD": "mine"}
    assert named_thread(both, vscode_file="/x/other.ipynb") == named_thread(
        {"JPY_SESSION_NAME": nb}
    )
    chosen = named_thread(both)
    assert chosen is not None and chosen.source == "jupyter" and chosen.notebook == nb
    vs = named_thread({"LOGICIAN_THREAD": "mine"}, vscode_file=nb)
    assert vs is not None and vs.source == "vscode"
    assert vs.thread_id == chosen.thread_id  # Jupyter and VS Code on one file: one timeline
    explicit = named_thread({"LOGICIAN_THREAD": "my report!"})
    assert explicit is not None and (explicit.thread_id, explicit.source) == (
        "my-report",
        "explicit",
    )
    assert named_thread({}) is None
    assert notebook_thread_id("/a/analysis.ipynb") != notebook_thread_id("/b/analysis.ipynb")


def _frame(ws: Path, env: dict[str, str], name: str) -> str:
    s = OpenThread.open(ws, env=env)
    assert s.checkpoints is not None
    s.checkpoints.open_frame(execution_count=1, cell_id=None, code=f"write {name}")
    (ws / name).write_text(name)
    s.checkpoints.close_frame("ok")
    thread = s.thread_id
    s.close()
    return thread


def test_an_unnamed_kernel_reopens_the_most_recent_thread_and_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = OpenThread.open(ws, env={})
    assert first.thread_id == "workspace" and first.thread_source == "new"
    assert "no notebook name reached this kernel" in first.notices[0]
    assert "had no thread yet" in first.notices[0]
    first.close()

    _frame(ws, {"JPY_SESSION_NAME": str(ws / "a.ipynb")}, "a.txt")
    time.sleep(0.01)
    b = _frame(ws, {"JPY_SESSION_NAME": str(ws / "b.ipynb")}, "b.txt")
    again = OpenThread.open(ws, env={})
    assert again.thread_id == b and again.thread_source == "recent"
    notice = again.notices[0]
    assert f"reopened this workspace's most recent thread {b!r}" in notice
    assert "1 frame(s) to rewind" in notice
    assert again.checkpoints is not None and len(again.checkpoints.active_frames()) == 1
    again.close()


def test_the_listing_names_each_thread_its_notebook_frames_and_last_use(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    a = _frame(ws, {"JPY_SESSION_NAME": str(ws / "a.ipynb")}, "a.txt")
    time.sleep(0.01)
    _frame(ws, {"LOGICIAN_THREAD": "plain"}, "p.txt")
    rows = list_threads(ws / ".logician" / "threads")
    assert [r.thread_id for r in rows] == ["plain", a]  # most recently used first
    assert rows[1].notebook == str(ws / "a.ipynb") and rows[0].notebook is None
    assert [r.frames for r in rows] == [1, 1]
    text = render_threads(rows, current=a)
    assert f"* {a}" in text.replace("  ", " ") and "a.ipynb" in text and "UTC" in text
    (start,) = [
        e for e in read_entries(ws / f".logician/threads/{a}.jsonl") if isinstance(e, SessionStart)
    ]
    assert start.notebook == str(ws / "a.ipynb")


def test_most_recent_is_by_last_append(tmp_path: Path) -> None:
    threads = tmp_path / "threads"
    threads.mkdir()
    for name, age in (("old", 100), ("new", 1)):
        path = threads / f"{name}.jsonl"
        path.write_bytes(b"")
        stamp = time.time() - age
        os.utime(path, (stamp, stamp))
    assert choose_thread({}, threads).thread_id == "new"


def test_a_script_lists_and_switches_threads(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    other = _frame(ws, {"JPY_SESSION_NAME": str(ws / "other.ipynb")}, "o.txt")
    with AgentSession.open(ws, thread="script", env=env) as session:
        assert {t.thread_id for t in session.threads()} == {other, "script"}
        workspace = session.workspace
        with pytest.raises(
            AgentError, match="no thread 'scrip' in this workspace; did you mean 'script'"
        ):
            session.use_thread("scrip")
        with pytest.raises(AgentError, match="already on thread 'script'"):
            session.use_thread("script")
        session.use_thread(other)
        assert workspace.thread_id == other
        assert len(workspace.checkpoints.active_frames()) == 1  # that notebook's frames
        with workspace.frame(1, None, "x", stream=_Sink()):
            with pytest.raises(AgentError, match="switch in a cell of its own"):
                session.use_thread("script")
        session.use_thread("fresh", create=True)
        assert workspace.thread_id == "fresh" and workspace.checkpoints.active_frames() == []
        with pytest.raises(AgentError, match="exists already"):
            session.use_thread(other, create=True)
    # the switch released each thread: another kernel can open them without forking
    s = OpenThread.open(ws, env={"LOGICIAN_THREAD": other})
    assert s.thread_id == other and not any("another kernel" in n for n in s.notices)
    s.close()


class _Sink:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def test_two_kernels_on_one_thread_fork_with_a_notice(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"JPY_SESSION_NAME": str(ws / "nb.ipynb")}
    first = OpenThread.open(ws, env=env)
    second = OpenThread.open(ws, env=env)
    try:
        assert second.thread_id.startswith(first.thread_id + "-")
        assert any(
            f"thread {first.thread_id!r} is held by another kernel" in n for n in second.notices
        )
    finally:
        second.close()
        first.close()


def test_vs_code_is_followed_before_the_first_frame_only(tmp_path: Path) -> None:
    from logician_kernel.agent.threads import follow_vscode

    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    notebook = str(ws / "vs.ipynb")
    with AgentSession.open(ws, env=env) as session:
        start = session.workspace.thread_id
        said = follow_vscode(
            session.workspace, {"__vsc_ipynb_file__": notebook}, framed=True, session=session
        )
        assert said is not None and "stays there" in said
        assert session.workspace.thread_id == start
        said = follow_vscode(
            session.workspace, {"__vsc_ipynb_file__": notebook}, framed=False, session=session
        )
        assert said is not None and "VS Code names this notebook" in said
        assert session.workspace.thread_id == notebook_thread_id(notebook)
        assert session.workspace.thread_source == "vscode"
        assert (
            follow_vscode(
                session.workspace, {"__vsc_ipynb_file__": notebook}, framed=False, session=session
            )
            is None
        )
    with AgentSession.open(ws, env={**env, "JPY_SESSION_NAME": str(ws / "lab.ipynb")}) as lab:
        # the server's name is stronger: a stale VS Code variable never moves a Lab kernel
        assert follow_vscode(lab.workspace, {"__vsc_ipynb_file__": notebook}, framed=False) is None


def test_overlapping_kernels_fork_a_held_thread_without_growing_its_id(tmp_path: Path) -> None:
    """Each unnamed kernel reopens the most recent thread, which is the last kernel's fork: a
    hundred overlapping kernels (nbclient's parallel runs) must still get ids a ledger takes."""
    from logician_kernel.ledger.thread_ledger import ThreadLedger

    thread_id = "session-0123456789ab"
    seen = {thread_id}
    for _ in range(100):
        thread_id = held_thread_fork(thread_id)
        assert thread_id.startswith("session-0123456789ab-") and len(thread_id) == 27
        assert thread_id not in seen
        seen.add(thread_id)
    ThreadLedger(tmp_path, held_thread_fork("n" * 128)).close()  # a long name still opens
