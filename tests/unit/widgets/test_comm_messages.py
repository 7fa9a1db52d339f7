"""The comm's messages declared once: every type round-trips, a malformed request is refused
naming its field (and changes nothing), and `comm_schema.json` is what the models generate."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from logician_kernel.agent.approvals import ApprovalBroker, ApprovalRequest
from logician_kernel.jupyter import comm_messages as m
from logician_kernel.jupyter import comm_schema
from logician_kernel.jupyter.comm import LogicianComms, explain, outgoing
from logician_kernel.workspace import NoticeBoard

SCHEMA = json.loads(comm_schema.SCHEMA_FILE.read_text())
KERNEL_SIDE = jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA["kernel"]})
FRONTEND_SIDE = jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA["frontend"]})

PROMPT = {
    "request_id": "r1",
    "call_id": "c1",
    "tool": "bash",
    "description": "rm -rf build",
    "reason": "commands ask",
    "suggested_rule": None,
    "preview_kind": "command",
    "preview": "rm -rf build",
}
STATUS = {
    "thread": "t1",
    "phase": "turn",
    "model": "m",
    "frames": 2,
    "running_cell": True,
    "input_tokens": 10,
    "output_tokens": 3,
    "cost_usd": None,
    "budget": {"max_turns": 8, "max_cost_usd": 0.5},
    "mcp": [{"name": "fs", "state": "ready", "tools": 3, "stale": False, "error": None}],
}
ROW = {
    "frame": 3,
    "execution_count": 7,
    "cell_id": None,
    "code": "x = 1",
    "time": "2026-12-03T12:00:00+00:00",
    "outcome": "completed",
    "status": "rewound",
    "rewound_at": "2026-12-03T12:01:00+00:00",
    "rewound_by": 12,
    "files": 1,
    "skipped": 0,
    "evicted": ["big.bin"],
    "input_tokens": 0,
    "output_tokens": 0,
}

NOTICE = {
    "id": 3,
    "text": "Logician: frame 2: 1 variable(s) not captured",
    "time": "2026-12-03T12:00:00+00:00",
    "frame": 2,
    "execution_count": 4,
    "cell_id": "c",
    "critical": False,
    "read": False,
}

REQUESTS: dict[str, dict[str, Any]] = {
    "approvals.list": {"id": 1},
    "approval.decide": {"id": "a", "request_id": "r1", "choice": "deny", "note": "no"},
    "status": {},
    "frames.list": {"offset": 5, "limit": 50},
    "frames.preview": {"cell_id": "cell-a", "force": True},
    "frames.preview.page": {"frame": 2, "group": "data/parts/", "offset": 200, "limit": 100},
    "frames.files": {"frame": 2, "offset": 0, "limit": 50},
    "frames.diff": {"frame": 2, "path": "data/sales.csv", "page": 2, "preview": True},
    "frames.rewind": {
        "frame": 2,
        "mode": "files",
        "include_external": True,
        "keep_uncertain": True,
    },
    "frames.undo": {"force": False},
    "frames.resume": {"id": 9},
    "frames.calls": {"frame": 2},
    "frames.rewind_call": {"call_id": "b1", "force": False},
    "document.saved": {"path": "a.txt", "time": "2026-12-03T12:00:00Z", "notebook": "n.ipynb"},
    "notices.list": {"id": "n"},
    "notices.read": {"up_to": 3},
    "notebook.attach": {"path": "n.ipynb"},
    "notebook.reply": {
        "request": "q1",
        "path": "n.ipynb",
        "before": None,
        "after": {"id": "c9", "index": 2, "cell_type": "markdown", "source": "# Hi"},
    },
    "models.list": {"id": "m"},
    "model.use": {"model": "qwen3-coder"},
    "model.default": {"model": "qwen3-coder"},
    "model.connect": {
        "provider": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "api_key": "sk-example-0000",
        "name": "local",
    },
    "config.show": {},
    "config.set": {"key": "budget.max_turns", "value": "12", "persist": "user"},
}
ANSWERS: dict[str, dict[str, Any]] = {
    "hello": {"pending": [PROMPT], "status": {**STATUS, "unread_notices": 1}, "notices": [NOTICE]},
    "error": {"error": "nope", "re": 4},
    "approvals": {"pending": [PROMPT], "re": "a1"},
    "approval.decided": {"ok": True, "request_id": "r1", "re": 2},
    "status": {**STATUS, "re": 3},
    "frames": {"rows": [ROW], "total": 1, "offset": 0},
    "frames.preview": {
        "frame": 2,
        "frames": [2, 3],
        "files": [{"path": "a.txt", "action": "delete"}],
        "skipped": [],
        "conflicts": [{"path": "b.txt", "detail": "changed since"}],
        "external": [],
        "messages_dropped": 1,
        "variables": [{"name": "x", "action": "restore", "detail": ""}],
        "files_total": 1,
        "groups": [{"directory": "", "below": False, "delete": 1, "restore": 0, "recreate": 0}],
        "cells": [{"frame": 2, "execution_count": 4}, {"frame": 3, "execution_count": None}],
        "conflicts_total": 1,
    },
    "frames.files": {
        "frame": 2,
        "rows": [
            {
                "path": "fig.png",
                "action": "modify",
                "kind": "image",
                "before_size": 10,
                "after_size": 12,
            }
        ],
        "total": 1,
        "offset": 0,
    },
    "frames.diff": {
        "frame": 2,
        "path": "a.csv",
        "kind": "csv",
        "preview": False,
        "page": 1,
        "pages": 1,
        "before": {"state": "absent", "size": None, "sha256": None, "pages": 0},
        "after": {
            "state": "file",
            "size": 4,
            "sha256": "ab" * 32,
            "pages": 1,
            "page": 1,
            "first_line": 1,
            "text": "a,b\n",
        },
    },
    "frames.preview.page": {
        "frame": 2,
        "group": "data/parts/",
        "rows": [{"path": "data/parts/p1.csv", "action": "delete"}],
        "total": 20_000,
        "offset": 200,
    },
    "frames.rewind": {
        "ok": True,
        "frame": 2,
        "frames": [2],
        "conflicts": [],
        "external": [],
        "summary": "Rewound",
    },
    "document.saved": {"path": None, "recorded": False},
    "frames.undo": {"ok": True, "frames": [2], "undoes": 14, "conflicts": [], "summary": "Undid"},
    "frames.resume": {"ok": True, "frames": [2], "conflicts": [], "summary": "Resumed"},
    "frames.calls": {
        "frame": 2,
        "calls": [
            {
                "id": "b1",
                "tool": "bash",
                "words": "make",
                "files": ["out.txt"],
                "undoable": True,
                "why_not": "",
                "rewound": False,
            }
        ],
    },
    "frames.rewind_call": {
        "ok": True,
        "call_id": "b1",
        "frame": 2,
        "restored": ["out.txt"],
        "left": [{"path": "log.txt", "detail": "changed since frame 2 recorded it"}],
        "summary": "Rewound call b1",
        "headline": "Rewound call b1: 1 file(s) put back, 1 left alone",
    },
    "notices": {"rows": [NOTICE], "unread": 1, "re": "n"},
    "notices.read": {"unread": 0, "re": 5},
    "notice": {"notice": NOTICE, "unread": 1},
    "models": {
        "current": "gpt-4.1",
        "provider": "openai",
        "profiles": [{"name": "cheap", "model": "gpt-4.1-mini"}],
        "served": ["qwen3-coder", "llama3"],
        "served_error": None,
    },
    "model.use": {"model": "qwen3-coder", "said": "model.name = ..."},
    "model.default": {
        "model": "qwen3-coder",
        "said": "Saved model.name = ... in /home/u/.config/logician/config.toml (user config).",
        "file": "/home/u/.config/logician/config.toml",
    },
    "model.connect": {
        "ok": True,
        "profile": "local",
        "provider": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "model": "qwen3-coder",
        "models": ["qwen3-coder"],
        "key": "sk-…0000",
        "key_file": "/home/u/.config/logician/credentials.json",
        "config_file": "/home/u/.config/logician/config.toml",
        "said": "Saved profiles.local.model = ...",
    },
    "config": {
        "workspace": "/w",
        "trusted": False,
        "layers": [{"name": "user", "source": "/u/config.toml", "status": "applied"}],
        "notices": [],
        "dropped": [],
        "held_back": [],
        "model_refusal": None,
        "api_key": "api key: $OPENAI_API_KEY is NOT set",
        "rows": [
            {
                "key": "budget.max_turns",
                "value": 12,
                "text": "12",
                "layer": "user",
                "where": "/u/config.toml, line 2",
                "restart_required": False,
            }
        ],
    },
    "config.set": {"ok": False, "key": "budget.max_turns", "error": "budget.max_turns: ..."},
    "frames.undone": {"frames": [2], "cell_ids": ["c"], "at": "t", "by": 15, "undoes": 14},
    "frames.changed": {"total": 9},
    "frames.rewound": {"frames": [2], "cell_ids": [], "at": "t", "by": 12},
    "progress": {"operation": "rewind", "done": 12_400, "total": 20_000, "finished": False},
    "approval.requested": PROMPT,
    "approval.resolved": {"request_id": "r1", "choice": "deny", "note": "", "via": "comm"},
    "notebook.attached": {"pending": 0, "re": 6},
    "notebook.received": {"known": True},
    "notebook.request": {"request": "q1", "op": "cell", "args": {"cell_id": "c9"}},
}


def test_the_committed_schema_is_the_generated_one() -> None:
    assert comm_schema.SCHEMA_FILE.read_text() == comm_schema.schema_text(), (
        "logician_kernel/jupyter/comm_schema.json is stale: "
        "python -m logician_kernel.jupyter.comm_schema --write"
    )
    assert comm_schema.main(["--check"]) == 0


def test_the_examples_cover_every_message_type() -> None:
    assert set(REQUESTS) == set(m.FRONTEND_TYPES)
    assert set(ANSWERS) == set(m.KERNEL_TYPES)
    assert [b["properties"]["type"]["const"] for b in SCHEMA["kernel"]["oneOf"]] == list(
        m.KERNEL_TYPES
    )


@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_every_request_type_round_trips(kind: str) -> None:
    wire = {"v": 1, "type": kind, **REQUESTS[kind]}
    message = m.FRONTEND.validate_python(wire)
    assert message.type == kind
    assert message.model_dump(mode="json", exclude_unset=True) == wire
    assert not list(FRONTEND_SIDE.iter_errors(wire))


@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_every_kernel_message_type_round_trips(kind: str) -> None:
    sent = outgoing(kind, ANSWERS[kind])
    assert sent == {"v": 1, "type": kind, **ANSWERS[kind]}
    assert not list(KERNEL_SIDE.iter_errors(sent)), sent
    assert m.KERNEL.validate_python(sent).type == kind


def test_a_malformed_kernel_message_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError) as bad:
        outgoing("frames", {"rows": [{**ROW, "status": "gone"}], "total": 1, "offset": 0})
    assert "rows.0.status must be one of 'open', 'active' or 'rewound'" in explain(bad.value)


class Frames:
    """A frame source that records what it was asked to do."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def page(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        self.calls.append(("page", offset, limit))
        return [], 0

    def preview_target(self, frame: Any, cell_id: Any, **flags: bool) -> dict[str, Any]:
        self.calls.append(("preview", frame, cell_id, flags))
        return {k: v for k, v in ANSWERS["frames.preview"].items()}

    def preview_page(self, frame: Any, cell_id: Any, group: str, *args: Any, **kw: bool) -> Any:
        self.calls.append(("preview_page", frame, cell_id, group, args, kw))
        return {k: v for k, v in ANSWERS["frames.preview.page"].items()}

    def rewind_target(self, frame: Any, cell_id: Any, mode: str, force: bool, **kw: bool) -> Any:
        self.calls.append(("rewind", frame, cell_id, mode, force, kw))
        return dict(ANSWERS["frames.rewind"])

    def note_save(self, *args: Any) -> dict[str, Any]:
        self.calls.append(("save", *args))
        return {"path": "a.txt", "recorded": True}

    def frame_files(self, frame: int, offset: int, limit: int) -> dict[str, Any]:
        return {k: v for k, v in ANSWERS["frames.files"].items()}

    def frame_diff(self, frame: int, path: str, page: int, *, preview: bool) -> dict[str, Any]:
        return {k: v for k, v in ANSWERS["frames.diff"].items()}

    def undo_target(self, force: bool) -> dict[str, Any]:
        self.calls.append(("undo", force))
        return dict(ANSWERS["frames.undo"])

    def resume_target(self, force: bool) -> dict[str, Any]:
        self.calls.append(("resume", force))
        return dict(ANSWERS["frames.resume"])

    def frame_calls(self, frame: int) -> dict[str, Any]:
        self.calls.append(("calls", frame))
        return dict(ANSWERS["frames.calls"])

    def rewind_call(self, call_id: str, force: bool) -> dict[str, Any]:
        self.calls.append(("rewind_call", call_id, force))
        return dict(ANSWERS["frames.rewind_call"])


