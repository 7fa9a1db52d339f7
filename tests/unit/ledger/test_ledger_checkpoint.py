"""Ledger projection checkpoints: a checkpointed open is the full replay, only faster.

Random histories (frames with file changes, messages, tool calls left open or committed,
rewinds, compactions, restarts) are written through a real `ThreadLedger`, checkpointed at
random points, then damaged at random (a torn tail, a flipped byte anywhere, a torn or edited
checkpoint). Opening with the checkpoint must give exactly what opening the same bytes with
no checkpoint gives: the entries, the conversation, the frame stack, the open tool calls, the
branches, the variables' history - and say so when it could not use the checkpoint.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logician_kernel.frames.variable_checkpoints import history
from logician_kernel.ledger import checkpoint as ledger_checkpoint
from logician_kernel.ledger.branches import derive_branches
from logician_kernel.ledger.checkpoint import checkpoint_path
from logician_kernel.ledger.entries import CellRestore
from logician_kernel.ledger.frame_view import derive_frames
from logician_kernel.ledger.run_store import resolve_dangling_calls
from logician_kernel.ledger.thread_ledger import (
    FileCheckpoint,
    FrameClose,
    FrameOpen,
    MessageEntry,
    ProjectionItem,
    Recovery,
    RewindPlanned,
    RewindProgress,
    ThreadLedger,
    ToolCommit,
    ToolIntent,
    ToolOutcome,
    VariableRecord,
    VariablesCaptured,
    project,
)
from logician_kernel.types.path_states import PathChange, PathState

MISSING = PathState(kind="absent")


def _blob(n: int) -> PathState:
    return PathState(kind="blob", sha=f"{n:040x}", mode="100644")


def msg(role: str, text: str) -> dict[str, Any]:
    return {"kind": role, "content": [{"kind": "text", "text": text}]}


class History:
    """Drives a real ledger through random steps; `frame` and `calls` keep ids unique."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.ledger = ThreadLedger(directory, "t")
        self.frame = 0
        self.calls = 0

    def step(self, op: tuple[Any, ...]) -> None:
        getattr(self, op[0])(*op[1:])

    def cell(self, text: str, changes: int) -> None:
        self.frame += 1
        f = self.frame
        self.ledger.append(
            FrameOpen, frame=f, execution_count=f, cell_id=None, code=text, pre_tree=None
        )
        if changes:
            self.ledger.append(FileCheckpoint, frame=f, path="a.txt", before=_blob(f))
        self.ledger.append(MessageEntry, frame=f, message=msg("user", text))
        self.ledger.append(
            FrameClose,
            frame=f,
            outcome="ok",
            post_tree=None,
            durable=True,
            changes=[
                PathChange(path=f"f{i}.txt", before=MISSING, after=_blob(i)) for i in range(changes)
            ],
        )
        self.ledger.append(
            VariablesCaptured,
            frame=f,
            records=[VariableRecord(name="x", action="changed", digest=text)],
        )

    def tool(self, commit: bool, outcome: bool, answered: bool) -> None:
        self.calls += 1
        call_id = f"call_{self.calls}"
        self.ledger.append(
            ToolIntent,
            frame=self.frame or None,
            call_id=call_id,
            name="bash",
            arguments={"command": "ls"},
            recovery="external",
        )
        if outcome:
            self.ledger.append(
                ToolOutcome, frame=None, call_id=call_id, is_error=False, content="ok"
            )
        if answered:
            result = {
                "kind": "tool_result",
                "tool_call_id": call_id,
                "content": [{"kind": "text", "text": "ok"}],
                "is_error": False,
            }
            self.ledger.append(MessageEntry, frame=None, message=result)
        if commit:
            self.ledger.append(ToolCommit, call_id=call_id)

    def project(self, reason: str, keep: int, pop: int) -> None:
        messages = self.ledger.messages()[:keep]
        frames = list(range(max(1, self.frame - pop + 1), self.frame + 1)) if pop else []
        self.ledger.append(ProjectionItem, reason=reason, messages=messages, frames=frames)

    def rewind_plan(self, done: int, finish: bool, undo: int) -> None:
        """A rewind's plan and progress, finished or cut short; then maybe an undo's progress
        (`undo` 1) and its end (`undo` 2): what the `rewinds` fold must follow."""
        plan = self.ledger.append(RewindPlanned, frame=max(self.frame, 1), frames=[])
        for count in range(1, done + 1):
            self.ledger.append(RewindProgress, plan=plan.seq, done=count * 500)
        if not finish:
            return
        item = self.ledger.append(
            ProjectionItem, reason="rewind", messages=self.ledger.messages(), plan=plan.seq
        )
        if undo:
            self.ledger.append(RewindProgress, plan=plan.seq, done=500, undo=True)
        if undo == 2:
            self.ledger.append(ProjectionItem, reason="restore", messages=[], undoes=item.seq)

    def cell_part(self, by: int, state: str) -> None:
        """A rewind's cell part asked for (`pending`) or settled: what the `cells` fold follows."""
        self.ledger.append(CellRestore, by=by, direction="rewind", edits=[], state=state)

    def checkpoint(self) -> None:
        self.ledger.write_checkpoint()

    def reopen(self) -> None:
        self.ledger.close()
        self.ledger = ThreadLedger(self.directory, "t")


