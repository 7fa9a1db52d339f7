"""A frame's close and a rewind's plan are held as they were built, not validated a second time
from their own JSON record: what a replay reads must still equal them exactly, whatever text,
numbers and states they hold, and a kind whose values could read back differently (an `Any`,
a dict, a tuple) must keep being held as read back."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from logician_kernel.ledger.entries import _KINDS, exact_in_json
from logician_kernel.ledger.thread_ledger import (
    FrameClose,
    MessageEntry,
    RestoredPath,
    RewindPlanned,
    RewindStep,
    ThreadLedger,
    ToolIntent,
    read_entries,
)
from logician_kernel.types.path_states import Fingerprint, PathChange, PathState, SkippedPath

LONE = "\udc80\ud800x"
"""Lone surrogates: tool output decoded with `surrogateescape` has them."""

text = st.one_of(st.text(max_size=12), st.just(LONE), st.just('é ✓ \u2028 \x00 \\ "'))
numbers = st.floats(allow_nan=False) | st.integers(-(2**70), 2**70).map(float) | st.just(-0.0)
sizes = st.integers(0, 2**63)
fingerprints = st.builds(Fingerprint, size=sizes, mtime_ns=sizes, mode=st.integers(0, 0o177777))
states = st.one_of(
    st.just(PathState.absent()),
    st.builds(PathState.blob, st.sampled_from(["100644", "100755", "120000"]), text),
    st.builds(PathState.uncaptured, st.sampled_from(["ignored", "unstable"]), fingerprints),
    st.builds(PathState.large, st.just("100644"), st.none() | text, fingerprints).map(
        lambda s: s.model_copy(update={"perms": 0o600})
    ),
)
changes = st.builds(
    PathChange,
    path=text,
    before=states,
    after=states,
    by=st.sampled_from(["cell", "tool", "external", None]),
    basis=text,
    uncertain=text,
)


def test_the_kinds_held_as_built_are_exactly_those_of_plain_typed_values() -> None:
    held = {name for name, kind in _KINDS.items() if exact_in_json(kind)}
    assert {"frame_close", "frame_open", "rewind_plan", "rewind_progress", "variables"} <= held
    # their `Any` values would read back changed (a tuple as a list): held as read back
    assert {"message", "projection", "tool_intent"}.isdisjoint(held)

    class Loose(BaseModel):
        model_config = ConfigDict(frozen=True)
        values: dict[str, Any]

    class Pair(BaseModel):
        model_config = ConfigDict(frozen=True)
        both: tuple[int, int]

    class Mutable(BaseModel):
        name: str

    class Holds(BaseModel):
        model_config = ConfigDict(frozen=True)
        inner: list[Loose] | None = None

    assert not any(exact_in_json(kind) for kind in (Loose, Pair, Mutable, Holds))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.lists(changes, max_size=6),
    skipped=st.lists(
        st.builds(
            SkippedPath,
            path=text,
            reason=st.just("ignored"),
            existed_before=st.booleans(),
            exists_after=st.booleans(),
        ),
        max_size=2,
    ),
    duration=numbers,
    detail=text,
)
def test_what_is_held_as_built_is_what_a_replay_reads(
    tmp_path_factory: Any,
    data: list[PathChange],
    skipped: list[SkippedPath],
    duration: float,
    detail: str,
) -> None:
    directory: Path = tmp_path_factory.mktemp("held")
    ledger = ThreadLedger(directory, "t")
    try:
        close = ledger.append(
            FrameClose,
            frame=1,
            outcome="ok",
            post_tree=detail,
            changes=data,
            skipped=skipped,
            duration_ms=duration,
            capture_error=detail or None,
        )
        assert close.changes is not data and close.changes == data
        plan = ledger.append(
            RewindPlanned,
            frame=1,
            frames=[1],
            steps=[
                RewindStep(path=c.path, target=c.before, current=c.after, perms=0o644) for c in data
            ],
            known=[RestoredPath(path=detail, action="conflict", detail=detail)],
            since_fs=duration,
            fs_time=7,  # an int where a float is asked: held as the float it reads back as
        )
        assert type(plan.fs_time) is float
        ledger.append(MessageEntry, frame=None, message={"role": "user", "content": detail})
        intent = ledger.append(
            ToolIntent,
            frame=1,
            call_id="c1",
            name="write",
            arguments={"pair": (1, 2), "text": detail},
            recovery="restorable",
        )
        assert intent.arguments["pair"] == [1, 2]  # as a replay reads it, not as it was given
        replayed = read_entries(ledger.path)
        assert replayed == ledger.entries
        for live, read in zip(ledger.entries, replayed, strict=True):
            assert live.model_dump(mode="json") == read.model_dump(mode="json")
            # every field counts as given, as in a model read from its record
            assert live.model_dump(exclude_unset=True) == live.model_dump()
        # -0.0 and the infinities keep their sign through the file
        assert math.copysign(1, replayed[0].duration_ms) == math.copysign(1, duration)
    finally:
        ledger.close()
