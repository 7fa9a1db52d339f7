"""The `logician` comm target: answers a frontend's requests and tells it what happened.

The messages are declared once, in `comm_messages.py` (two pydantic unions, from which
`comm_schema.json` is generated; the lab extension's `protocol.ts` is tested against that
file). Frontend -> kernel: `approvals.list`, `approval.decide`, `status`, `frames.list`,
`frames.preview`, `frames.preview.page`, `frames.rewind`, `frames.undo`, `frames.resume`,
`frames.calls`, `frames.rewind_call`, `frames.files`, `frames.diff` (`diff_view.py`),
`document.saved`, `notices.list`, `notices.read`, `models.list`, `model.use`,
`model.default`, `model.connect`, `config.show`, `config.set`, `notebook.attach`,
`notebook.reply`; each is answered (its `id` echoed as `re`). Kernel -> frontend, unasked: `hello` when the comm opens (with the session's notices),
`approval.requested` / `approval.resolved`, `frames.changed` after every cell, `frames.rewound`
and `frames.undone`, `notice` when Logician says one (`ui.notices = "sidebar"`), `progress`
while a rewind, undo or resume restores paths or the first snapshot reads them
(`progress_view.py`), `notebook.request` to the
frontend holding the notebook (`notebook_bridge.py`), and `status` while it changes (at most
`STATUS_PUSH_HZ` a second).

Every incoming message is validated against `FrontendMessage` before a handler sees it:
anything unknown or malformed is answered with `error` naming the field, and changes nothing;
never an exception (a bad message must not crash the kernel). Every outgoing message is built
through `KernelMessage`, so what is sent is what the schema says.

Handlers dispatch through a table derived from the message types (`handle_<type>`), as
ipykernel builds `shell_handlers` from its `msg_types`. They may run on the kernel's main
thread or on a subshell thread; the broker they call is thread-safe.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from comm.base_comm import BaseComm
from pydantic import ValidationError

from ..agent.approvals import Answer, ApprovalBroker, ApprovalEvent, ApprovalPrompt, ApprovalRequest
from ..agent.model_connect import Connection
from ..types.tagged import validate_by_kind
from ..workspace import Notice, NoticeBoard
from . import comm_messages as m
from .comm_messages import FRONTEND_TYPES, SCHEMA_VERSION, TARGET
from .comm_sources import ConfigSource, FrameSource, ModelSource

STATUS_PUSH_HZ = 4.0
"""Pushed `status` messages per second at most, however fast a run streams."""

if TYPE_CHECKING:
    from .notebook_bridge import NotebookBridge

_log = logging.getLogger(__name__)

__all__ = ["STATUS_PUSH_HZ", "TARGET", "FrameSource", "LogicianComms", "explain", "outgoing"]


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
        self.notices: NoticeBoard | None = None
        """The workspace's notices (`notices.list`, `notices.read`, the `notice` message)."""
        self.notebook: NotebookBridge | None = None
        """The notebook protocol (`notebook.attach`, `notebook.reply`), when the kernel has one."""
        self._sender = threading.local()
        self.models: ModelSource | None = None
        """The model picker (`models.list`, `model.use`, `model.default`, `model.connect`)."""
        self.config: ConfigSource | None = None
        """The effective configuration (`config.show`, `config.set`)."""
        self.opened_listeners: list[Callable[[], None]] = []
        """Called after a comm opened and was sent `hello` (the work under way is re-sent)."""
        self._clock = clock
        self._last_status_push = float("-inf")
        self._comms: dict[str, BaseComm] = {}
        self._notebook_only: set[str] = set()
        self._lock = threading.Lock()
        self._handlers: dict[str, Callable[[Any], dict[str, Any]]] = {
            kind: getattr(self, "handle_" + kind.replace(".", "_")) for kind in FRONTEND_TYPES
        }
        broker.listen(self._broadcast)

    @property
    def listening(self) -> bool:
        """Whether some frontend that answers approvals is connected through a comm (one
        opened with `{"approvals": false}`, as `logician run`'s, serves the notebook only)."""
        with self._lock:
            return bool(set(self._comms) - self._notebook_only)

    def register(self, comm_manager: Any) -> None:
        comm_manager.register_target(TARGET, self._opened)

    def _opened(self, comm: BaseComm, open_msg: dict[str, Any]) -> None:
        data = open_msg.get("content", {}).get("data")
        # ipykernel (7.4) routes a frontend's message on a comm to the shell that sent on it
        # last; the kernel's unasked messages (status, frames.changed) go out from the main
        # thread while a cell runs, and the sidebar's requests, sent on a subshell so they are
        # answered during a cell, would then wait for the cell to end (a Lab save reported
        # mid-cell landing after the frame). Each message goes where the frontend sent it.
        comm._reply_subshell_for = _where_sent  # type: ignore[attr-defined]
        with self._lock:
            self._comms[comm.comm_id] = comm
            if isinstance(data, dict) and data.get("approvals") is False:
                self._notebook_only.add(comm.comm_id)

        @comm.on_msg
        def _on_msg(msg: dict[str, Any]) -> None:
            comm.send(self.reply(msg.get("content", {}).get("data"), sender=comm.comm_id))

        @comm.on_close
        def _on_close(msg: dict[str, Any]) -> None:
            with self._lock:
                self._comms.pop(comm.comm_id, None)
                self._notebook_only.discard(comm.comm_id)
            if self.notebook is not None:
                self.notebook.detach(comm.comm_id)

        hello: dict[str, Any] = {"pending": self._pending()}
        try:
            hello["status"] = self.status()
        except Exception:  # noqa: BLE001 - a status that cannot be read must not block hello
            pass
        if self.notices is not None:
            hello["notices"] = self._notice_rows()
        comm.send(outgoing("hello", hello))
        for listener in list(self.opened_listeners):
            listener()

    def reply(self, data: Any, *, sender: str | None = None) -> dict[str, Any]:
        """The answer to one message (pure apart from what the handlers call); never raises.
        `sender`: the comm it came on (`notebook.attach` names the frontend to ask)."""
        self._sender.comm_id = sender
        if not isinstance(data, dict):
            return _error("a message must be a JSON object")
        echo: dict[str, Any] = {}
        if isinstance(data.get("id"), (str, int)) and not isinstance(data.get("id"), bool):
            echo["re"] = data["id"]
        if data.get("v") != SCHEMA_VERSION:
            return _error(
                f"unsupported schema version {data.get('v')!r}; this kernel speaks v1", echo
            )
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in self._handlers:
            known = ", ".join(sorted(self._handlers))
            return _error(f"unknown message type {kind!r}; known: {known}", echo)
        try:
            message = validate_by_kind(m.FRONTEND_MODELS, m.FRONTEND, data, kind)
        except ValidationError as exc:
            if kind == "notebook.reply" and self.notebook is not None:
                # the tool waiting for this answer fails now, saying why, not at its timeout
                self.notebook.malformed(data.get("request"), explain(exc))
            return _error(f"{kind}: {explain(exc)}", echo)
        try:
            answer = self._handlers[kind](message)
        except Exception as exc:  # noqa: BLE001 - answered, never raised into the kernel
            return _error(f"{kind}: {exc}", echo)
        try:
            return outgoing(answer.pop("type"), {**answer, **echo})
        except ValidationError as exc:  # our own answer broke the schema: say so, never send it
            return _error(f"{kind}: the kernel's answer is malformed: {explain(exc)}", echo)

    def handle_approvals_list(self, message: m.ApprovalsList) -> dict[str, Any]:
        return {"type": "approvals", "pending": self._pending()}

    def handle_approval_decide(self, message: m.ApprovalDecide) -> dict[str, Any]:
        ok = self.broker.resolve(message.request_id, message.choice, message.note, via="comm")
        return {"type": "approval.decided", "ok": ok, "request_id": message.request_id}

    def handle_status(self, message: m.StatusRequest) -> dict[str, Any]:
        return {"type": "status", **self.status()}

    def handle_frames_list(self, message: m.FramesList) -> dict[str, Any]:
        offset, limit = message.offset, message.limit
        rows, total = self.frames.page(offset, limit) if self.frames else ([], 0)
        return {"type": "frames", "rows": rows, "total": total, "offset": offset}

    def handle_frames_preview(self, message: m.FramesPreview) -> dict[str, Any]:
        preview = self._frame_source().preview_target(
            message.frame,
            message.cell_id,
            force=message.force,
            include_external=message.include_external,
            keep_uncertain=message.keep_uncertain,
        )
        return {"type": "frames.preview", **preview}

    def handle_frames_preview_page(self, message: m.FramesPreviewPage) -> dict[str, Any]:
        page = self._frame_source().preview_page(
            message.frame,
            message.cell_id,
            message.group,
            message.offset,
            message.limit,
            force=message.force,
            include_external=message.include_external,
            keep_uncertain=message.keep_uncertain,
        )
        return {"type": "frames.preview.page", **page}

    def handle_frames_files(self, message: m.FramesFiles) -> dict[str, Any]:
        page = self._frame_source().frame_files(message.frame, message.offset, message.limit)
        return {"type": "frames.files", **page}

    def handle_frames_diff(self, message: m.FramesDiff) -> dict[str, Any]:
        sides = self._frame_source().frame_diff(
            message.frame, message.path, message.page, preview=message.preview
        )
        return {"type": "frames.diff", **sides}

    def handle_frames_rewind(self, message: m.FramesRewind) -> dict[str, Any]:
        done = self._frame_source().rewind_target(
            message.frame,
            message.cell_id,
            message.mode,
            message.force,
            include_external=message.include_external,
            keep_uncertain=message.keep_uncertain,
        )
        return {"type": "frames.rewind", **done}

    def handle_frames_undo(self, message: m.FramesUndo) -> dict[str, Any]:
        return {"type": "frames.undo", **self._frame_source().undo_target(message.force)}

    def handle_frames_resume(self, message: m.FramesResume) -> dict[str, Any]:
        return {"type": "frames.resume", **self._frame_source().resume_target(message.force)}

    def handle_frames_calls(self, message: m.FramesCalls) -> dict[str, Any]:
        return {"type": "frames.calls", **self._frame_source().frame_calls(message.frame)}

    def handle_frames_rewind_call(self, message: m.FramesRewindCall) -> dict[str, Any]:
        done = self._frame_source().rewind_call(message.call_id, message.force)
        return {"type": "frames.rewind_call", **done}

    def handle_document_saved(self, message: m.DocumentSavedRequest) -> dict[str, Any]:
        saved = self._frame_source().note_save(
            message.path, message.time, message.notebook, message.server_root
        )
        return {"type": "document.saved", **saved}

    def handle_notices_list(self, message: m.NoticesList) -> dict[str, Any]:
        board = self._notice_board()
        return {"type": "notices", "rows": self._notice_rows(), "unread": board.unread_count()}

    def handle_notices_read(self, message: m.NoticesRead) -> dict[str, Any]:
        board = self._notice_board()
        board.mark_read(message.up_to)  # its read listener pushes the status to every comm
        return {"type": "notices.read", "unread": board.unread_count()}

    def handle_notebook_attach(self, message: m.NotebookAttach) -> dict[str, Any]:
        sender = getattr(self._sender, "comm_id", None)
        if self.notebook is None or sender is None:
            raise ValueError("this kernel serves no notebook tools")
        return {"type": "notebook.attached", "pending": self.notebook.attach(sender, message.path)}

    def handle_notebook_reply(self, message: m.NotebookReply) -> dict[str, Any]:
        known = self.notebook is not None and self.notebook.received(message)
        return {"type": "notebook.received", "known": known}

    def send_to(self, comm_id: str, kind: str, payload: dict[str, Any]) -> bool:
        """Send one message to one open comm; False when it is no longer open."""
        with self._lock:
            comm = self._comms.get(comm_id)
        if comm is None:
            return False
        comm.send(outgoing(kind, payload))
        return True

    def handle_models_list(self, message: m.ModelsList) -> dict[str, Any]:
        return {"type": "models", **self._model_source().choices()}

    def handle_model_use(self, message: m.ModelUse) -> dict[str, Any]:
        return {"type": "model.use", **self._model_source().use(message.model)}

    def handle_model_default(self, message: m.ModelDefault) -> dict[str, Any]:
        return {"type": "model.default", **self._model_source().make_default(message.model)}

    def handle_model_connect(self, message: m.ModelConnect) -> dict[str, Any]:
        form = Connection(
            message.provider, message.base_url, message.api_key, message.model, message.name
        )
        return {"type": "model.connect", **self._model_source().connect(form)}

    def handle_config_show(self, message: m.ConfigShow) -> dict[str, Any]:
        return {"type": "config", **self._config_source().show()}

    def handle_config_set(self, message: m.ConfigSet) -> dict[str, Any]:
        done = self._config_source().set(message.key, message.value, message.persist)
        return {"type": "config.set", **done}

    def _config_source(self) -> ConfigSource:
        if self.config is None:
            raise ValueError("this kernel session shows no configuration")
        return self.config

    def _model_source(self) -> ModelSource:
        if self.models is None:
            raise ValueError("this kernel session offers no model picker")
        return self.models

    def send_notice(self, notice: Notice) -> None:
        """Tell every open comm of a notice just said (a `NoticeBoard` listener)."""
        board = self._notice_board()
        self.notify("notice", {"notice": self._row(notice), "unread": board.unread_count()})

    def _notice_board(self) -> NoticeBoard:
        if self.notices is None:
            raise ValueError("this kernel session keeps no notices")
        return self.notices

    def _notice_rows(self) -> list[dict[str, Any]]:
        return [self._row(n) for n in reversed(self._notice_board().all()[-200:])]

    def _row(self, notice: Notice) -> dict[str, Any]:
        return {**dataclasses.asdict(notice), "read": self._notice_board().is_read(notice.id)}

    def _pending(self) -> list[dict[str, Any]]:
        return [_prompt(r) for r in self.broker.pending()]

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
        if not comms:
            return
        try:
            message = outgoing(kind, payload)
        except ValidationError as exc:  # a kernel bug: say so where it is seen, never raise
            _log.warning("logician comm: not sending a malformed %s: %s", kind, explain(exc))
            message = _error(f"the kernel could not announce {kind}: {explain(exc)}")
        for comm in comms:
            comm.send(message)

    def _broadcast(self, event: ApprovalEvent) -> None:
        if isinstance(event, Answer):
            self.notify(
                "approval.resolved",
                {
                    "request_id": event.request_id,
                    "choice": event.choice,
                    "note": event.note,
                    "via": event.via,
                },
            )
        else:
            self.notify("approval.requested", _prompt(event))
        self.push_status(force=True)  # the count of pending approvals changed


