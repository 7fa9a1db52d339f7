"""The `logician` comm target: a small, versioned message schema for frontends.

Every message is a JSON object `{"v": 1, "type": ...}`. Frontend -> kernel:
  - `approvals.list`                                  -> `approvals` (the pending requests)
  - `approval.decide` {request_id, choice, note?}     -> `approval.decided` {ok, request_id}
  - `status`                                          -> `status` {thread, frames, ...}
  - `frames.list` {offset?, limit? (<= 500)}           -> `frames` {rows (newest first), total}
Kernel -> frontend (unasked): `approval.requested` {request...}, `approval.resolved`
{request_id, choice, via}, `frames.rewound` {frames, at, by} after every rewind (so a frontend
can grey out the cells of rewound frames). Anything unknown or malformed is answered with
`error` {error}, never an exception: a bad message must not crash the kernel.

Message handlers dispatch through a table, as ipykernel's `shell_handlers` do. They may run on
the kernel's main thread or on a subshell thread; the broker they call is thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from comm.base_comm import BaseComm

from .approvals import CHOICES, ApprovalBroker

SCHEMA_VERSION = 1
TARGET = "logician"


class LogicianComms:
    """The open `logician` comms of one kernel and their handlers."""

    def __init__(
        self,
        broker: ApprovalBroker,
        status: Callable[[], dict[str, Any]],
        frames: Callable[[int, int], tuple[list[dict[str, Any]], int]] | None = None,
    ) -> None:
        self.broker = broker
        self.status = status
        self.frames = frames
        self._comms: dict[str, BaseComm] = {}
        self._lock = threading.Lock()
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "approvals.list": self.handle_approvals_list,
            "approval.decide": self.handle_approval_decide,
            "status": self.handle_status,
            "frames.list": self.handle_frames_list,
        }
        broker.listen(self._broadcast)

    @property
    def listening(self) -> bool:
        """Whether some frontend can be asked through a comm."""
        with self._lock:
            return bool(self._comms)

    def register(self, comm_manager: Any) -> None:
        comm_manager.register_target(TARGET, self._opened)

    def _opened(self, comm: BaseComm, open_msg: dict[str, Any]) -> None:
        with self._lock:
            self._comms[comm.comm_id] = comm

        @comm.on_msg
        def _on_msg(msg: dict[str, Any]) -> None:
            comm.send(self.reply(msg.get("content", {}).get("data")))

        @comm.on_close
        def _on_close(msg: dict[str, Any]) -> None:
            with self._lock:
                self._comms.pop(comm.comm_id, None)

        comm.send({"v": SCHEMA_VERSION, "type": "hello", "pending": self.broker.pending()})

    def reply(self, data: Any) -> dict[str, Any]:
        """The answer to one message (pure apart from the broker); never raises."""
        if not isinstance(data, dict):
            return _error("a message must be a JSON object")
        if data.get("v") != SCHEMA_VERSION:
            return _error(f"unsupported schema version {data.get('v')!r}; this kernel speaks v1")
        handler = self._handlers.get(str(data.get("type")))
        if handler is None:
            known = ", ".join(sorted(self._handlers))
            return _error(f"unknown message type {data.get('type')!r}; known: {known}")
        try:
            return {"v": SCHEMA_VERSION, **handler(data)}
        except Exception as exc:  # noqa: BLE001 - answered, never raised into the kernel
            return _error(f"{data.get('type')}: {exc}")

    def handle_approvals_list(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "approvals", "pending": self.broker.pending()}

    def handle_approval_decide(self, data: dict[str, Any]) -> dict[str, Any]:
        request_id, choice = data.get("request_id"), data.get("choice")
        if not isinstance(request_id, str) or choice not in CHOICES:
            raise ValueError(f"needs request_id and choice (one of {', '.join(CHOICES)})")
        note = data.get("note") or ""
        ok = self.broker.resolve(request_id, choice, str(note), via="comm")
        return {"type": "approval.decided", "ok": ok, "request_id": request_id}

    def handle_status(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "status", **self.status()}

    def handle_frames_list(self, data: dict[str, Any]) -> dict[str, Any]:
        offset, limit = data.get("offset", 0), data.get("limit", 100)
        if (
            not isinstance(offset, int)
            or not isinstance(limit, int)
            or offset < 0
            or not 0 < limit <= 500
        ):
            raise ValueError("offset must be an integer >= 0 and limit an integer in 1..500")
        rows, total = self.frames(offset, limit) if self.frames else ([], 0)
        return {"type": "frames", "rows": rows, "total": total, "offset": offset}

    def notify(self, kind: str, payload: dict[str, Any]) -> None:
        """Tell every open `logician` comm something happened (`kind` is the message type)."""
        with self._lock:
            comms = list(self._comms.values())
        for comm in comms:
            comm.send({"v": SCHEMA_VERSION, "type": kind, **payload})

    def _broadcast(self, event: str, payload: dict[str, Any]) -> None:
        self.notify(f"approval.{event}", payload)


def _error(text: str) -> dict[str, Any]:
    return {"v": SCHEMA_VERSION, "type": "error", "error": text}
