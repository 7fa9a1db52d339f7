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
    "HarnessDeps",
    "Hooks",
    "NO_AUDIT",
    "ToolCallAudit",
    "RunStore",
    "drive_run",
    "system_prompt",
}
EVENTS_API = {
    "HARNESS_EVENT_ADAPTER",
    "MAX_PENDING_SHOWN",
    "BranchSummaryFinished",
    "BranchSummaryStarted",
    "CompactionFinished",
    "CompactionStarted",
    "HarnessEvent",
    "ModelCallStarted",
    "ModelResponded",
    "ModelStreamed",
    "Phase",
    "RunEnded",
    "RunStarted",
    "RuntimeState",
    "ToolFinished",
    "ToolStarted",
    "TurnEnded",
    "TurnStarted",
    "fold",
    "context_fraction",
}


def test_exported_names():
    assert set(loop.__all__) == LOOP_API
    assert set(events.__all__) == EVENTS_API
    assert all(hasattr(loop, name) for name in LOOP_API)
    assert all(hasattr(events, name) for name in EVENTS_API)


def test_every_event_kind_is_folded_and_documented():
    from typing import get_args

    from logician_kernel.events.runtime_state import _FOLDS, _STREAM_FOLDS
    from logician_kernel.types import StreamEvent

    members = get_args(get_args(events.HarnessEvent)[0])
    assert {m.model_fields["kind"].default for m in members} == set(_FOLDS)
    streamed = get_args(get_args(StreamEvent)[0])
    assert {m.model_fields["kind"].default for m in streamed} == set(_STREAM_FOLDS)
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


def test_the_loop_and_events_reach_nothing_of_the_durable_layer_but_durable():
    """The write audit and everything else of snapshots/ frames/ are handed in (`HarnessDeps`),
    never imported: the harness runs the same with or without frames."""
    import ast
    from pathlib import Path

    banned = ("snapshots", "frames", "ledger", "workspace", "jupyter", "agent")
    found = []
    for package in (loop, events):
        for path in Path(package.__file__).parent.glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module:
                    name = node.module
                    if node.level == 0 and not name.startswith("logician_kernel."):
                        continue
                    top = name.split(".")[1] if node.level == 0 else name.split(".")[0]
                    if node.level in (0, 2) and top in banned:
                        found.append(f"{path.name}: {name}")
    assert found == []
