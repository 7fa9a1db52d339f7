"""The durable side of an agent run: messages and tool effects in the thread ledger.

`LedgerRunStore` implements the harness's `RunStore` over the ledger's single append point:
messages at turn and tool boundaries, and each tool call as intent (durable before the tool
starts), result, and commit. `resolve_dangling_calls` is the recovery that runs when a thread
is reopened: a call whose result never arrived is re-offered (pure tools), offered for
`rewind --call` when its effects were recorded (`settle.offer_restorable`), or quarantined
(anything else with effects), and the conversation gets a result for every call either way - the
model is told "outcome unknown", and nothing is repeated behind the user's back.

Must never: persist streaming deltas, store a secret, or re-run a tool.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from ..durable.redact import redact, redact_data
from .settle import offer_restorable, result_message, why_not_restorable
from .thread_ledger import (
    MessageEntry,
    ProjectionItem,
    Quarantine,
    ThreadLedger,
    ToolCommit,
    ToolIntent,
    ToolOutcome,
)

if TYPE_CHECKING:
    from ..types.messages import Message, ToolCall

MAX_RECORDED_RESULT = 30_000


def _redact_value(value: Any, secrets: tuple[str, ...]) -> Any:
    return redact_data(value, secrets)


class LedgerRunStore:
    """Records one run (one `%%logician` cell) into the thread ledger."""

    def __init__(
        self, ledger: ThreadLedger, frame: int | None, *, secrets: Iterable[str] = ()
    ) -> None:
        self.ledger = ledger
        self.frame = frame
        self.secrets = tuple(s for s in secrets if s)

    def append_message(self, message: Message) -> None:
        from ..types.messages import MESSAGE_ADAPTER  # loaded by a run, not by a start

        data = MESSAGE_ADAPTER.dump_python(message, mode="json")
        self.ledger.append(
            MessageEntry, frame=self.frame, message=_redact_value(data, self.secrets), durable=True
        )

    def record_intent(self, call: ToolCall, recovery: str) -> None:
        self.ledger.append(
            ToolIntent,
            frame=self.frame,
            call_id=call.id,
            name=call.name,
            arguments=_redact_value(call.arguments, self.secrets),
            recovery=recovery,
            durable=True,  # the intent must exist before any effect can
        )

    def record_result(self, call_id: str, result: Any) -> None:
        self.ledger.append(
            ToolOutcome,
            frame=self.frame,
            call_id=call_id,
            is_error=bool(result.is_error),
            content=redact(result.content[:MAX_RECORDED_RESULT], self.secrets),
            display=redact(getattr(result, "display", ""), self.secrets),
        )

    def record_commit(self, call_id: str) -> None:
        self.ledger.append(ToolCommit, call_id=call_id, durable=True)

    def replace_messages(
        self, messages: list[Message], reason: Literal["compaction"], note: str
    ) -> None:
        """Record that `messages` are the whole conversation from here on (a compaction)."""
        from ..types.messages import MESSAGE_ADAPTER

        data = [MESSAGE_ADAPTER.dump_python(m, mode="json") for m in messages]
        self.ledger.append(
            ProjectionItem,
            reason=reason,
            messages=_redact_value(data, self.secrets),
            note=redact(note, self.secrets),
            durable=True,
        )


def resolve_dangling_calls(ledger: ThreadLedger, *, interrupted: bool = False) -> list[str]:
    """Settle every tool call left without a commit; notices for the user.

    On reopen (`interrupted=False`) the kernel died mid-call: effects are unknown, so calls
    that are not pure are quarantined. After a user's interrupt the call was cancelled in a
    live kernel: it is answered as interrupted, effects possibly partial, never repeated.
    """
    # Folded incrementally by the ledger (and kept in its checkpoint): reopening a long thread
    # does not read its history to find the few calls still open.
    calls = ledger.fold("calls")
    intents: dict[str, ToolIntent] = dict(calls.intents)
    outcomes: dict[str, ToolOutcome] = dict(calls.outcomes)
    answered, committed = set(calls.answered), set(calls.committed)
    notices = []
    for call_id, intent in intents.items():
        if call_id in committed:
            continue
        outcome = outcomes.get(call_id)
        if outcome is None and interrupted:
            text = (
                f"INTERRUPTED: the user interrupted this {intent.name} call before it finished. "
                "Its effects may be partial; it was not repeated."
            )
            outcome = ledger.append(
                ToolOutcome, frame=intent.frame, call_id=call_id, is_error=True, content=text
            )
        if outcome is None:
            restorable = offer_restorable(ledger, intent)
            if intent.recovery == "pure":
                text = (
                    f"The {intent.name} call was interrupted by a kernel restart before it "
                    "returned. It has no side effects; call it again if you still need it."
                )
            elif restorable is not None:
                text, notice = restorable
                notices.append(notice)
            else:
                text = (
                    f"OUTCOME UNKNOWN: the kernel died while this {intent.name} call was running. "
                    "Its effects (files, processes, anything external) are unknown and it was "
                    "NOT repeated. Check the state before doing anything that depends on it."
                )
                ledger.append(
                    Quarantine,
                    frame=intent.frame,
                    call_id=call_id,
                    name=intent.name,
                    detail=text,
                )
                why = why_not_restorable(ledger, intent)
                notices.append(
                    f"Logician: quarantined the {intent.name} call of frame {intent.frame} "
                    f"({_describe(intent)}): the kernel died while it ran, so its effects are "
                    "unknown. It was not repeated; the agent is told its outcome is unknown."
                    + (f" It is {why}." if why else "")
                )
            outcome = ledger.append(
                ToolOutcome, frame=intent.frame, call_id=call_id, is_error=True, content=text
            )
        if call_id not in answered:
            ledger.append(
                MessageEntry,
                frame=intent.frame,
                message=result_message(call_id, outcome.content, is_error=outcome.is_error),
            )
        ledger.append(ToolCommit, call_id=call_id, durable=True)
    return notices


def _describe(intent: ToolIntent) -> str:
    for key in ("command", "path", "code"):
        value = intent.arguments.get(key)
        if isinstance(value, str):
            first = value.strip().splitlines()[0] if value.strip() else ""
            return f"{key} {first[:80]!r}"
    return f"call {intent.call_id}"