def outgoing(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The message of type `kind` as sent: validated against `KernelMessage` (a
    `ValidationError` names the field) and dumped to JSON-able values."""
    data = {**payload, "v": SCHEMA_VERSION, "type": kind}
    return validate_by_kind(m.KERNEL_MODELS, m.KERNEL, data, kind).model_dump(mode="json")


def _prompt(request: ApprovalRequest) -> dict[str, Any]:
    """What a frontend is shown of a request: its `ApprovalPrompt` part."""
    return request.model_dump(mode="json", include=set(ApprovalPrompt.model_fields))


def explain(error: ValidationError) -> str:
    """A validation error in one line, naming each field: `limit must be <= 500, not 501`.
    The alternatives of a union (an id is a string or an integer) are said together."""
    said: dict[str, list[str]] = {}
    inputs: dict[str, Any] = {}
    for problem in error.errors(include_url=False):
        where = ".".join(str(p) for p in problem["loc"][1:] if not _union_member(p))
        text = _wanted(problem)
        if text not in said.setdefault(where, []):
            said[where].append(text)
        # a key that broke the schema is never repeated in the error
        inputs[where] = "****" if where in _SECRET_FIELDS else problem.get("input")
    parts = []
    for where, texts in said.items():
        if not where:  # the whole message, e.g. a frame and a cell id both given
            parts.append("; ".join(texts))
        elif texts == ["is required"] or texts == ["is not a field of this message"]:
            parts.append(f"{where} {texts[0]}")
        else:
            parts.append(f"{where} must be {' or '.join(texts)}, not {inputs[where]!r:.80}")
    return "; ".join(parts)


_SECRET_FIELDS = frozenset({"api_key"})
"""Fields whose value an error never repeats."""

_WANTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "string_type": "a string",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "none_required": "null",
}


def _wanted(problem: Any) -> str:
    """What a field must be, in words, from one pydantic error."""
    kind, ctx = problem["type"], problem.get("ctx") or {}
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a field of this message"
    if kind == "literal_error":
        return f"one of {ctx.get('expected')}"
    if kind in ("greater_than_equal", "less_than_equal"):
        return f"{'>=' if kind == 'greater_than_equal' else '<='} {ctx.get('ge', ctx.get('le'))}"
    if kind == "string_too_short":
        return "a non-empty string"
    if kind in _WANTED:
        return _WANTED[kind]
    return str(problem["msg"]).removeprefix("Value error, ")


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "none", "list", "dict"})


def _union_member(part: object) -> bool:
    """Whether a location part names a union's alternative (`str`, `function-after[...]`),
    not a field or an index."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part or "-" in part)


def _where_sent(data: Any, subshell_id: str | None) -> str | None:
    """The shell a frontend's message on the `logician` comm is handled by: the one named in
    its header (None: the main shell), whichever shell the kernel last sent on."""
    return subshell_id


def _error(text: str, echo: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"v": SCHEMA_VERSION, "type": "error", "error": text, **(echo or {})}
