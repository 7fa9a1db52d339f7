"""`drive_run`: a harness run fed to a synchronous event sink (split out of agent_harness.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

from logician_kernel.events.events import HarnessEvent, RunEnded
from logician_kernel.types.messages import Usage
from logician_kernel.types.run import RunOutcome


async def drive_run(
    events: AsyncGenerator[HarnessEvent, None], sink: Callable[[HarnessEvent], object]
) -> RunOutcome:
    """Feed a run's events to a synchronous `sink` and return its outcome.

    The sink sees exactly one `RunEnded`. On cancellation the run is stopped and closed, the
    sink gets `RunEnded(cancelled)` (the harness's own, or one made here if the run could not
    yield it), and `asyncio.CancelledError` propagates. Because the sink is synchronous, the
    only place a cancellation can land is inside the run, so in practice the harness's own
    event (with its usage and counts) is the one delivered.
    """
    ended: RunEnded | None = None
    try:
        async with aclosing(events) as stream:
            async for event in stream:
                if isinstance(event, RunEnded):
                    ended = event
                sink(event)
    except asyncio.CancelledError:
        if ended is None:
            outcome = RunOutcome(status="cancelled", detail="interrupted by the user")
            sink(RunEnded(outcome=outcome, usage=Usage(), turns=0, tool_calls=0))
        raise
    if ended is None:
        raise RuntimeError("the run ended without a run_ended event")
    return ended.outcome
