"""`%%logician PROMPT`: one agent run inside the running cell.

The harness (pure asyncio, Jupyter-free) runs on its own event loop in a worker thread; this
module stays on the kernel's main thread, where IPython and the cell's output live. Events come
back through a queue and are rendered with coalesced updates (at most `ui.coalesce_hz` per
second), `python` tool calls are executed here in the notebook's namespace, and a kernel
interrupt (KeyboardInterrupt on the main thread) cancels the run's task promptly.

Must never: render from the worker thread, or persist streaming deltas (the harness appends
messages to the ledger at turn and tool boundaries only).
"""

from __future__ import annotations

import asyncio
import queue
import re
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.display import display

from ..events.runtime_state import RuntimeState, fold
from ..loop.agent_harness import AgentHarness
from ..loop.compaction_policy import CompactionPolicy
from ..loop.todo import TodoCapability
from ..providers import resolve_context_window
from ..runtime import LogicianRuntime
from ..session.run_store import LedgerRunStore, resolve_dangling_calls
from ..session.thread_ledger import ProjectionItem, RunEnd
from ..tools import ToolContext, ToolResult, default_tools
from ..types import MESSAGE_ADAPTER
from .agent_policy import ApprovalItem, RunOptions, build_controller, build_gate
from .agent_run import AgentRun, RunView, tasks_of
from .answer import answer_output, is_terminal, widgets_render
from .approvals import ApprovalBroker
from .comm import LogicianComms
from .python_capture import bounded_capture
from .widgets import ApprovalCard, ApprovalRequestView, StatusWidget

_VARIABLE = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
MAX_INTERPOLATED = 2_000
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class _PythonRequest:
    code: str
    future: Future[ToolResult]


