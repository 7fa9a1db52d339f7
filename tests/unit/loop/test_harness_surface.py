"""The loop and events packages export what we mean, and stay Jupyter-free."""

from __future__ import annotations

import subprocess
import sys

import logician_kernel.events as events
import logician_kernel.loop as loop

LOOP_API = {
    "DEFAULT_SYSTEM_PROMPT",
    "UNANSWERED_CALL",
    "AgentHarness",
    "Hooks",
    "RunStore",
    "drive_run",
    "system_prompt",
}
EVENTS_API = {
    "HARNESS_EVENT_ADAPTER",
    "MAX_PENDING_SHOWN",
    "AssistantTextDelta",
    "HarnessEvent",
    "ModelCallStarted",
    "ModelResponded",
    "Phase",
    "RetryScheduled",
    "RunEnded",
    "RunStarted",
    "RuntimeState",
    "ToolCallStreaming",
    "ToolFinished",
    "ToolStarted",
    "TurnEnded",
    "TurnStarted",
    "fold",
    "AssistantReasoningDelta",
    "context_fraction",
}


def test_exported_names():
    assert set(loop.__all__) == LOOP_API
    assert set(events.__all__) == EVENTS_API
    assert all(hasattr(loop, name) for name in LOOP_API)
    assert all(hasattr(events, name) for name in EVENTS_API)


def test_every_event_kind_is_folded_and_documented():
    from typing import get_args

    from logician_kernel.events.runtime_state import _FOLDS

    members = get_args(get_args(events.HarnessEvent)[0])
    assert {m.model_fields["kind"].default for m in members} == set(_FOLDS)
    for member in members:
        assert member.__doc__
        assert all(field.description for field in member.model_fields.values()), member


def test_importing_the_loop_pulls_in_no_jupyter():
    code = (
        "import sys, logician_kernel.loop, logician_kernel.events, logician_kernel.types.run\n"
        "banned = {'IPython', 'ipykernel', 'ipywidgets', 'comm'} & set(sys.modules)\n"
        "assert not banned, banned\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
