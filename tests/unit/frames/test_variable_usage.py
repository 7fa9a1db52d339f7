"""Which stored variable values the disk budget may evict, and in which order: the oldest frames'
earlier values first, never a current value, a recent frame's, or another thread's."""

from __future__ import annotations

import os
from pathlib import Path

from logician_kernel.durable.blob_key import BlobKey
from logician_kernel.frames import variable_usage
from logician_kernel.frames.variable_store import VariableStore, pickle_group
from logician_kernel.ledger.thread_ledger import VariableRecord, VariablesCaptured


def entry(seq: int, frame: int, *records: tuple[str, str, str]) -> VariablesCaptured:
    return VariablesCaptured(
        seq=seq,
        parent=seq - 1 or None,
        time="2026-12-03T00:00:00Z",
        frame=frame,
        records=[VariableRecord(name=n, action=a, blob=b) for n, a, b in records],  # type: ignore[arg-type]
    )


def stored(store: VariableStore, value: object) -> str:
    pickled = pickle_group({"v": value})
    store.write(pickled)
    return pickled.digest


def test_the_oldest_frames_earlier_values_go_first_and_current_or_recent_ones_never(
    tmp_path: Path,
) -> None:
    store = VariableStore(tmp_path / "variables", BlobKey.in_dir(tmp_path / "cfg"))
    v1, v2, v3, w1 = (stored(store, os.urandom(100 + i)) for i in range(4))
    foreign = stored(store, "another thread's value")
    entries = [
        entry(1, 1, ("v", "created", v1)),
        entry(2, 2, ("v", "changed", v2)),  # a rewind of frame 2 needs v1
        entry(3, 3, ("w", "created", w1)),
        entry(4, 4, ("v", "changed", v3)),  # a rewind of frame 4 needs v2
    ]
    folded = variable_usage.needs(entries)
    assert folded.pre_images == {2: {"v": v1}, 4: {"v": v2}}
    assert folded.current == {v3, w1}

    order = variable_usage.candidates(folded, [1, 2, 3, 4], 1, store)
    assert [(c.digest, c.frames, c.names) for c in order] == [(v1, [2], ["v"])]
    order = variable_usage.candidates(folded, [1, 2, 3, 4], 0, store)
    assert [c.digest for c in order] == [v1, v2]  # oldest need first; v3, w1 are current
    assert foreign not in {c.digest for c in order}  # not this thread's to evict

    store.remove(v1, why="budget", frames=[2], names=["v"])
    sizes = {d: size for d, size, _ in store.blobs()}
    rows = variable_usage.by_frame(folded, sizes)
    assert rows[2].evicted == ["v"] and rows[4].evicted == []
    assert variable_usage.evicted_names(folded, sizes) == {2: ["v"]}
    assert store.load(v1).startswith("stored value was evicted")  # type: ignore[union-attr]


def test_a_value_two_frames_store_is_counted_once_at_the_first(tmp_path: Path) -> None:
    store = VariableStore(tmp_path / "variables", BlobKey.in_dir(tmp_path / "cfg"))
    five, six = stored(store, 5), stored(store, 6)
    entries = [
        entry(1, 1, ("x", "created", five)),
        entry(2, 2, ("x", "changed", six)),
        entry(3, 3, ("x", "changed", five)),
    ]
    sizes = {d: size for d, size, _ in store.blobs()}
    rows = variable_usage.by_frame(variable_usage.needs(entries), sizes)
    assert rows[1].stored_bytes == sizes[five] and rows[1].shared == 0
    assert rows[3].stored_bytes == 0 and rows[3].shared == 1


def test_the_stores_byte_count_follows_writes_and_removals_without_listing_again(
    tmp_path: Path,
) -> None:
    store = VariableStore(tmp_path / "variables", BlobKey.in_dir(tmp_path / "cfg"))
    assert store.total_bytes() == 0
    a, b = stored(store, os.urandom(5000)), stored(store, os.urandom(7000))
    on_disk = {d: size for d, size, _ in store.blobs()}
    assert store.total_bytes() == on_disk[a] + on_disk[b]
    store.remove(a, why="gc", frames=[], names=[])
    assert store.total_bytes() == on_disk[b]
    other = VariableStore(tmp_path / "variables", BlobKey.in_dir(tmp_path / "cfg"))
    c = stored(other, os.urandom(3000))  # another kernel on the same store
    assert store.recount() == on_disk[b] + other._path(c).stat().st_size
