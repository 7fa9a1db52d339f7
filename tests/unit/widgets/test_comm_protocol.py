"""The `logician` comm's answers, without a kernel: id echo, validation, status pushes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

import logician_kernel.jupyter as jupyter_pkg
from logician_kernel.agent.approvals import ApprovalBroker, ApprovalRequest
from logician_kernel.jupyter.comm import STATUS_PUSH_HZ, LogicianComms

SCHEMA = json.loads((Path(jupyter_pkg.__file__).parent / "comm_schema.json").read_text())
KERNEL_SIDE = jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA["kernel"]})
FRONTEND_SIDE = jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA["frontend"]})

STATUS = {
    "thread": "t",
    "phase": "idle",
    "model": "m",
    "frames": 0,
    "input_tokens": 0,
    "output_tokens": 0,
}


class FakeComm:
    comm_id = "c1"

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def comms(clock: Clock | None = None) -> tuple[LogicianComms, FakeComm]:
    c = LogicianComms(ApprovalBroker(), lambda: dict(STATUS), clock=clock or Clock())
    fake = FakeComm()
    c._comms[fake.comm_id] = fake  # type: ignore[assignment]
    return c, fake


def test_answers_echo_the_request_id_and_follow_the_schema() -> None:
    c, _ = comms()
    for request in (
        {"v": 1, "type": "status", "id": "a"},
        {"v": 1, "type": "approvals.list", "id": 3},
        {"v": 1, "type": "frames.list", "id": "f", "limit": 5},
        {"v": 1, "type": "nope", "id": "x"},
        {"v": 2, "type": "status", "id": "y"},
    ):
        answer = c.reply(request)
        assert answer["re"] == request["id"]
        assert not list(KERNEL_SIDE.iter_errors(answer)), answer
    assert "re" not in c.reply({"v": 1, "type": "status", "id": True})  # not an id


def test_bad_requests_name_what_is_wrong() -> None:
    c, _ = comms()
    assert "JSON object" in c.reply([1, 2])["error"]
    assert "this kernel speaks v1" in c.reply({"v": "1", "type": "status"})["error"]
    assert "known: " in c.reply({"v": 1, "type": "frames.delete"})["error"]
    assert "no frames" in c.reply({"v": 1, "type": "frames.rewind", "frame": 1})["error"]
    assert "limit" in c.reply({"v": 1, "type": "frames.list", "limit": 0})["error"]


def test_status_pushes_are_throttled_but_forced_ones_go_out() -> None:
    clock = Clock()
    c, fake = comms(clock)
    for _ in range(50):  # a burst of events within one throttle window
        c.push_status()
    assert len(fake.sent) == 1
    clock.now += 1.0 / STATUS_PUSH_HZ
    c.push_status()
    assert len(fake.sent) == 2
    c.push_status(force=True)  # a run starting or ending is always told
    assert len(fake.sent) == 3
    assert all(m["type"] == "status" and m["phase"] == "idle" for m in fake.sent)


def test_an_approval_request_pushes_the_new_pending_count() -> None:
    c, fake = comms()
    pending = c.broker.open(
        ApprovalRequest(
            call_id="c1",
            tool="bash",
            description="ls",
            arguments={"command": "ls"},
            reason="commands ask",
            suggested_rule=None,
            mode="default",
        )
    )
    kinds = [m["type"] for m in fake.sent]
    assert kinds == ["approval.requested", "status"]
    assert fake.sent[0]["request_id"] == pending.id and "arguments" not in fake.sent[0]
    assert not list(KERNEL_SIDE.iter_errors(fake.sent[0]))
    c.broker.resolve(pending.id, "deny", via="comm")
    assert [m["type"] for m in fake.sent][2:] == ["approval.resolved", "status"]
    assert fake.sent[2] == {
        "v": 1,
        "type": "approval.resolved",
        "request_id": pending.id,
        "choice": "deny",
        "note": "",
        "via": "comm",
    }


def test_the_schema_describes_what_the_extension_sends() -> None:
    for request in (
        {"v": 1, "id": "r1", "type": "frames.list", "offset": 0, "limit": 100},
        {"v": 1, "id": "r2", "type": "frames.preview", "cell_id": "abc"},
        {"v": 1, "id": "r3", "type": "frames.rewind", "frame": 3, "mode": "files", "force": False},
        {"v": 1, "id": "r4", "type": "approval.decide", "request_id": "x", "choice": "deny"},
    ):
        assert not list(FRONTEND_SIDE.iter_errors(request)), request
    bad = {"v": 1, "type": "frames.rewind", "frame": 3, "cell_id": "both"}
    assert list(FRONTEND_SIDE.iter_errors(bad))


def test_a_frame_row_may_name_its_evicted_large_files() -> None:
    row = {
        "frame": 2,
        "execution_count": 2,
        "cell_id": None,
        "code": "x",
        "time": "t",
        "outcome": "completed",
        "status": "active",
        "files": 1,
        "input_tokens": 0,
        "output_tokens": 0,
    }
    page = {"v": 1, "type": "frames", "total": 1, "offset": 0}
    assert not list(KERNEL_SIDE.iter_errors({**page, "rows": [row]}))
    assert not list(KERNEL_SIDE.iter_errors({**page, "rows": [{**row, "evicted": ["f.bin"]}]}))
    assert list(KERNEL_SIDE.iter_errors({**page, "rows": [{**row, "evicted": "f.bin"}]}))


def test_the_kernel_accepts_every_rewind_mode_the_schema_offers() -> None:
    """The sidebar may send any mode the schema lists (`variables` included); the kernel's check
    must not refuse one of them (it once had its own, shorter list)."""
    from logician_kernel.jupyter.widgets import REWIND_MODES

    rewind = next(
        b
        for b in SCHEMA["frontend"]["oneOf"]
        if b["properties"]["type"].get("const") == "frames.rewind"
    )
    assert set(REWIND_MODES) == set(rewind["properties"]["mode"]["enum"])
