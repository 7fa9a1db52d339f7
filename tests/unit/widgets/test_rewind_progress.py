"""A long rewind, undo or resume tells the frontends how far it has come: a `progress` comm
message ("restoring 600 / 1,201 files") before the first path, a few a second, and once
finished, with the status's phase `rewinding` meanwhile; on the real workspace, real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logician_kernel.agent.approvals import ApprovalBroker
from logician_kernel.jupyter.comm import LogicianComms
from logician_kernel.jupyter.progress_view import PROGRESS_HZ, ProgressAnnouncer
from logician_kernel.workspace import RestoreProgress, Workspace


class Comm:
    """A comm that keeps what was sent."""

    comm_id = "c1"

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)

    def on_msg(self, fn: Any) -> None:
        pass

    def on_close(self, fn: Any) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def wired(clock: Clock) -> tuple[ProgressAnnouncer, Comm]:
    holder: list[ProgressAnnouncer] = []

    def status() -> dict[str, Any]:
        running = holder[0].running if holder else None
        return {
            "thread": "t",
            "phase": "rewinding" if running else "idle",
            "model": "m",
            "frames": 0,
            "input_tokens": 0,
            "output_tokens": 0,
        }

    comms = LogicianComms(ApprovalBroker(), status, clock=clock)
    comm = Comm()
    comms._opened(comm, {})  # type: ignore[arg-type]
    comm.sent.clear()  # the hello
    announcer = ProgressAnnouncer(comms, clock=clock)
    holder.append(announcer)
    return announcer, comm


def test_twenty_thousand_paths_make_a_few_messages_a_second_and_the_phase_says_rewinding() -> None:
    clock = Clock()
    announcer, comm = wired(clock)
    total = 20_000
    seconds = 4.0
    for done in range(total + 1):
        clock.now = 100.0 + seconds * done / total
        announcer(RestoreProgress("rewind", done, total))
    progress = [m for m in comm.sent if m["type"] == "progress"]
    statuses = [m for m in comm.sent if m["type"] == "status"]
    assert progress[0] == {
        "v": 1,
        "type": "progress",
        "operation": "rewind",
        "done": 0,
        "total": total,
        "finished": False,
    }
    assert len(progress) <= seconds * PROGRESS_HZ + 2  # never one message per path
    dones = [m["done"] for m in progress]
    assert dones == sorted(dones) and dones[-1] > total * 0.9
    assert [s["phase"] for s in statuses] == ["rewinding"]
    announcer(RestoreProgress("rewind", total, total, finished=True))
    last = comm.sent[-2:]
    assert last[0]["type"] == "progress" and last[0]["finished"] is True
    assert last[1]["type"] == "status" and last[1]["phase"] == "idle"
    assert announcer.running is None


def test_a_comm_that_fails_never_stops_the_restore() -> None:
    clock = Clock()
    announcer, comm = wired(clock)

    def broken(data: dict[str, Any]) -> None:
        raise OSError("socket closed")

    comm.send = broken  # type: ignore[method-assign]
    announcer(RestoreProgress("undo", 0, 5))  # must not raise
    announcer(RestoreProgress("undo", 5, 5, finished=True))
    assert announcer.running is None


def test_a_workspace_rewind_and_its_undo_report_every_path_and_then_finish(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "progress", "LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    workspace = Workspace.open(ws, env)
    heard: list[RestoreProgress] = []
    workspace.progress_listeners.append(heard.append)
    try:
        with workspace.frame(1, "cell-a", "write") as frame:
            parts = workspace.root / "data" / "parts"
            parts.mkdir(parents=True)
            for i in range(600):
                (parts / f"p{i:04d}.csv").write_text(f"{i}\n")
        assert frame.closed is not None
        workspace.rewind(frame.closed.frame)
        assert not (workspace.root / "data" / "parts").exists()
        rewind = [h for h in heard if h.operation == "rewind"]
        assert rewind[0] == RestoreProgress("rewind", 0, 600)
        assert [h.done for h in rewind[:-1]] == list(range(601))
        assert rewind[-1] == RestoreProgress("rewind", 600, 600, finished=True)

        heard.clear()
        workspace.undo()
        assert (workspace.root / "data" / "parts" / "p0599.csv").read_text() == "599\n"
        assert heard[0] == RestoreProgress("undo", 0, 600)
        assert heard[-1] == RestoreProgress("undo", 600, 600, finished=True)

        heard.clear()
        try:
            workspace.undo()  # nothing left to undo: still said finished, so no bar stays up
        except ValueError:
            pass
        assert heard == [RestoreProgress("undo", 0, 0, finished=True)]
    finally:
        workspace.close()


def test_the_sidebar_is_told_in_the_users_words_and_when_there_is_nothing_to_undo(
    tmp_path: Path,
) -> None:
    from logician_kernel.jupyter.rewind_source import LedgerRewindSource

    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LOGICIAN_THREAD": "words", "LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    workspace = Workspace.open(ws, env)
    source = LedgerRewindSource(workspace, LogicianComms(ApprovalBroker(), dict))
    try:
        assert source.undo_refused() == "Nothing to undo: no cell of this notebook was rewound yet"
        (workspace.root / "kept.txt").write_text("before\n")
        with workspace.frame(2, "cell-a", "write") as frame:
            (workspace.root / "data").mkdir()
            for i in range(3):
                (workspace.root / "data" / f"p{i}.csv").write_text(f"{i}\n")
            (workspace.root / "kept.txt").write_text("after\n")
        assert frame.closed is not None
        preview = source.preview_target(None, "cell-a")
        assert preview["cells"] == [{"frame": frame.closed.frame, "execution_count": 2}]
        assert preview["groups"] == [
            {"directory": "", "below": False, "delete": 0, "restore": 1, "recreate": 0},
            {"directory": "data/", "below": False, "delete": 3, "restore": 0, "recreate": 0},
        ]
        page = source.preview_page(None, "cell-a", "data/", 1, 10)
        assert [r["path"] for r in page["rows"]] == ["data/p1.csv", "data/p2.csv"]
        assert page["total"] == 3

        done = source.rewind_target(None, "cell-a", "both", False)
        assert done["headline"] == "Rewound In [2]: 3 files deleted, 1 restored"
        assert "ledger entry" not in done["headline"]
        assert source.undo_refused() is None
        undone = source.undo_target(False)
        assert undone["headline"] == "Undid the rewind of In [2]: 1 file restored, 3 recreated"
        assert source.undo_refused() == "Nothing to undo: the last rewind was already undone"
    finally:
        workspace.close()
