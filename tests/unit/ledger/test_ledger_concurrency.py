"""Ledger appends from several threads at once (worker loop, main thread, a frontend's
subshell) while a rewind runs: sequence numbers unique and dense, the file reopens clean, and a
rewind asked while a frame closes waits for the close instead of failing or interleaving."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from logician_kernel.frames import frame_rewind
from logician_kernel.ledger.thread_ledger import (
    MessageEntry,
    ProjectionItem,
    ThreadLedger,
    read_entries,
)
from logician_kernel.workspace import Workspace
from logician_kernel.workspace.open_thread import OpenThread


def test_appends_from_several_threads_while_a_rewind_runs_stay_dense_and_replay_exactly(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(40):
        (ws / f"f{n}.txt").write_text(f"before {n}\n")
    s = OpenThread.open(ws, env={"LOGICIAN_THREAD": "conc"})
    cp, ledger = s.checkpoints, s.ledger
    assert cp is not None and ledger is not None
    cp.open_frame(execution_count=1, cell_id=None, code="cell")
    for n in range(40):
        (ws / f"f{n}.txt").write_text(f"after {n}\n")
    cp.close_frame("ok")

    start = threading.Barrier(5)
    errors: list[BaseException] = []

    def appender(name: str) -> None:
        try:
            start.wait()
            for i in range(150):
                ledger.append(
                    MessageEntry, frame=None, message={"kind": "user", "text": f"{name} {i}"}
                )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def rewinder() -> None:
        try:
            start.wait()
            frame_rewind.rewind(cp, 1)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=appender, args=(f"t{n}",)) for n in range(4)]
    threads.append(threading.Thread(target=rewinder))
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []

    seqs = [e.seq for e in ledger.entries]
    assert seqs == list(range(1, len(seqs) + 1))  # unique and dense, in file order
    assert [e.parent for e in ledger.entries[1:]] == seqs[:-1]
    written = [e.model_dump() for e in ledger.entries]
    assert sum(isinstance(e, MessageEntry) for e in ledger.entries) == 600
    (rewind,) = [
        e for e in ledger.entries if isinstance(e, ProjectionItem) and e.reason == "rewind"
    ]
    assert rewind.frames == [1]
    assert all((ws / f"f{n}.txt").read_text() == f"before {n}\n" for n in range(40))
    s.close()

    assert [e.model_dump() for e in read_entries(ledger.path)] == written
    reopened = ThreadLedger(ledger.path.parent, "conc")
    assert reopened.recovered_tail is None and reopened.damaged == []
    assert [e.model_dump() for e in reopened.entries] == written
    reopened.close()


def test_a_rewind_asked_while_a_frame_closes_waits_for_the_close(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text("v1\n")
    env = {"LOGICIAN_THREAD": "closing", "LOGICIAN_CONFIG_DIR": str(tmp_path / "cfg")}
    runtime = Workspace.open(ws, env)
    cp = runtime.checkpoints
    bracket = runtime.frame(1, None, "cell", stream=_Sink())
    frame = bracket.__enter__()
    (ws / "data.txt").write_text("v2\n")

    closing = threading.Event()
    real_close = cp.close_frame

    def slow_close(outcome):  # type: ignore[no-untyped-def]
        closing.set()
        time.sleep(0.5)  # the post-snapshot of a big workspace
        return real_close(outcome)

    cp.close_frame = slow_close  # type: ignore[method-assign]
    results: list[object] = []

    def sidebar() -> None:
        closing.wait(10)
        try:
            results.append(runtime.rewind("--last"))
        except Exception as exc:  # noqa: BLE001 - the assertion below shows it
            results.append(exc)

    t = threading.Thread(target=sidebar)
    t.start()
    bracket.__exit__(None, None, None)  # the cell ends: its frame closes
    closed = frame.closed
    t.join(30)
    assert closed is not None and closed.frame == 1
    (item,) = results
    assert isinstance(item, ProjectionItem), item
    assert item.frames == [1] and (ws / "data.txt").read_text() == "v1\n"
    assert item.seq > closed.seq  # after the close, never interleaved with it
    runtime.close()


class _Sink:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
