"""Approvals of a running agent: one broker, several ways for the user's answer to arrive.

A tool call that needs a decision becomes a pending request in the `ApprovalBroker`: the gate's
`ApprovalRequest` itself, its preview filled in, never a copy re-keyed by hand. The cell shows
an approval card (ipywidgets); the `logician` comm target (the lab extension's sidebar, or any
client that speaks it) can answer too; whichever answers first wins and every view is told
(listeners get the request, then its `Answer`), so deciding in one place resolves all. With
nobody to ask (`logician run`, a client with no widgets, no stdin and no `logician` comm), the
configured headless policy decides and says so. Answers may come from any thread (the kernel's
main loop, a subshell thread): the broker resolves thread-safe `concurrent.futures.Future`s
that the agent's worker loop awaits.

Must never: resolve a request twice, block the kernel's event loop, or echo a secret.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..policy import ApprovalPrompt, ApprovalRequest
from ..types.approvals import APPROVAL_CHANNELS, APPROVAL_CHOICES, ApprovalChannel, ApprovalChoice

__all__ = [
    "CHOICES",
    "MAX_PREVIEW",
    "Answer",
    "ApprovalBroker",
    "ApprovalEvent",
    "ApprovalPrompt",
    "ApprovalRequest",
    "Choice",
    "Pending",
    "preview",
]

Choice = ApprovalChoice
CHOICES = APPROVAL_CHOICES
MAX_PREVIEW = 20_000


@dataclass(frozen=True)
class Answer:
    """The user's (or the headless policy's) decision on one request."""

    request_id: str
    """The request decided (`ApprovalPrompt.request_id`)."""
    choice: Choice
    """What was decided."""
    note: str = ""
    """What the user said with it (passed to the model on a denial)."""
    via: ApprovalChannel = "widget"
    """Where it was decided."""


@dataclass
class Pending:
    """One open request and the future its answer resolves."""

    request: ApprovalRequest
    """The gate's request (secrets already masked), its preview filled in; views show its
    `ApprovalPrompt` part."""
    future: Future[Answer] = field(default_factory=Future)

    @property
    def id(self) -> str:
        return self.request.request_id


ApprovalEvent = ApprovalRequest | Answer
"""What listeners are told: a request opened, or the answer that settled one."""


class ApprovalBroker:
    """Pending approval requests of one kernel, answerable from any thread, once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, Pending] = {}
        self._listeners: list[Callable[[ApprovalEvent], None]] = []

    def listen(self, callback: Callable[[ApprovalEvent], None]) -> None:
        """`callback(event)` for each request opened and each answer; must not raise."""
        self._listeners.append(callback)

    def open(self, request: ApprovalRequest) -> Pending:
        pending = Pending(request)
        with self._lock:
            if pending.id in self._pending:
                raise ValueError(f"approval request {pending.id!r} is already open")
            self._pending[pending.id] = pending
        self._tell(request)
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
        answer = Answer(request_id, choice=choice, note=note, via=via)  # type: ignore[arg-type]
        pending.future.set_result(answer)
        self._tell(answer)
        return True

    def pending(self) -> list[ApprovalRequest]:
        with self._lock:
            return [p.request for p in self._pending.values()]

    def _tell(self, event: ApprovalEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
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
        import difflib  # 7 ms to import: loaded when first used

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