class Notebook:
    """The notebook protocol's kernel side, as far as the comm calls it."""

    def attach(self, comm_id: str, path: str | None) -> int:
        return 0

    def received(self, reply: Any) -> bool:
        return reply.request == "q1"

    def detach(self, comm_id: str) -> None:
        pass


class Models:
    """A model source that answers from the examples."""

    def choices(self) -> dict[str, Any]:
        return {k: v for k, v in ANSWERS["models"].items()}

    def use(self, name: str) -> dict[str, Any]:
        return {"model": name, "said": f"model.name = {name!r}"}

    def make_default(self, name: str) -> dict[str, Any]:
        return {k: v for k, v in ANSWERS["model.default"].items()}

    def connect(self, form: Any) -> dict[str, Any]:
        assert "sk-example" not in repr(form)  # the form never prints its key
        return {k: v for k, v in ANSWERS["model.connect"].items()}


class Config:
    """A configuration source that answers from the examples."""

    def show(self) -> dict[str, Any]:
        return {k: v for k, v in ANSWERS["config"].items()}

    def set(self, key: str, value: str, persist: str) -> dict[str, Any]:
        return {"ok": True, "key": key, "said": f"{key} = {value} ({persist})"}


def comms() -> tuple[LogicianComms, Frames]:
    frames = Frames()
    status = {k: v for k, v in STATUS.items()}
    c = LogicianComms(ApprovalBroker(), lambda: dict(status), frames)
    c.notebook = Notebook()  # type: ignore[assignment]
    c.notices = NoticeBoard(lambda: "sidebar")
    c.models = Models()
    c.config = Config()
    c.notices.say("Logician: frame 1: 1 variable(s) not captured")
    return c, frames