steps = st.lists(
    st.one_of(
        st.tuples(st.just("cell"), st.text(max_size=8), st.integers(0, 2)),
        st.tuples(st.just("tool"), st.booleans(), st.booleans(), st.booleans()),
        st.tuples(
            st.just("project"),
            st.sampled_from(["rewind", "compaction", "clear"]),
            st.integers(0, 3),
            st.integers(0, 2),
        ),
        st.tuples(st.just("rewind_plan"), st.integers(0, 2), st.booleans(), st.integers(0, 2)),
        st.tuples(st.just("cell_part"), st.integers(1, 3), st.sampled_from(["pending", "applied"])),
        st.tuples(st.just("checkpoint")),
        st.tuples(st.just("reopen")),
    ),
    min_size=1,
    max_size=40,
)
damage = st.one_of(
    st.tuples(st.just("none")),
    st.tuples(st.just("tear"), st.integers(1, 60)),  # the ledger's last bytes
    st.tuples(st.just("flip"), st.floats(0, 1, exclude_max=True)),  # any byte of the ledger
    st.tuples(st.just("tear-checkpoint"), st.floats(0, 1, exclude_max=True)),
    st.tuples(st.just("flip-checkpoint"), st.floats(0, 1, exclude_max=True)),
)


def _damage(directory: Path, how: tuple[Any, ...]) -> None:
    ledger, cp = directory / "t.jsonl", checkpoint_path(directory / "t.jsonl")
    target = cp if how[0].endswith("checkpoint") else ledger
    if how[0] == "none" or not target.exists() or not target.stat().st_size:
        return
    data = bytearray(target.read_bytes())
    if how[0] == "tear":
        del data[-min(how[1], len(data) - 1) :]
    elif how[0] == "tear-checkpoint":
        del data[int(how[1] * len(data)) :]
    else:
        data[int(how[1] * len(data))] ^= 0x20
    target.write_bytes(bytes(data))


def _normal(entry: Any) -> dict[str, Any]:
    """An entry without what differs between two opens of the same bytes (times, the name
    of a side file stamped with the time of the cut)."""
    dumped = entry.model_dump(mode="json", exclude={"time"})
    if isinstance(entry, Recovery):
        dumped.pop("detail"), dumped.pop("side_file")
    return dumped