def interpolate(prompt: str, namespace: dict[str, Any]) -> str:
    """`{name}` becomes the repr of the notebook variable `name`, bounded; `{{` stays literal."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in namespace:
            raise UsageError(
                f"%%logician: the prompt refers to {{{name}}} but the notebook has no variable "
                f"{name!r} (write {{{{{name}}}}} for a literal brace)"
            )
        text = repr(namespace[name])
        if len(text) > MAX_INTERPOLATED:
            cut = len(text) - MAX_INTERPOLATED
            text = text[:MAX_INTERPOLATED] + f"... [{cut} more characters of {name} not shown]"
        return text

    return _VARIABLE.sub(value, prompt).replace("{{", "{").replace("}}", "}")


def _compaction_policy(settings: Any, ledger: Any) -> CompactionPolicy | None:
    """The thread's compaction settings, with how many summaries it has had since its last
    run checkpoint (a new harness is built per cell; the count lives in the ledger)."""
    section = settings.compaction
    if not section.enabled:
        return None
    so_far = 0
    for entry in ledger.entries:
        if isinstance(entry, ProjectionItem) and entry.reason == "compaction":
            so_far = 0 if "run-checkpoint" in entry.note else so_far + 1
    return CompactionPolicy(
        context_window=resolve_context_window(settings.model).tokens,
        threshold_fraction=section.threshold_fraction,
        keep_recent_turns=section.keep_recent_turns,
        max_compactions_before_checkpoint=section.max_compactions_before_checkpoint,
        compactions_so_far=so_far,
    )


_STDIN_CHOICES = {"o": "allow_once", "s": "allow_session", "a": "always_allow", "d": "deny"}


class AgentCell:
    """Runs prompts for one kernel; holds the provider across cells (replays keep their place)."""

    def __init__(
        self, shell: Any, runtime: LogicianRuntime, broker: ApprovalBroker, comms: LogicianComms
    ) -> None:
        self.shell = shell
        self.runtime = runtime
        self.broker = broker
        self.comms = comms
        self._cards: dict[str, ApprovalCard] = {}
        broker.listen(self._resolved_elsewhere)
        self._provider: Any = None
        self.state = RuntimeState()
        """The ephemeral status of the agent, folded from its events (never persisted)."""
        self.budget: Any = None
        """The current (or last) run's `RunBudget`: what status reports of cost and limits."""

    def provider(self) -> Any:
        if self._provider is None:
            from ..providers import create_provider

            settings = self.runtime.config.settings.model
            try:
                provider = create_provider(
                    settings, env=self.runtime.env, root=self.runtime.config.workspace
                )
            except (ValueError, OSError) as exc:
                raise UsageError(f"%%logician: cannot set up the model provider: {exc}") from None
            self._provider = provider  # wraps itself in a recorder when model.record_file is set
        return self._provider

    def forget_provider(self) -> None:
        """After a configuration change or a clear: the next run builds (or rewinds) it."""
        if self._provider is not None and hasattr(self._provider, "reset"):
            self._provider.reset()
        else:
            self._provider = None

    # -- one run ----------------------------------------------------------------------------

    def run(self, prompt: str, *, options: RunOptions | None = None) -> None:
        """Run synchronously (the magic called from code). While it runs the kernel's loop
        is blocked, so widget clicks arrive only through a subshell; cells use `run_async`."""
        run = self._start(prompt, options or RunOptions())
        while not run.done:
            try:
                try:
                    item = run.requests.get(timeout=run.view.wait())
                except queue.Empty:
                    run.view.flush()
                    continue
                self._handle(run, item)
            except KeyboardInterrupt:
                run.cancel()
        self._finish(run)

    async def run_async(self, prompt: str, *, options: RunOptions | None = None) -> None:
        """Run as an awaited cell: the kernel's event loop keeps turning, so comm messages (an
        approval click) are handled while the run waits - with or without subshells."""
        run = self._start(prompt, options or RunOptions())
        while not run.done:
            try:
                try:
                    item = run.requests.get_nowait()
                except queue.Empty:
                    run.view.flush()
                    await asyncio.sleep(0.005)
                    continue
                self._handle(run, item)
            except (KeyboardInterrupt, asyncio.CancelledError):
                run.cancel()  # ipykernel cancels an awaited cell on SIGINT
        self._finish(run)

    def _start(self, prompt: str, options: RunOptions) -> AgentRun:
        runtime = self.runtime
        checkpoints = runtime.checkpoints
        ledger = runtime.session.ledger
        if ledger is None:
            raise UsageError(
                "%%logician: the agent needs the thread ledger, and frames are off for this "
                "session (see the first cell's output)"
            )
        prompt = interpolate(prompt.strip(), self.shell.user_ns)
        if not prompt:
            raise UsageError("%%logician: the prompt is empty")
        settings = runtime.config.settings
        history = [MESSAGE_ADAPTER.validate_python(m) for m in ledger.messages()]
        key = runtime.config.api_key()
        secrets = (key.get_secret_value(),) if key else ()
        frame = checkpoints.current_frame
        store = LedgerRunStore(ledger, frame, secrets=secrets)
        requests: queue.Queue[Any] = queue.Queue()

        async def run_python(code: str) -> ToolResult:
            future: Future[ToolResult] = Future()
            requests.put(_PythonRequest(code, future))
            return await asyncio.wrap_future(future)

        ctx = ToolContext(
            workspace=runtime.config.workspace,
            capture=checkpoints.capture,
            run_python=run_python,
        )
        try:
            controller = build_controller(runtime, options)
            gate = build_gate(
                runtime, options, broker=self.broker, requests=requests, frame=frame,
                headless=not (runtime.frontend_can_answer or self.comms.listening),
                secrets=secrets,
            )  # fmt: skip
        except ValueError as exc:
            raise UsageError(f"%%logician: {exc}") from None
        tools = default_tools()
        todo = TodoCapability()
        todo.restore(history)
        todo_tool = todo.tool()
        tools[todo_tool.name] = todo_tool
        harness = AgentHarness(
            self.provider(),
            tools,
            ctx,
            store,
            controller=controller,
            gate=gate,
            compaction=_compaction_policy(settings, ledger),
            max_tokens=settings.model.max_response_tokens,
            temperature=settings.model.temperature,
        )
        terminal = is_terminal(self.shell.kernel, can_read_stdin=runtime.frontend_can_answer,
                               sidebar=self.comms.listening)  # fmt: skip
        view = RunView(hz=max(1, settings.ui.coalesce_hz),
                       show=answer_output(settings.ui.answer, terminal=terminal))  # fmt: skip
        run = AgentRun(requests=requests, view=view)
        run.controller, run.todo = controller, todo
        if settings.ui.status_widget and not terminal:  # a terminal has the outcome line
            run.status = StatusWidget(controller.budget.limits)
            run.status.show(final_text=not widgets_render(self.shell.kernel))
        run.start(harness.run(prompt, history))
        return run

    def _handle(self, run: AgentRun, item: Any) -> None:
        if isinstance(item, ApprovalItem):
            run.view.end_text()  # the question starts on its own line, after the whole text
            self._show_card(item)
        elif isinstance(item, _PythonRequest):
            run.view.flush(force=True)
            item.future.set_result(self._run_python(item.code))
        elif isinstance(item, BaseException):
            run.done = True
            if not isinstance(item, asyncio.CancelledError):
                run.view.flush(force=True)
                raise UsageError(f"%%logician: the run stopped unexpectedly: {item!r}")
        else:
            self.state = fold(self.state, item)
            self.budget = run.controller.budget
            self.comms.push_status(force=item.kind in ("run_started", "run_ended"))
            run.view.handle(item)
            if item.kind == "run_ended":
                run.outcome = item.outcome
                run.done = True
            if run.status is not None and (
                item.kind not in ("text_delta", "reasoning_delta") or run.view.renders != run.seen
            ):
                run.seen = run.view.renders  # status follows the coalesced rhythm of the text
                budget = run.controller.budget
                run.status.update(self.state, cost_usd=budget.cost_usd, tasks=tasks_of(run.todo))

    def _finish(self, run: AgentRun) -> None:
        run.join()
        run.view.flush(force=True)
        ledger = self.runtime.session.ledger
        if ledger is not None and run.outcome is not None:
            ledger.append(RunEnd, frame=self.runtime.checkpoints.current_frame,
                          status=run.outcome.status, input_tokens=self.state.input_tokens,
                          output_tokens=self.state.output_tokens,
                          cost_usd=run.controller.budget.cost_usd or 0.0)  # fmt: skip
        if run.interrupted:
            # Calls cut off by the interrupt are answered now, so the conversation stays
            # well-formed and nothing waits for the next restart to be settled.
            ledger = self.runtime.session.ledger
            assert ledger is not None
            resolve_dangling_calls(ledger, interrupted=True)
            raise KeyboardInterrupt
        if (
            run.outcome is not None
            and run.outcome.status == "completed"
            and run.controller.accepted
        ):
            # The acceptance check passed: the conversation up to here is a committed result.
            self.runtime.commit_run()
        if run.outcome is not None and run.outcome.status == "failed":
            raise UsageError(f"%%logician: the run failed: {run.outcome.detail}")

    def _show_card(self, item: ApprovalItem) -> None:
        if self._approval_channel() == "stdin":
            self._ask_on_stdin(item)
            return
        payload = item.pending.payload
        request_id = item.pending.id
        view = ApprovalRequestView(
            id=request_id,
            tool=payload["tool"],
            description=payload["description"],
            preview=payload["preview"],
            preview_kind=payload["preview_kind"],
            suggested_rule=payload["suggested_rule"],
            reason=payload["reason"],
        )

        def decide(choice: str, note: str) -> None:
            self.broker.resolve(request_id, choice, note, via="widget")

        card = ApprovalCard(view, on_decide=decide)
        self._cards[request_id] = card
        display(card)

    def _approval_channel(self) -> str:
        """`widget` or `stdin`, by `ui.approvals`; `auto` looks for a widget-rendering frontend
        (ipywidgets' frontends open a `jupyter.widget.control` comm when they connect)."""
        setting = self.runtime.config.settings.ui.approvals
        if setting != "auto":
            return setting
        if self.comms.listening:
            return "widget"  # a sidebar can answer; a stdin prompt would block it
        manager = getattr(self.shell.kernel, "comm_manager", None)
        comms = getattr(manager, "comms", {}) if manager is not None else {}
        renders = any(getattr(c, "target_name", "") == "jupyter.widget.control"
                      for c in comms.values())  # fmt: skip
        return "stdin" if not renders and self.runtime.frontend_can_answer else "widget"

    def _ask_on_stdin(self, item: ApprovalItem) -> None:
        """The fallback where widgets cannot render: an `input_request` in the frontend."""
        payload = item.pending.payload
        print(f"Approve {payload['tool']}: {payload['description']}  ({payload['reason']})")
        if payload["preview"] and payload["preview_kind"] != "text":
            print("\n".join(payload["preview"].splitlines()[:40]))
        rule = payload["suggested_rule"]
        options = "[o]nce, [s]ession, " + (f"[a]lways ({rule}), " if rule else "") + "[d]eny"
        while True:
            try:
                answer = input(f"{options}; a note may follow the letter: ").strip()
            except EOFError:
                answer = "d no answer on stdin"
            choice = _STDIN_CHOICES.get(answer[:1].lower())
            if choice is not None and (choice != "always_allow" or rule):
                break
            print(f"Please answer with one of: {options}")
        self.broker.resolve(item.pending.id, choice, answer[1:].strip(), via="stdin")

    def _resolved_elsewhere(self, event: str, payload: dict[str, Any]) -> None:
        """A decision from the sidebar or a comm client shows on the card too."""
        if event != "resolved":
            return
        card = self._cards.pop(payload["request_id"], None)
        if card is not None and payload.get("via") != "widget":
            card.resolve(payload["choice"], payload.get("note", ""), via=payload.get("via", ""))

    def _run_python(self, code: str) -> ToolResult:
        """A `python` tool call: the user's namespace, output shown in the cell."""
        with bounded_capture() as captured:  # a flood of prints costs the bound, not memory
            result = self.shell.run_cell(code, store_history=False)
        captured.show()
        parts = [captured.stdout, captured.stderr]
        parts += [o.data.get("text/plain", "") for o in captured.outputs]
        if result.result is not None:
            parts.append(repr(result.result))
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            parts.append(f"{type(error).__name__}: {error}")
        text = _ANSI.sub("", "\n".join(p for p in parts if p)).strip()
        first = code.strip().splitlines()[0][:60] if code.strip() else ""
        return ToolResult(
            content=text or "(no output)",
            is_error=error is not None,
            display=f"python: {first}" + (" (error)" if error is not None else ""),
        )
