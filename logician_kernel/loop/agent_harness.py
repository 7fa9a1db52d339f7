"""The agent harness: one run of the agent for one notebook cell.

A run is intake (the cell's prompt) -> model call (streamed) -> tool execution -> hooks,
repeated until the model answers without tool calls or a stop condition holds. It reports
itself as a stream of `HarnessEvent`s (the provider's stream events wrapped in `ModelStreamed`,
never re-declared), and writes its durable facts through a `RunStore` at turn and tool
boundaries only. Everything it calls comes in one `HarnessDeps` bundle (provider, tools,
store, hooks, gate, controller, write audit). It owns no state between runs: the conversation
comes in as `history` and goes out through the store.

Must never: import Jupyter, `snapshots/` or `frames/` (the write audit is handed in), persist
a streaming delta, let a hook or a tool's exception break a run, or repeat a tool call on its
own.

Cancellation. The kernel runs a harness in its worker thread's event loop and cancels the
consuming task on interrupt. When that `asyncio.CancelledError` lands inside the run (it
does whenever the consumer is waiting for the next event, which is nearly always), the
in-flight model stream or tool calls are cancelled and closed, the generator yields one last
`RunEnded` with outcome `cancelled`, and the next `__anext__` re-raises the same
`CancelledError`, so the consuming task still ends cancelled. A consumer that stops
iterating after that `RunEnded` (or closes the generator) just closes it. If the
cancellation lands in the consumer's own code instead, no further event can be yielded:
closing the generator (`aclose`) still cancels in-flight work. `drive_run` packages this for
a synchronous event sink and guarantees the sink one `RunEnded` either way.

Interrupted tool calls keep their recorded intent without a result; the store's recovery
decides about them. The next run answers any call left unanswered at the end of `history`
with an error result before taking the new prompt, so the conversation stays well-formed.

Policy. A `RunController` (`policy/`) is consulted before every model request and every tool
call; a limit that holds ends the run `budget_exhausted` before the step that would cross it.
Without one, the harness builds one from `limits`. A `PermissionGate` decides every valid
call before its intent is recorded; a refused call gets an error result ("denied by ...")
and the run goes on (or stops, when the gate says so). Refused and denied calls ran nothing,
so they do not count against `max_tool_calls`. When the wall-time budget runs out while tools
run, they are cancelled, their results say so, and the run ends. When the model answers
without tool calls, the controller's acceptance check may send it back to work with a user
message saying why. Whenever a run stops mid-reply, the reply's remaining calls are answered
with an error result ("not run"), so the conversation stays well-formed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

from logician_kernel.compaction.tokens import CHARS_PER_TOKEN, estimate_tokens
from logician_kernel.durable.test_hooks import stop_inside_call
from logician_kernel.events.events import (
    HarnessEvent,
    ModelCallStarted,
    ModelResponded,
    ModelStreamed,
    RunEnded,
    RunStarted,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    TurnStarted,
)
from logician_kernel.policy.run_controller import RunController
from logician_kernel.providers import IncompleteStreamError, ProviderError
from logician_kernel.tools import Tool, ToolResult, bound_output
from logician_kernel.types.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    TextPart,
    ToolCall,
    Usage,
    UserMessage,
)
from logician_kernel.types.run import BudgetExhausted, RunBudgetLimits, RunOutcome, RunStopped

from ._compaction_step import CompactionStep
from ._conversation import answers_to_unanswered_calls, tool_result
from ._tool_calls import (
    Batch,
    Refused,
    denied,
    describe,
    hook_denied,
    interrupted_by_wall_time,
    not_run,
    plan,
)
from .compaction_policy import CompactionPolicy
from .deps import HarnessDeps
from .hooks import Hooks
from .prompt import DEFAULT_SYSTEM_PROMPT

logger = logging.getLogger("logician_kernel.loop")


@dataclass
class _Run:
    """The mutable bookkeeping of one run."""

    messages: list[Message]
    controller: RunController
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    tool_calls: int = 0
    response: ModelResponse | None = None
    stop: RunOutcome | None = None
    """Set when the run must end after the current step (a limit held, a gate stopped it)."""
    answered: set[str] = field(default_factory=set)
    """Ids of the current reply's calls that have their result message."""
    prefix: int = 0
    """How many leading messages are the system prompt (never compacted)."""
    usage_estimated: bool = False
    """Whether part of `usage` is an estimate (a reply cut off before its usage arrived)."""
    last_usage: Usage | None = None
    """Usage of the request that produced the last assistant message, while it is still the
    last one of the conversation as sent (cleared by a compaction)."""