def test_every_request_type_has_its_handler_and_a_schema_valid_answer() -> None:
    c, frames = comms()
    assert set(c._handlers) == set(m.FRONTEND_TYPES)
    for kind, fields in REQUESTS.items():
        answer = c.reply({"v": 1, "type": kind, **fields, "id": kind}, sender="comm-1")
        assert answer["type"] != "error", answer
        assert answer["re"] == kind
        assert not list(KERNEL_SIDE.iter_errors(answer)), answer
    kw = {"include_external": True, "keep_uncertain": True}
    assert ("rewind", 2, None, "files", False, kw) in frames.calls


@pytest.mark.parametrize(
    ("kind", "fields", "named"),
    [
        ("frames.rewind", {"frame": 2, "mode": "sideways"}, "mode must be one of"),
        ("frames.rewind", {"frame": "2"}, "frame must be an integer, not '2'"),
        ("frames.rewind", {"frame": 0}, "frame must be >= 1, not 0"),
        ("frames.rewind", {"frame": 2, "force": "yes"}, "force must be true or false"),
        ("frames.rewind", {"frame": 2, "forse": True}, "forse is not a field"),
        ("frames.rewind", {"frame": 2, "cell_id": "c"}, "exactly one of frame"),
        ("frames.rewind", {}, "exactly one of frame"),
        ("frames.preview", {"cell_id": ""}, "cell_id must be a non-empty string"),
        ("frames.undo", {"force": 1}, "force must be true or false"),
        ("frames.resume", {"force": None}, "force must be true or false"),
        ("frames.calls", {"frame": 0}, "frame must be >= 1, not 0"),
        ("frames.rewind_call", {"call_id": ""}, "call_id must be a non-empty string"),
        ("frames.list", {"limit": 501}, "limit must be <= 500, not 501"),
        ("frames.list", {"offset": -1}, "offset must be >= 0"),
        ("document.saved", {"path": "", "time": "t"}, "path must be a non-empty string"),
        ("document.saved", {"path": "a.txt"}, "time is required"),
        (
            "document.saved",
            {"path": "a.txt", "time": "t", "notebook": 3},
            "notebook must be a string",
        ),
        ("approval.decide", {"request_id": "r1", "choice": "maybe"}, "choice must be one of"),
        ("approval.decide", {"choice": "deny"}, "request_id is required"),
        (
            "approval.decide",
            {"request_id": "r1", "choice": "deny", "note": 5},
            "note must be a string",
        ),
        ("status", {"id": True}, "id must be a string or an integer"),
    ],
)
def test_a_malformed_request_is_refused_naming_the_field_and_changes_nothing(
    kind: str, fields: dict[str, Any], named: str
) -> None:
    c, frames = comms()
    pending = c.broker.open(
        ApprovalRequest(
            request_id="r1",
            call_id="c1",
            tool="bash",
            description="ls",
            arguments={},
            reason="asks",
            suggested_rule=None,
            mode="default",
        )
    )
    answer = c.reply({"v": 1, "type": kind, **fields})
    assert answer["type"] == "error", answer
    assert answer["error"].startswith(f"{kind}: ") and named in answer["error"], answer
    assert not list(KERNEL_SIDE.iter_errors(answer))
    assert frames.calls == []
    assert [p.request_id for p in c.broker.pending()] == ["r1"] and not pending.future.done()


def test_a_malformed_connect_is_refused_without_repeating_its_key() -> None:
    c, _ = comms()
    key = "sk-" + "k3y" * 2000  # beyond the field's bound
    answer = c.reply({"v": 1, "type": "model.connect", "provider": "openai", "api_key": key})
    assert answer["type"] == "error" and "api_key must be" in answer["error"], answer
    assert "k3yk3y" not in answer["error"]
    answer = c.reply({"v": 1, "type": "model.connect", "provider": "gemini", "api_key": "sk-a1"})
    assert "provider must be one of" in answer["error"] and "sk-a1" not in answer["error"]
