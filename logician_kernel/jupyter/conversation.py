"""`%logician branches | branch merge ID | branch discard ID | compact [focus]`.

Conversation operations that need the model (a branch summary, a compaction summary) run on a
short-lived event loop of their own; they either append one projection item or change
nothing: a failed summary leaves the conversation exactly as it was.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from IPython.core.error import UsageError

from ..compaction import CompactionFailed, compact, summarize
from ..providers import Metered
from ..session.branches import branch_discard_fields, branch_merge_fields, derive_branches
from ..session.thread_ledger import ProjectionItem
from ..types import MESSAGE_ADAPTER
from . import display as render


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Await `coro` on a worker thread's loop (the kernel's own loop is busy running us)."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="logician-summary", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def branches(ledger: Any) -> render.Rendered:
    found = derive_branches(ledger.entries)
    if not found:
        return render.preformatted("No branches: a rewind that drops messages or frames makes one.")
    lines = [f"{'branch':<8} {'status':<10} {'frames':<12} messages  created"]
    for b in found:
        span = ", ".join(map(str, b.frames)) or "-"
        lines.append(
            f"{b.id:<8} {b.status:<10} {span:<12} {len(b.messages):>8}  {b.created_at[:19]}"
        )
    return render.preformatted("\n".join(lines))


def branch(ledger: Any, provider: Any, args: list[str]) -> render.Rendered:
    if len(args) != 2 or args[0] not in ("merge", "discard"):
        raise UsageError("%logician branch: use `branch merge ID` or `branch discard ID`")
    action, branch_id = args
    found = {b.id: b for b in derive_branches(ledger.entries)}
    if branch_id not in found:
        known = ", ".join(found) or "none"
        raise UsageError(f"%logician branch: no branch {branch_id!r} (branches: {known})")
    chosen = found[branch_id]
    if chosen.status != "open":
        raise UsageError(f"%logician branch: {branch_id} was already {chosen.status}")
    current = ledger.messages()
    if action == "discard":
        ledger.append(ProjectionItem, **branch_discard_fields(chosen, current), durable=True)
        return render.preformatted(f"Discarded branch {branch_id}; the conversation is unchanged.")
    if not chosen.messages:
        raise UsageError(f"%logician branch: {branch_id} dropped no messages; nothing to merge")
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in chosen.messages]
    metered = Metered(provider)
    try:
        summary = _run(summarize(metered, messages, focus="what the discarded branch found or did"))
    except CompactionFailed as exc:
        raise UsageError(f"%logician branch merge: no summary ({exc}); nothing changed") from None
    ledger.append(ProjectionItem, **branch_merge_fields(chosen, summary, current), durable=True)
    return render.preformatted(
        f"Merged a summary of branch {branch_id} into the conversation "
        f"({metered.spent()}):\n\n{summary}"
    )


def compact_now(
    ledger: Any, provider: Any, *, keep_recent_turns: int, focus: str | None
) -> render.Rendered:
    current = [MESSAGE_ADAPTER.validate_python(m) for m in ledger.messages()]
    metered = Metered(provider)
    try:
        new = _run(compact(metered, current, keep_recent_turns=keep_recent_turns, focus=focus))
    except CompactionFailed as exc:
        raise UsageError(f"%logician compact: {exc}; the conversation is unchanged") from None
    dumped = [MESSAGE_ADAPTER.dump_python(m, mode="json") for m in new]
    ledger.append(ProjectionItem, reason="compaction", messages=dumped,
                  note=f"on demand{': ' + focus if focus else ''}", durable=True)  # fmt: skip
    return render.preformatted(
        f"Compacted the conversation: {len(current)} message(s) -> {len(new)} "
        f"(the last {keep_recent_turns} turn(s) kept verbatim; the ledger keeps everything; "
        f"{metered.spent()})."
    )