def _open_calls_by_replay(entries: list[Any]) -> tuple[Any, ...]:
    """What `resolve_dangling_calls` found by reading every entry, before the fold existed."""
    intents, outcomes, answered, committed = {}, {}, set(), set()
    for entry in entries:
        if isinstance(entry, ToolIntent):
            intents[entry.call_id] = entry
        elif isinstance(entry, ToolOutcome):
            outcomes[entry.call_id] = entry
        elif isinstance(entry, ToolCommit):
            committed.add(entry.call_id)
        elif isinstance(entry, MessageEntry) and entry.message.get("kind") == "tool_result":
            answered.add(entry.message.get("tool_call_id", ""))
    return (
        [k for k in intents if k not in committed],
        [k for k in outcomes if k not in committed],
        answered - committed,
        committed,
    )


def _rewinds_by_replay(entries: list[Any]) -> tuple[Any, ...]:
    """What an interrupted rewind or undo is, read backwards over every entry (as it was read
    before the `rewinds` fold existed)."""
    finished: set[int] = set()
    pending = None
    for entry in reversed(entries):
        if isinstance(entry, ProjectionItem) and entry.plan is not None:
            finished.add(entry.plan)
        elif isinstance(entry, RewindPlanned):
            pending = None if entry.seq in finished else entry
            break
    progress = max(
        (
            e.done
            for e in entries
            if isinstance(e, RewindProgress)
            and not e.undo
            and pending is not None
            and e.plan == pending.seq
        ),
        default=0,
    )
    undone: set[int] = set()
    started: set[int] = set()
    pending_undo = None
    for entry in reversed(entries):
        if isinstance(entry, ProjectionItem) and entry.undoes is not None:
            undone.add(entry.undoes)
        elif isinstance(entry, RewindProgress) and entry.undo:
            started.add(entry.plan)
        elif isinstance(entry, ProjectionItem) and entry.reason == "rewind":
            pending_undo = entry if entry.plan in started and entry.seq not in undone else None
            break
    return pending, progress, pending_undo


def _view(ledger: ThreadLedger) -> dict[str, Any]:
    """Everything a kernel derives from a ledger when it opens it and runs cells."""
    calls = ledger.fold("calls")
    folded_calls = (list(calls.intents), list(calls.outcomes), calls.answered, calls.committed)
    folded_frames = ledger.fold("frames")
    entries = list(ledger.entries)
    # The folds (seeded by a checkpoint or not) say what reading every entry says.
    assert folded_calls == _open_calls_by_replay(entries)
    assert folded_frames == derive_frames(entries)
    assert ledger.messages() == project(entries)
    pending_cells = {e.by: e for e in entries if isinstance(e, CellRestore)}
    assert ledger.fold("cells") == {b: e for b, e in pending_cells.items() if e.state == "pending"}
    rewinds = ledger.fold("rewinds")
    assert (rewinds.pending, rewinds.progress, rewinds.pending_undo) == _rewinds_by_replay(entries)
    return {
        "messages": ledger.messages(),
        "frames": ledger.fold("frames"),
        "calls": (list(calls.intents), list(calls.outcomes), calls.answered, calls.committed),
        "entries": [_normal(e) for e in ledger.entries],
        "project": project(ledger.entries),
        "branches": derive_branches(ledger.entries),
        "variables": history(ledger.entries).records,
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=steps, how=damage)
def test_a_checkpointed_open_equals_the_full_replay(ops: list[tuple[Any, ...]], how: tuple) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "threads"
        history_ = History(directory)
        for op in ops:
            history_.step(op)
        history_.ledger.write_checkpoint()
        history_.ledger.close()
        had_checkpoint = checkpoint_path(directory / "t.jsonl").exists()
        _damage(directory, how)
        pristine = Path(tmp) / "pristine"
        shutil.copytree(directory, pristine)

        with_checkpoint = ThreadLedger(directory, "t")
        if had_checkpoint and how[0] == "none":  # the checkpoint held and was used
            assert with_checkpoint.checkpoint_notice is None
            assert with_checkpoint.journal.resumed is not None
        resolve_dangling_calls(with_checkpoint)  # what a kernel does first: appends to the tail
        got = _view(with_checkpoint)
        notice = with_checkpoint.checkpoint_notice
        with_checkpoint.close()

        shutil.rmtree(directory)
        shutil.copytree(pristine, directory)
        checkpoint_path(directory / "t.jsonl").unlink(missing_ok=True)
        replay = ThreadLedger(directory, "t")
        resolve_dangling_calls(replay)
        want = _view(replay)
        replay.close()

        assert got == want
        if had_checkpoint and how[0] in ("tear-checkpoint", "flip-checkpoint"):
            assert notice is not None and "replaying every record" in notice


