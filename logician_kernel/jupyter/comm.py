"""The `logician` comm target: a small, versioned message schema for frontends.

Every message is a JSON object `{"v": 1, "type": ...}`; a request may carry an `id` (string or
number), which its answer echoes as `re`. Frontend -> kernel:
  - `approvals.list`                                  -> `approvals` (the pending requests)
  - `approval.decide` {request_id, choice, note?}     -> `approval.decided` {ok, request_id}
  - `status`                                          -> `status` {thread, phase, frames, ...}
  - `frames.list` {offset?, limit? (<= 500)}           -> `frames` {rows (newest first), total}
  - `frames.preview` {frame | cell_id}                 -> `frames.preview` {frame, files, ...}
  - `frames.rewind` {frame | cell_id, mode?, force?, include_external?}
                                                      -> `frames.rewind` {ok, frame, summary}
  - `frames.undo` {force?}                             -> `frames.undo` {ok, frames, summary}
  - `frames.resume` {force?}                           -> `frames.resume` {ok, frames, summary}
  - `document.saved` {path, time, notebook?, server_root?} (JupyterLab saved a document; the
    kernel attributes the change to the user)            -> `document.saved` {path, recorded}
Kernel -> frontend (unasked): `hello` {pending, status} when the comm opens,
`approval.requested` {request...}, `approval.resolved` {request_id, choice, via},
`frames.changed` {total} after every cell, `frames.rewound` {frames, cell_ids, at, by} after
every rewind (so a frontend can grey out the cells of rewound frames), `frames.undone`
{frames, cell_ids, at, by, undoes} after an undo made them active again, `status` while it
changes (at most `STATUS_PUSH_HZ` a second). Anything unknown or malformed is answered with
`error` {error}, never an exception: a bad message must not crash the kernel.

`logician_kernel/jupyter/comm_schema.json` describes these messages; the lab extension's
`labextension/src/protocol.ts` is written against it and both are tested against it.

Message handlers dispatch through a table, as ipykernel's `shell_handlers` do. They may run on
the kernel's main thread or on a subshell thread; the broker they call is thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from comm.base_comm import BaseComm

from ..agent.approvals import ApprovalBroker
from ..types.approvals import APPROVAL_CHOICES as CHOICES
from .widgets.rewind import REWIND_MODES  # one declaration, with the rewind control's buttons

SCHEMA_VERSION = 1
TARGET = "logician"
STATUS_PUSH_HZ = 4.0
"""Pushed `status` messages per second at most, however fast a run streams."""


class FrameSource(Protocol):
    """What the frame messages read and do (the kernel's ledger and checkpoints)."""

    def page(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]: ...

    def preview_target(
        self,
        frame: int | None,
        cell_id: str | None,
        *,
        force: bool = False,
        include_external: bool = False,
    ) -> dict[str, Any]: ...

    def rewind_target(
        self,
        frame: int | None,
        cell_id: str | None,
        mode: str,
        force: bool,
        *,
        include_external: bool = False,
    ) -> dict[str, Any]: ...

    def note_save(
        self, path: str, at: str, notebook: str | None, server_root: str | None
    ) -> dict[str, Any]: ...

    def undo_target(self, force: bool) -> dict[str, Any]: ...

    def resume_target(self, force: bool) -> dict[str, Any]: ...


class LogicianComms:
    """The open `logician` comms of one kernel and their handlers."""

    def __init__(
        self,
        broker: ApprovalBroker,
        status: Callable[[], dict[str, Any]],
        frames: FrameSource | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.broker = broker
        self.status = status
        self.frames = frames
        self._clock = clock
        self._last_status_push = float("-inf")
        self._comms: dict[str, BaseComm] = {}
        self._lock = threading.Lock()
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "approvals.list": self.handle_approvals_list,
            "approval.decide": self.handle_approval_decide,
            "status": self.handle_status,
            "frames.list": self.handle_frames_list,
            "frames.preview": self.handle_frames_preview,
            "frames.rewind": self.handle_frames_rewind,
            "frames.undo": self.handle_frames_undo,
            "frames.resume": self.handle_frames_resume,
            "document.saved": self.handle_document_saved,
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

        hello: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "type": "hello",
            "pending": self.broker.pending(),
        }
        try:
            hello["status"] = self.status()
        except Exception:  # noqa: BLE001 - a status that cannot be read must not block hello
            pass
        comm.send(hello)

    def reply(self, data: Any) -> dict[str, Any]:
        """The answer to one message (pure apart from what the handlers call); never raises."""
        if not isinstance(data, dict):
            return _error("a message must be a JSON object")
        echo: dict[str, Any] = {}
        if isinstance(data.get("id"), (str, int)) and not isinstance(data.get("id"), bool):
            echo["re"] = data["id"]
        if data.get("v") != SCHEMA_VERSION:
            return _error(
                f"unsupported schema version {data.get('v')!r}; this kernel speaks v1", echo
            )
        handler = self._handlers.get(str(data.get("type")))
        if handler is None:
            known = ", ".join(sorted(self._handlers))
            return _error(f"unknown message type {data.get('type')!r}; known: {known}", echo)
        try:
            return {"v": SCHEMA_VERSION, **handler(data), **echo}
        except Exception as exc:  # noqa: BLE001 - answered, never raised into the kernel
            return _error(f"{data.get('type')}: {exc}", echo)

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
        rows, total = self.frames.page(offset, limit) if self.frames else ([], 0)
        return {"type": "frames", "rows": rows, "total": total, "offset": offset}

    def handle_frames_preview(self, data: dict[str, Any]) -> dict[str, Any]:
        frame, cell_id = _target(data)
        force, include_external = _flag(data, "force"), _flag(data, "include_external")
        preview = self._frame_source().preview_target(
            frame, cell_id, force=force, include_external=include_external
        )
        return {"type": "frames.preview", **preview}

    def handle_frames_rewind(self, data: dict[str, Any]) -> dict[str, Any]:
        frame, cell_id = _target(data)
        mode, force = data.get("mode", "both"), data.get("force", False)
        if mode not in REWIND_MODES:
            raise ValueError(f"mode must be one of {', '.join(REWIND_MODES)}, not {mode!r}")
        if not isinstance(force, bool):
            raise ValueError("force must be true or false")
        include_external = _flag(data, "include_external")
        done = self._frame_source().rewind_target(
            frame, cell_id, mode, force, include_external=include_external
        )
        return {"type": "frames.rewind", **done}

    def handle_frames_undo(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "frames.undo", **self._frame_source().undo_target(_force(data))}

    def handle_frames_resume(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "frames.resume", **self._frame_source().resume_target(_force(data))}

    def handle_document_saved(self, data: dict[str, Any]) -> dict[str, Any]:
        path, at = data.get("path"), data.get("time")
        if not isinstance(path, str) or not path:
            raise ValueError("path must be the saved document's non-empty server path")
        if not isinstance(at, str) or not at:
            raise ValueError("time must be the save's ISO 8601 time")
        notebook, root = data.get("notebook"), data.get("server_root")
        for name, value in (("notebook", notebook), ("server_root", root)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name} must be a string")
        return {
            "type": "document.saved",
            **self._frame_source().note_save(path, at, notebook, root),
        }

    def _frame_source(self) -> FrameSource:
        if self.frames is None:
            raise ValueError("this kernel session records no frames")
        return self.frames

    def push_status(self, *, force: bool = False) -> None:
        """Send `status` to every open comm, at most `STATUS_PUSH_HZ` times a second."""
        now = self._clock()
        if not force and now - self._last_status_push < 1.0 / STATUS_PUSH_HZ:
            return
        if not self.listening:
            return
        self._last_status_push = now
        self.notify("status", self.status())

    def notify(self, kind: str, payload: dict[str, Any]) -> None:
        """Tell every open `logician` comm something happened (`kind` is the message type)."""
        with self._lock:
            comms = list(self._comms.values())
        for comm in comms:
            comm.send({"v": SCHEMA_VERSION, "type": kind, **payload})

    def _broadcast(self, event: str, payload: dict[str, Any]) -> None:
        self.notify(f"approval.{event}", payload)
        self.push_status(force=True)  # the count of pending approvals changed


def _target(data: dict[str, Any]) -> tuple[int | None, str | None]:
    """The frame a preview or rewind names: `frame` (an id) or `cell_id` (its latest frame)."""
    frame, cell_id = data.get("frame"), data.get("cell_id")
    if (frame is None) == (cell_id is None):
        raise ValueError("give exactly one of frame (an integer) or cell_id (a string)")
    if frame is not None and (not isinstance(frame, int) or isinstance(frame, bool) or frame < 1):
        raise ValueError(f"frame must be an integer >= 1, not {frame!r}")
    if cell_id is not None and (not isinstance(cell_id, str) or not cell_id):
        raise ValueError(f"cell_id must be a non-empty string, not {cell_id!r}")
    return frame, cell_id


def _force(data: dict[str, Any]) -> bool:
    return _flag(data, "force")


def _flag(data: dict[str, Any], name: str) -> bool:
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false")
    return value


def _error(text: str, echo: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"v": SCHEMA_VERSION, "type": "error", "error": text, **(echo or {})}
