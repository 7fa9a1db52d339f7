"""The runtime phases of the agent's work outside a run, through `AgentSession` as a script
uses it: an on-demand compaction shows `compaction` and a branch merge `branch_summary` while
the summary is made, both reported as events, and the status is back to `idle` after, whether
the summary came or not."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import clean_env, git
from loopback import LoopbackServer, Reply, text_reply

from logician_kernel import AgentError, AgentSession


@pytest.fixture
def session(tmp_path: Path, server: LoopbackServer):
    ws = tmp_path / "project"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    env = clean_env(
        LOGICIAN_CONFIG_DIR=str(tmp_path / "cfg"),
        LOGICIAN_MODEL__PROVIDER="openai",
        LOGICIAN_MODEL__NAME="loop-model",
        LOGICIAN_MODEL__BASE_URL=server.url + "/v1",
        LOGICIAN_MODEL__MAX_RETRIES="0",
        LOGICIAN_COMPACTION__KEEP_RECENT_TURNS="1",
        OPENAI_API_KEY="test-key-not-secret",
    )
    with AgentSession.open(ws, "phases", env=env) as opened:
        yield opened


def _watch(session: AgentSession) -> list[tuple[str, str]]:
    """What a status view sees: each reported event with the phase the status shows then."""
    seen: list[tuple[str, str]] = []
    session.listeners.append(lambda event: seen.append((event.kind, session.state.phase)))
    return seen


def test_an_on_demand_compaction_shows_its_phase_then_idle(session, server):
    server.script(text_reply("One."), text_reply("Two."), text_reply("Earlier: one and two."))
    session.run("first")
    session.run("second")
    seen = _watch(session)
    script_saw: list[str] = []

    done = session.compact("the numbers", on_event=lambda event: script_saw.append(event.kind))

    assert "the summary used" in done.spent  # the model was asked, between the two events
    assert seen == [("compaction_started", "compaction"), ("compaction_finished", "idle")]
    assert script_saw == ["compaction_started", "compaction_finished"]
    assert session.state.phase == "idle" and not session.state.running


def test_a_branch_merge_shows_branch_summary_then_idle(session, server):
    server.script(text_reply("Tried a thing."), text_reply("The branch tried a thing."))
    first = session.run("try something")
    session.rewind(first.frame)
    (branch,) = session.branches()
    seen = _watch(session)

    merged = session.merge_branch(branch.id)

    assert merged.summary == "The branch tried a thing."
    assert seen == [
        ("branch_summary_started", "branch_summary"),
        ("branch_summary_finished", "idle"),
    ]
    assert session.state.phase == "idle"


def test_a_failed_merge_still_ends_idle_and_says_why(session, server):
    server.script(text_reply("Tried a thing."), Reply.error(400, {"error": {"message": "no"}}))
    first = session.run("try something")
    session.rewind(first.frame)
    (branch,) = session.branches()
    events = []
    session.listeners.append(events.append)

    with pytest.raises(AgentError, match="nothing changed"):
        session.merge_branch(branch.id)

    assert [e.kind for e in events] == ["branch_summary_started", "branch_summary_finished"]
    assert events[-1].result == "failed" and "nothing changed" in events[-1].detail
    assert session.state.phase == "idle"