@given(
    n=st.integers(0, 6),
    k=st.integers(0, 6),
    i=st.integers(-8, 8),
    a=st.none() | st.integers(-8, 8),
    b=st.none() | st.integers(-8, 8),
    step=st.sampled_from([None, 1, 2, -1]),
)
def test_entries_read_lazily_index_and_slice_like_a_list(n, k, i, a, b, step) -> None:
    items = list(range(n + k))
    lazy = ledger_checkpoint.LedgerEntries(items[n:], prefix_count=n, load_prefix=lambda: items[:n])
    assert lazy[a:b:step] == items[a:b:step]
    if -len(items) <= i < len(items):
        assert lazy[i] == items[i]
    assert len(lazy) == len(items) and list(lazy) == items


def _long_history(directory: Path, cells: int = 30) -> History:
    h = History(directory)
    for n in range(cells):
        h.cell(f"cell {n}", n % 3)
        h.tool(commit=n % 5 != 0, outcome=n % 2 == 0, answered=n % 3 == 0)
    h.ledger.write_checkpoint()
    return h


def test_opening_with_a_checkpoint_reads_only_the_tail(tmp_path: Path) -> None:
    h = _long_history(tmp_path)
    count = len(h.ledger.entries)
    h.ledger.append(MessageEntry, frame=None, message=msg("user", "after the checkpoint"))
    h.ledger.close()
    ledger = ThreadLedger(tmp_path, "t")
    assert ledger.checkpoint_notice is None
    ledger.fold("frames"), ledger.messages(), resolve_dangling_calls(ledger)
    ledger.entries[-1]  # noqa: B018 - the tail is read; the history is not
    assert ledger.entries.pending == count
    assert msg("user", "after the checkpoint") in ledger.messages()
    # Whoever does read history gets all of it, in order.
    assert [e.seq for e in ledger.entries] == list(range(1, len(ledger.entries) + 1))
    assert ledger.entries.pending == 0
    ledger.close()


