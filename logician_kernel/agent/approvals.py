"""Approvals of a running agent: one broker, several ways for the user's answer to arrive.

A tool call that needs a decision becomes a pending request in the `ApprovalBroker`. The cell
shows an approval card (ipywidgets); the `logician` comm target (the lab extension's sidebar,
or any client that speaks it) can answer too; whichever answers first wins and every view is
told, so deciding in one place resolves all. With nobody to ask (`logician run`, a client with
no widgets, no stdin and no `logician` comm), the configured headless policy decides and says
so. Answers may come from any thread (the kernel's main loop, a subshell thread): the broker
resolves thread-safe `concurrent.futures.Future`s that the agent's worker loop awaits.

Must never: resolve a request twice, block the kernel's event loop, or echo a secret.
"""

from __future__ import annotations

import difflib
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..types.approvals import APPROVAL_CHANNELS, APPROVAL_CHOICES, ApprovalChannel, ApprovalChoice

Choice = ApprovalChoice
CHOICES = APPROVAL_CHOICES
MAX_PREVIEW = 20_000


@dataclass(frozen=True)
class Answer:
    """The user's (or the headless policy's) decision on one request."""

    choice: Choice
    """What was decided."""
    note: str = ""
    """What the user said with it (passed to the model on a denial)."""
    via: ApprovalChannel = "widget"
    """Where it was decided."""


@dataclass
class Pending:
    id: str
    payload: dict[str, Any]
    """What frontends are shown (JSON-able; secrets already masked)."""
    future: Future[Answer] = field(default_factory=Future)


class ApprovalBroker:
    """Pending approval requests of one kernel, answerable from any thread, once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, Pending] = {}
        self._listeners: list[Callable[[str, dict[str, Any]], None]] = []

    def listen(self, callback: Callable[[str, dict[str, Any]], None]) -> None:
        """`callback(event, payload)` for "requested" and "resolved"; must not raise."""
        self._listeners.append(callback)

    def open(self, payload: dict[str, Any]) -> Pending:
        pending = Pending(id=uuid.uuid4().hex[:12], payload={**payload})
        pending.payload["request_id"] = pending.id
        with self._lock:
            self._pending[pending.id] = pending
        self._tell("requested", pending.payload)
        return pending

    def resolve(
        self, request_id: str, choice: str, note: str = "", via: ApprovalChannel = "widget"
    ) -> bool:
        """Answer a request; False when it is unknown or already answered (first one wins)."""
        if choice not in CHOICES:
            raise ValueError(f"choice {choice!r}: expected one of {', '.join(CHOICES)}")
        if via not in APPROVAL_CHANNELS:
            raise ValueError(f"via {via!r}: expected one of {', '.join(APPROVAL_CHANNELS)}")
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is None:
            return False
        answer = Answer(choice=choice, note=note, via=via)  # type: ignore[arg-type]
        pending.future.set_result(answer)
        self._tell(
            "resolved", {"request_id": request_id, "choice": choice, "note": note, "via": via}
        )
        return True

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [p.payload for p in self._pending.values()]

    def _tell(self, event: str, payload: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            try:
                listener(event, payload)
            except Exception:  # noqa: BLE001 - a broken view must not break the decision
                continue


def preview(tool: str, arguments: dict[str, Any], workspace: Path) -> tuple[str, str]:
    """The call in readable form for a card: (kind, text) - a command, a diff or code."""
    if tool == "bash":
        return "command", str(arguments.get("command", ""))
    if tool == "python":
        return "code", str(arguments.get("code", ""))
    if tool in ("write", "edit"):
        path = str(arguments.get("path", ""))
        try:
            old = (workspace / path).read_text()
        except (OSError, UnicodeDecodeError):
            old = ""
        if tool == "write":
            new = str(arguments.get("content", ""))
        else:
            find, repl = str(arguments.get("old_string", "")), str(arguments.get("new_string", ""))
            new = (
                old.replace(find, repl)
                if arguments.get("replace_all")
                else old.replace(find, repl, 1)
            )
        diff = "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"a/{path}",
                tofile=f"b/{path}",
            )
        )
        return "diff", diff[:MAX_PREVIEW] or f"(no change to {path})"
    return "text", ", ".join(f"{k}={v!r}" for k, v in arguments.items())[:MAX_PREVIEW]