class AgentHarness:
    """Runs the agent loop over the collaborators of one `HarnessDeps` bundle."""

    def __init__(
        self,
        deps: HarnessDeps,
        *,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        limits: RunBudgetLimits | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        compaction: CompactionPolicy | None = None,
        tool_choice: str | None = None,
        tool_choice_scope: Literal["first", "every"] = "first",
    ) -> None:
        """`deps` holds everything the harness calls: provider, tools, store, hooks, gate,
        controller, write audit (see `HarnessDeps`); the rest is how it runs. Without a
        controller in `deps`, one is built from `limits` for each run (`limits` is ignored
        when a controller is given). `compaction` makes the harness compact the conversation
        before a model request once it reaches the policy's threshold; without it (or
        disabled) it never compacts. `tool_choice` goes with the run's first model request,
        or with every one (`tool_choice_scope`)."""
        self.deps = deps
        self.provider = deps.provider
        self.hooks = deps.hooks or Hooks()
        self.tools = dict(deps.tools)
        """The tools offered to the model now: `deps.tools`, plus `deps.more_tools()`."""
        self.system_prompt = system_prompt
        self.limits = limits or RunBudgetLimits()
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.compaction = compaction
        self._compactor = CompactionStep(deps, compaction)
        self.tool_choice = tool_choice
        self.tool_choice_scope = tool_choice_scope
        self._specs = [tool.spec() for tool in self.tools.values()]

    async def run(
        self, prompt: str, history: Sequence[Message], *, context: str = ""
    ) -> AsyncGenerator[HarnessEvent, None]:
        """Run the agent on `prompt`, after `history` (the conversation so far, without the
        system prompt). `context` (the notebook context block, already bounded and masked)
        opens the prompt's user message, so later turns still read the prompt in the
        situation it was asked in. Yields events; always ends with exactly one `RunEnded`,
        then re-raises a cancellation (see the module docstring)."""
        system = [SystemMessage(content=self.system_prompt)] if self.system_prompt else []
        controller = self.deps.controller or _default_controller(self.limits, self.provider.model)
        controller.start()
        run = _Run(messages=[*system, *history], controller=controller, prefix=len(system))
        window = self.compaction.context_window if self.compaction is not None else 0
        yield RunStarted(prompt=prompt, model=self.provider.model, context_window=window)
        cancelled: asyncio.CancelledError | None = None
        try:
            await self._hook("on_run_start", prompt, self.provider.model)
            for message in answers_to_unanswered_calls(history):
                self._append(run, message)
            self._append(run, UserMessage(content=[TextPart(text=context + prompt)]))
            while True:
                try:
                    controller.check_before_request()
                except BudgetExhausted as exc:
                    outcome = exc.outcome
                    break
                async with aclosing(self._compactor.maybe_compact(run, prompt)) as events:
                    async for event in events:
                        yield event
                controller.record_request()
                run.turns += 1
                async with aclosing(self._turn(run, run.turns)) as events:
                    async for event in events:
                        yield event
                if run.stop is not None:
                    outcome = run.stop
                    break
                if run.response is None or not run.response.message.tool_calls:
                    note = await controller.on_final_answer(self.deps.ctx)
                    if note is not None:
                        self._append(run, UserMessage(content=[TextPart(text=note)]))
                        continue
                    outcome = _completed(run.response, controller.completion_detail())
                    break
        except RunStopped as exc:
            outcome = exc.outcome
        except asyncio.CancelledError as exc:
            cancelled = exc
            outcome = RunOutcome(status="cancelled", detail="interrupted by the user")
        except ProviderError as exc:
            outcome = RunOutcome(status="failed", detail=str(exc))
        except Exception as exc:  # a bug ends this run as failed (logged), never the kernel
            logger.exception("agent run failed")
            outcome = RunOutcome(status="failed", detail=f"{type(exc).__name__}: {exc}")
        await self._run_end_hook(outcome, run)
        yield RunEnded(
            outcome=outcome,
            usage=run.usage,
            turns=run.turns,
            tool_calls=run.tool_calls,
            usage_estimated=run.usage_estimated,
        )
        if cancelled is not None:
            raise cancelled

    # -- one turn ---------------------------------------------------------------------------

    async def _turn(self, run: _Run, turn: int) -> AsyncGenerator[HarnessEvent, None]:
        yield TurnStarted(turn=turn)
        self._refresh_tools()
        run.response = None
        request = ModelRequest(
            messages=list(run.messages),
            tools=self._specs,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            # Forcing a call on every request would never let the model answer: by default
            # only the first request of the run carries it.
            tool_choice=self.tool_choice
            if turn == 1 or self.tool_choice_scope == "every"
            else None,
        )
        await self._hook("on_before_model_call", request, turn)
        yield ModelCallStarted(turn=turn)
        response: ModelResponse | None = None
        streamed = -1  # characters the model produced before any response; -1: none arrived
        try:
            async with aclosing(self.provider.stream(request)) as stream:
                async for provider_event in stream:
                    if isinstance(provider_event, ModelResponse):
                        response = provider_event
                        continue
                    streamed = max(streamed, 0) + _streamed_chars(provider_event)
                    yield ModelStreamed(event=provider_event)
        except BaseException as exc:
            # A reply cut off (an interrupt, a broken stream) was paid for all the same, but
            # the server never reported it: count an estimate, and say it is one.
            if response is None and (streamed >= 0 or isinstance(exc, asyncio.CancelledError)):
                spent = Usage(input_tokens=_estimate(request), output_tokens=_estimate(streamed))
                run.usage = run.usage + spent
                run.usage_estimated = True
                run.controller.record_usage(spent)
            raise
        if response is None:
            raise IncompleteStreamError(
                f"{self.provider.model}: the stream ended without a response",
                model=self.provider.model,
            )
        run.response = response
        run.last_usage = response.usage
        run.usage = run.usage + response.usage
        run.controller.record_usage(response.usage)
        self._append(run, response.message)
        yield ModelResponded(
            message=response.message,
            usage=response.usage,
            stop_reason=response.stop_reason,
            usage_estimated=response.usage_estimated,
        )
        await self._hook("on_after_model_call", response, turn)
        calls = response.message.tool_calls
        run.tool_calls += len(calls)
        run.answered = set()
        for step in plan(calls, self.tools):
            if run.stop is not None:
                break
            if isinstance(step, Refused):
                yield self._refuse(run, step.call, step.reason)
            else:
                async with aclosing(self._execute(run, step)) as events:
                    async for event in events:
                        yield event
        if run.stop is not None:
            for call in calls:
                if call.id not in run.answered:
                    yield self._refuse(run, call, not_run(call, run.stop))
        await self._hook("on_turn_end", turn, response.message)
        yield TurnEnded(turn=turn)

    def _refresh_tools(self) -> None:
        """Offer the tools that are available now (an MCP server may have become ready)."""
        more_tools = self.deps.more_tools
        if more_tools is None:
            return
        try:
            extra = more_tools()
        except Exception:  # a broken MCP listing must not stop the run
            logger.exception("listing the extra tools failed; offering ours only")
            extra = {}
        self.tools = dict(self.deps.tools)
        for name, tool in extra.items():
            self.tools.setdefault(name, tool)
        self._specs = [tool.spec() for tool in self.tools.values()]

    # -- tool calls -------------------------------------------------------------------------

    async def _execute(self, run: _Run, batch: Batch) -> AsyncGenerator[HarnessEvent, None]:
        """Run a batch: each call admitted (budget, then gate) in order; then the admitted
        calls' intents, then the calls (concurrently if several), then each result committed
        in call order as soon as it and all before it are done. Tools still running when the
        wall-time budget runs out are cancelled."""
        admitted: list[tuple[ToolCall, Tool]] = []
        for call, tool in batch.calls:
            try:
                run.controller.check_before_tool_call()
            except BudgetExhausted as exc:
                run.stop = exc.outcome
                break
            if self.deps.gate is not None:
                verdict = await self.deps.gate.check(call, tool)
                if not verdict.allowed:
                    yield self._refuse(run, call, denied(call, verdict.note))
                    if verdict.outcome is not None:
                        run.stop = verdict.outcome
                        break
                    continue
            refused = await self._check_tool(call)
            if refused is not None:
                yield self._refuse(run, call, hook_denied(call, refused))
                continue
            run.controller.record_tool_call()
            admitted.append((call, tool))
        for call, tool in admitted:
            self.deps.store.record_intent(call, tool.recovery)
            yield ToolStarted(call=call, description=describe(call, tool))
            await self._hook("on_before_tool", call)
        if len(admitted) == 1 and run.controller.remaining_wall_seconds() is None:
            # Awaited in this task, not a new one: the tool starts at once, so an interrupt
            # that lands now reaches the tool itself rather than a task that never ran.
            call, tool = admitted[0]
            result = await self._invoke(call, tool)
            yield self._commit(run, call, result)
            await self._hook("on_after_tool", call, result)
            return
        tasks = [asyncio.ensure_future(self._invoke(call, tool)) for call, tool in admitted]
        try:
            for (call, _), task in zip(admitted, tasks, strict=True):
                finished = await self._within_wall_time(run, task)
                if finished is None:
                    exhausted = run.controller.wall_time_exhausted()
                    run.stop = exhausted.outcome
                    finished = ToolResult(
                        content=interrupted_by_wall_time(exhausted), is_error=True
                    )
                yield self._commit(run, call, finished)
                await self._hook("on_after_tool", call, finished)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    @staticmethod
    async def _within_wall_time(run: _Run, task: asyncio.Future[ToolResult]) -> ToolResult | None:
        """The task's result, or None (the task cancelled and settled) if the run's wall time
        runs out first."""
        remaining = run.controller.remaining_wall_seconds()
        if remaining is None:
            return await task
        await asyncio.wait({task}, timeout=remaining)
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return None

    async def _invoke(self, call: ToolCall, tool: Tool) -> ToolResult:
        try:
            # Whatever the process writes or spawns inside the call is attributed to it.
            with self.deps.audit.tool_call(call.id, call.name):
                ctx = dataclasses.replace(self.deps.ctx, call_id=call.id)
                result = await tool.run(call.arguments, ctx)
                stop_inside_call(call.name)  # tests only: the effect happened, no result kept
                return result
        except Exception as exc:
            # The contract says tools never raise; a bug in one must not end the run.
            logger.exception("tool %s raised", call.name)
            return ToolResult(
                content=f"Error: the {call.name} tool failed unexpectedly: "
                f"{type(exc).__name__}: {exc}",
                is_error=True,
            )

    def _commit(self, run: _Run, call: ToolCall, result: ToolResult) -> ToolFinished:
        self.deps.store.record_result(call.id, result)
        text = bound_output(result.content, self.deps.ctx.max_output_bytes)
        self._append(run, tool_result(call.id, text, is_error=result.is_error))
        self.deps.store.record_commit(call.id)
        run.answered.add(call.id)
        return ToolFinished(
            call_id=call.id,
            name=call.name,
            result_display=result.display or text,
            is_error=result.is_error,
        )

    def _refuse(self, run: _Run, call: ToolCall, reason: str) -> ToolFinished:
        """Answer a call that does not run (refused, denied, or cut off by a stop)."""
        self._append(run, tool_result(call.id, reason, is_error=True))
        run.answered.add(call.id)
        return ToolFinished(call_id=call.id, name=call.name, result_display=reason, is_error=True)

    @property
    def compactions(self) -> int:
        """Compactions of the thread since the last run checkpoint (this harness's runs
        included); reset to 0 by a run checkpoint."""
        return self._compactor.compactions

    # -- plumbing ---------------------------------------------------------------------------

    def _append(self, run: _Run, message: Message) -> None:
        self.deps.store.append_message(message)
        run.messages.append(message)

    async def _check_tool(self, call: ToolCall) -> str | None:
        try:
            return await self.hooks.check_tool(call)
        except Exception:  # hooks must not raise; one that does is logged
            logger.exception("hook check_tool raised; the call runs")
            return None

    async def _run_end_hook(self, outcome: RunOutcome, run: _Run) -> None:
        try:
            await self._hook("on_run_end", outcome, run.turns, run.tool_calls)
        except asyncio.CancelledError:
            pass  # a second interrupt while the run_end hooks run: the run still ends

    async def _hook(self, name: str, *args: Any) -> None:
        try:
            await getattr(self.hooks, name)(*args)
        except Exception:  # hooks only observe here: logged, never the run's end
            logger.exception("hook %s raised; ignored", name)


def _completed(response: ModelResponse | None, extra: str | None = None) -> RunOutcome:
    reason = response.stop_reason if response is not None else "end_turn"
    if reason in ("end_turn", "stop_sequence"):
        detail = "the model answered"
    else:
        detail = f"the model stopped: {reason}"
    return RunOutcome(status="completed", detail=f"{detail}; {extra}" if extra else detail)


def _default_controller(limits: RunBudgetLimits, model: str) -> RunController:
    return RunController.unlimited(limits, model=model)


def _streamed_chars(event: object) -> int:
    """Characters of model output in one provider event (text, reasoning, arguments)."""
    for name in ("text", "delta"):
        value = getattr(event, name, None)
        if isinstance(value, str):
            return len(value)
    return 0


def _estimate(sent: ModelRequest | int) -> int:
    """Tokens by the compaction layer's rule (~4 characters a token): of the request as sent,
    messages and tool schemas, or of `sent` characters of output."""
    if isinstance(sent, int):
        return -(-max(sent, 0) // CHARS_PER_TOKEN)
    schemas = sum(len(json.dumps(t.parameters)) + len(t.description) for t in sent.tools)
    return sum(estimate_tokens(m) for m in sent.messages) + -(-schemas // CHARS_PER_TOKEN)
