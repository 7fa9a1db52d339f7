"""The permission audit (the seeds' "permission audit" gate): every decision is appended
durably, routine allows are told apart from action-required decisions, the rule and layer
that decided are kept, only action-required decisions reach the ledger, secrets never land
in the log, and a torn last line costs nothing but itself."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from logician_kernel.config._schema import PermissionSettings
from logician_kernel.policy import (
    AUDIT_FILE,
    ApprovalResolution,
    AuditEntry,
    AuditLog,
    AuditLogError,
    PermissionPolicy,
    PolicyGate,
    format_audit,
)
from logician_kernel.tools import default_tools
from logician_kernel.types import ToolCall

TOOLS = default_tools()
LAYERS = {("allow", "bash(git status*)"): "user", ("deny", "bash(rm -rf*)"): "project"}


def make_gate(tmp_path: Path, answers=(), **settings):
    policy = PermissionPolicy(
        PermissionSettings(**settings),
        workspace=tmp_path,
        layer_of=lambda name, rule: LAYERS.get((name, rule)),
    )
    audit = AuditLog.for_workspace(tmp_path)
    ledger: list = []
    queue = list(answers)

    async def ask(request):
        return ApprovalResolution(call_id=request.call_id, **queue.pop(0))

    gate = PolicyGate(
        policy,
        audit,
        ask=ask if answers else None,
        record=lambda request, resolution: ledger.append((request, resolution)),
        thread="t1",
        frame=3,
        secrets=("hunter2-very-secret",),
    )
    return gate, audit, ledger


def check(gate, call_id, tool, **arguments):
    return asyncio.run(
        gate.check(ToolCall(id=call_id, name=tool, arguments=arguments), TOOLS[tool])
    )


def test_routine_allows_and_action_required_decisions_are_told_apart(tmp_path):
    gate, audit, ledger = make_gate(
        tmp_path,
        answers=[{"choice": "allow_once"}, {"choice": "deny", "note": "not now"}],
        allow=("bash(git status*)",),
        deny=("bash(rm -rf*)",),
    )
    assert check(gate, "c1", "read", path="a.txt").allowed  # read-only: mode default
    assert check(gate, "c2", "bash", command="git status").allowed  # allow rule (user layer)
    denied = check(gate, "c3", "bash", command="rm -rf build")  # deny rule (project layer)
    assert check(gate, "c4", "bash", command="make").allowed  # asked: allowed once
    refused = check(gate, "c5", "write", path="a.txt", content="x")  # asked: denied

    assert not denied.allowed and "rm -rf" in denied.note and denied.outcome is None
    assert not refused.allowed and refused.note == "denied by the user: not now"
    entries = audit.recent(10)
    rows = [
        (e.call_id, e.action, e.allowed, e.routine, e.rule, e.layer, e.resolution) for e in entries
    ]
    assert rows == [
        ("c1", "allow", True, True, None, None, "mode"),
        ("c2", "allow", True, True, "bash(git status*)", "user", "rule"),
        ("c3", "deny", False, False, "bash(rm -rf*)", "project", "rule"),
        ("c4", "ask", True, False, None, None, "user:allow_once"),
        ("c5", "ask", False, False, None, None, "user:deny"),
    ]
    assert all((e.thread, e.frame) == ("t1", 3) for e in entries)
    # Only the action-required decisions become (typed) ledger entries.
    assert [(req.call_id, res.choice) for req, res in ledger] == [
        ("c4", "allow_once"),
        ("c5", "deny"),
    ]
    assert ledger[0][0].kind == "approval_request" and ledger[0][0].suggested_rule == "bash(make)"
    assert "routine" in format_audit(entries) and "bash(rm -rf*)" in format_audit(entries)


@pytest.mark.parametrize("choice", ["allow_session", "always_allow"])
def test_allowing_for_the_session_adds_a_rule_and_later_calls_are_routine(tmp_path, choice):
    gate, audit, ledger = make_gate(tmp_path, answers=[{"choice": choice}])
    assert check(gate, "c1", "bash", command="pytest -q").allowed
    assert check(gate, "c2", "bash", command="pytest  -q").allowed  # no second ask
    first, second = audit.recent(2)
    assert (first.resolution, first.routine) == (f"user:{choice}", False)
    assert (second.resolution, second.routine, second.rule, second.layer) == (
        "session",
        True,
        "bash(pytest -q)",
        "session",
    )
    assert ledger[0][1].rule == "bash(pytest -q)" and len(ledger) == 1


def test_headless_asks_are_denied_and_audited(tmp_path):
    gate, audit, ledger = make_gate(tmp_path)
    result = check(gate, "c1", "bash", command="make")
    assert not result.allowed and "nobody can be asked" in result.note
    assert audit.recent(1)[0].resolution == "headless:deny"
    assert ledger[0][1].by == "headless"


def test_deny_and_stop_stops_the_run(tmp_path):
    gate, _, _ = make_gate(tmp_path, answers=[{"choice": "deny_and_stop"}])
    result = check(gate, "c1", "bash", command="make")
    assert not result.allowed and result.outcome is not None
    assert result.outcome.status == "denied" and "make" in result.outcome.detail


def test_secrets_never_land_in_the_audit_log(tmp_path):
    gate, audit, ledger = make_gate(tmp_path, answers=[{"choice": "allow_once"}])
    check(gate, "c1", "bash", command="curl -H 'Authorization: Bearer abcdefghijklmnop' x")
    check(gate, "c2", "read", path="hunter2-very-secret.txt")
    check(gate, "c3", "grep", pattern="sk-abcdefghijklmnopqrstuvwx", path=".")
    text = (tmp_path / AUDIT_FILE).read_text()
    for secret in ("abcdefghijklmnop", "hunter2-very-secret", "sk-abcdefghijklmnopqrstuvwx"):
        assert secret not in text
    assert "****" in text
    assert "abcdefghijklmnop" not in ledger[0][0].model_dump_json()


def test_long_arguments_are_cut_and_credential_names_masked(tmp_path):
    gate, audit, _ = make_gate(tmp_path, mode="full-auto")
    check(gate, "c1", "bash", command="echo " + "x" * 50_000)
    entry = audit.recent(1)[0]
    assert (
        len(entry.arguments["command"]) < 2_100 and "more characters" in entry.arguments["command"]
    )
    from logician_kernel.policy import mask_arguments

    assert mask_arguments({"api_key": "abc", "nested": {"token": "t"}}) == {
        "api_key": "****",
        "nested": {"token": "****"},
    }


def _entry(call_id: str) -> AuditEntry:
    return AuditEntry(
        time="2025-01-01T00:00:00+00:00",
        tool="read",
        action="allow",
        allowed=True,
        routine=True,
        call_id=call_id,
    )


def test_each_record_is_one_fsynced_line(tmp_path, monkeypatch):
    log = AuditLog(tmp_path / "deep" / "dir" / "audit.jsonl")
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    log.record(_entry("c1"))
    log.record(_entry("c2"))
    lines = log.path.read_text().splitlines()
    assert [json.loads(line)["call_id"] for line in lines] == ["c1", "c2"]
    assert len(synced) >= 2  # the file every time (and its directory when created)


def test_a_torn_last_line_is_skipped_and_the_next_entry_stays_whole(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    for i in range(30):
        log.record(_entry(f"c{i}"))
    with log.path.open("ab") as fh:
        fh.write(b'{"time": "2025-01-01", "tool": "re')  # a crash mid-append
    assert [e.call_id for e in log.recent(3)] == ["c27", "c28", "c29"]
    log.record(_entry("after"))
    assert [e.call_id for e in log.recent(2)] == ["c29", "after"]
    assert len(log.recent(100)) == 31
    assert AuditLog(tmp_path / "missing.jsonl").recent(5) == []


def test_a_failed_write_names_the_file(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    log = AuditLog(blocker / "audit.jsonl")
    with pytest.raises(AuditLogError, match=r"not-a-dir/audit\.jsonl"):
        log.record(_entry("c1"))


def test_a_cell_edit_that_runs_its_cell_is_decided_as_running_code(tmp_path):
    gate, audit, ledger = make_gate(
        tmp_path, answers=[{"choice": "allow_session"}], mode="auto-edit"
    )
    edit = {"mode": "insert", "source": "print(42)"}
    assert check(gate, "c1", "notebook_edit", **edit).allowed  # auto-edit allows cell edits
    assert check(gate, "c2", "notebook_edit", **edit, run=True).allowed  # asked, for the session
    assert check(gate, "c3", "notebook_edit", **edit, run=True).allowed  # the session rule
    assert [(e.call_id, e.action, e.resolution) for e in audit.recent(3)] == [
        ("c1", "allow", "mode"),
        ("c2", "ask", "user:allow_session"),
        ("c3", "allow", "session"),
    ]
    assert ledger[0][0].suggested_rule == "notebook_run(print(42))"  # the exact code, as python
    assert "`notebook_run`" in ledger[0][0].reason  # the card says why it asks
    read_only, _, _ = make_gate(tmp_path, mode="read-only")
    assert not check(read_only, "c4", "notebook_edit", **edit, run=True).allowed
    # code naming the kernel's own state asks even in full-auto, as a python call would
    state = {"mode": "insert", "source": "open('.logician/x').read()", "run": True}
    full, _, _ = make_gate(tmp_path, mode="full-auto")
    assert not check(full, "c5", "notebook_edit", **state).allowed  # asked; nobody to answer
    assert check(full, "c6", "notebook_edit", **{**state, "run": False}).allowed