@pytest.mark.parametrize("cut", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_a_torn_checkpoint_is_set_aside_and_the_ledger_fully_replayed(
    tmp_path: Path, cut: float
) -> None:
    h = _long_history(tmp_path)
    want = _view(h.ledger)
    h.ledger.close()
    cp = checkpoint_path(tmp_path / "t.jsonl")
    data = cp.read_bytes()
    cp.write_bytes(data[: int(cut * len(data))])
    ledger = ThreadLedger(tmp_path, "t")
    assert ledger.checkpoint_notice is not None
    assert "t.jsonl.checkpoint is damaged" in ledger.checkpoint_notice
    assert "replaying every record" in ledger.checkpoint_notice
    assert _view(ledger) == want
    assert cp.with_name(cp.name + ".rejected").read_bytes() == data[: int(cut * len(data))]
    assert ledger.write_checkpoint()  # a fresh one replaces it, and is used next time
    ledger.close()
    again = ThreadLedger(tmp_path, "t")
    assert again.checkpoint_notice is None and again.entries.pending == len(again.entries)
    again.close()


def test_a_checkpoint_killed_while_written_leaves_the_previous_one(tmp_path: Path) -> None:
    """The new checkpoint is written to a temporary file and renamed: a crash before the
    rename leaves the old one in place (and the temporary file is never read)."""
    h = _long_history(tmp_path)
    old = checkpoint_path(tmp_path / "t.jsonl").read_bytes()
    h.cell("one more", 1)
    tmp = checkpoint_path(tmp_path / "t.jsonl").with_name(".t.jsonl.checkpoint.tmp")
    tmp.write_bytes(b'{"format":1,"torn')  # what a kill mid-write leaves
    h.ledger.close()
    assert checkpoint_path(tmp_path / "t.jsonl").read_bytes() == old
    ledger = ThreadLedger(tmp_path, "t")
    assert ledger.checkpoint_notice is None
    assert ledger.messages()[-1] == msg("user", "one more")
    ledger.close()


def test_a_ledger_changed_under_its_checkpoint_is_replayed_and_its_damage_reported(
    tmp_path: Path,
) -> None:
    h = _long_history(tmp_path)
    h.ledger.close()
    path = tmp_path / "t.jsonl"
    data = bytearray(path.read_bytes())
    middle = data.index(b'"cell 7"')
    data[middle + 2] ^= 0x01  # a flipped bit inside a record the checkpoint covers
    path.write_bytes(bytes(data))
    ledger = ThreadLedger(tmp_path, "t")
    assert "does not match the ledger" in (ledger.checkpoint_notice or "")
    assert "changed since it was written" in (ledger.checkpoint_notice or "")
    assert [e.what for e in ledger.damaged] == ["damaged-record"]
    ledger.close()


def test_a_checkpoint_of_another_version_is_dropped_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = _long_history(tmp_path)
    h.ledger.close()
    monkeypatch.setattr(ledger_checkpoint, "__version__", "0.0.0-other")
    ledger = ThreadLedger(tmp_path, "t")
    assert ledger.checkpoint_notice is None and ledger.entries.pending == 0
    ledger.close()


def test_opening_and_closing_write_a_checkpoint_once_the_tail_is_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from logician_kernel.ledger import thread_ledger

    monkeypatch.setattr(thread_ledger, "CHECKPOINT_EVERY", 20)
    h = History(tmp_path)
    for n in range(3):
        h.cell(f"cell {n}", 0)
    h.ledger.close()
    assert not checkpoint_path(tmp_path / "t.jsonl").exists()  # 12 entries: not worth one
    h = History(tmp_path)
    for n in range(5):
        h.cell(f"cell {n}", 0)
    h.ledger.close()  # 32 entries: closing writes one
    ledger = ThreadLedger(tmp_path, "t")
    assert ledger.entries.pending == 32
    ledger.close()


def test_a_checkpoint_whose_checksum_holds_but_whose_folds_do_not_read_is_damaged(
    tmp_path: Path,
) -> None:
    """Written by a buggy or foreign program: a valid record of the wrong shape."""
    from logician_kernel._version import __version__
    from logician_kernel.durable.journal import encode_record

    h = _long_history(tmp_path)
    want = _view(h.ledger)
    h.ledger.close()
    cp = checkpoint_path(tmp_path / "t.jsonl")
    good = ledger_checkpoint.decode_record(cp.read_bytes()[:-1])
    bad = dict(good, folds=dict(good["folds"], frames={"fields": ["frame"], "rows": [[1]]}))
    assert bad["version"] == __version__
    cp.write_bytes(encode_record(bad))
    ledger = ThreadLedger(tmp_path, "t")
    assert "is damaged (frame fields" in (ledger.checkpoint_notice or "")
    assert _view(ledger) == want
    ledger.close()


def test_a_checkpoint_naming_the_wrong_last_record_is_not_used(tmp_path: Path) -> None:
    """Checksums that hold over a prefix the checkpoint misdescribes (a foreign writer)."""
    from logician_kernel.durable.journal import encode_record

    h = _long_history(tmp_path)
    want = _view(h.ledger)
    h.ledger.close()
    cp = checkpoint_path(tmp_path / "t.jsonl")
    good = ledger_checkpoint.decode_record(cp.read_bytes()[:-1])
    cp.write_bytes(encode_record(dict(good, last_seq=good["last_seq"] - 1)))
    ledger = ThreadLedger(tmp_path, "t")
    assert "does not match the ledger" in (ledger.checkpoint_notice or "")
    assert _view(ledger) == want
    ledger.close()
