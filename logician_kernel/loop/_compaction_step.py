"""The harness's compaction step: before a model request, compact the conversation when the
policy says it is too large (a summary of the older turns, or, after too many, a reset to a
run checkpoint). Split out of `agent_harness.py`; one per harness, built from the harness's
`HarnessDeps` (its provider, tools and store) and compaction policy, never from the harness.

The summary is the model's (`summarizer.summariser` over the harness's provider); building
the request and the new projection is `compaction/`'s pure work.

Must never: lose the conversation. On failure it is kept exactly as it was and the request
goes ahead.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Sequence
from typing import Literal, Protocol

from logician_kernel.compaction import (
    CompactionFailed,
    build_run_checkpoint,
    compact,
    estimate_total,
    should_compact,
    should_reset,
)
from logician_kernel.events.events import CompactionFinished, CompactionStarted, HarnessEvent
from logician_kernel.policy.run_controller import RunController
from logician_kernel.providers import MeteredProvider
from logician_kernel.types.messages import Message, Usage

from .compaction_policy import CompactionPolicy
from .deps import HarnessDeps
from .summarizer import summariser
from .todo import TodoTool, render

logger = logging.getLogger("logician_kernel.loop")


class RunMessages(Protocol):
    """What the step reads and replaces of a run in flight, and charges a summary to."""

    messages: list[Message]
    prefix: int
    last_usage: Usage | None
    usage: Usage
    controller: RunController


class CompactionStep:
    """Compaction for one harness; counts the thread's compactions since its last checkpoint."""

    def __init__(self, deps: HarnessDeps, policy: CompactionPolicy | None) -> None:
        self.deps = deps
        self.policy = policy
        self.compactions = policy.compactions_so_far if policy is not None else 0

    async def maybe_compact(
        self, run: RunMessages, prompt: str
    ) -> AsyncGenerator[HarnessEvent, None]:
        """Compact the conversation if the policy says it is too large: a summary of the older
        turns, or (after too many compactions) a reset to a run checkpoint. On failure the
        conversation is kept exactly as it was and the request goes ahead."""
        policy = self.policy
        if policy is None or not policy.enabled:
            return
        history = run.messages[run.prefix :]
        before = estimate_total(history, reported=run.last_usage)
        if not _over_threshold(policy, before):
            return
        yield CompactionStarted(
            reason=f"the conversation is about {before} tokens, over "
            f"{policy.threshold_fraction:.0%} of the {policy.context_window}-token window"
        )
        kind: Literal["summary", "run_checkpoint"] = "summary"
        if should_reset(self.compactions, policy.max_compactions_before_checkpoint, True):
            replacement = self._checkpoint(history, prompt)
            kind = "run_checkpoint"
        else:
            try:
                # The summary is a model call made for this run: it counts against its budget.
                metered = MeteredProvider(self.deps.provider, lambda usage: _charge(run, usage))
                replacement = await compact(
                    summariser(metered),
                    history,
                    keep_recent_turns=policy.keep_recent_turns,
                )
            except CompactionFailed as exc:
                logger.warning("automatic compaction failed: %s", exc.reason)
                yield CompactionFinished(
                    result="failed", before=before, after=before, detail=exc.reason
                )
                return
            self.compactions += 1
            still_over = _over_threshold(policy, estimate_total(replacement))
            if should_reset(self.compactions, policy.max_compactions_before_checkpoint, still_over):
                replacement = self._checkpoint(history, prompt)
                kind = "run_checkpoint"
        if kind == "run_checkpoint":
            self.compactions = 0
        self._replace(run, replacement, "run-checkpoint" if kind == "run_checkpoint" else "summary")
        yield CompactionFinished(result=kind, before=before, after=estimate_total(replacement))

    def _checkpoint(self, history: Sequence[Message], prompt: str) -> list[Message]:
        """The run-checkpoint reset of `history`; the objective is this run's prompt."""
        return build_run_checkpoint(history, task_state=self._task_state(), objective=prompt)

    def _task_state(self) -> str | None:
        for tool in self.deps.tools.values():
            if isinstance(tool, TodoTool):
                snapshot = tool.capability.snapshot()
                return render(snapshot) if snapshot.items else None
        return None

    def _replace(self, run: RunMessages, messages: list[Message], note: str) -> None:
        """Make `messages` the conversation (after the system prompt), durably first."""
        replace_messages = getattr(self.deps.store, "replace_messages", None)
        if replace_messages is not None:
            replace_messages(list(messages), "compaction", note)
        del run.messages[run.prefix :]
        run.messages.extend(messages)
        run.last_usage = None


def _charge(run: RunMessages, usage: Usage) -> None:
    run.usage = run.usage + usage
    run.controller.record_usage(usage)


def _over_threshold(policy: CompactionPolicy, tokens: int) -> bool:
    return should_compact(tokens, policy.context_window, policy.threshold_fraction)
