"""`%%logician PROMPT`: one agent run inside the running cell - its presentation.

The run itself is the core's (`agent.AgentSession`: it builds and finishes runs on its worker
loop); this module stays on the kernel's main thread, where IPython and the cell's output live.
It consumes the run's queue: events are rendered with coalesced updates (at most
`ui.coalesce_hz` per second), approvals become a card or a stdin prompt, `python` tool calls run
here in the notebook's namespace (`python_tool`), and a kernel interrupt (KeyboardInterrupt on
the main thread) cancels the run promptly.

Must never: render from the worker thread, or persist streaming deltas (the harness appends
messages to the ledger at turn and tool boundaries only).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.error import UsageError
from IPython.display import display

from ..agent import AgentError, AgentSession, RunOptions
from ..agent.approvals import Answer, ApprovalEvent
from ..agent.notebook_context import ContextBlock
from ..agent.policy import ApprovalItem
from ..agent.run import AgentRun, PythonRequest, RunItem
from ..agent.ui import mcp_report
from ..types.approvals import ApprovalChannel, ApprovalChoice
from .agent_run import RunView, is_fragment, tasks_of
from .answer import answer_output, is_terminal, widgets_render
from .comm import LogicianComms
from .python_tool import PythonCalls
from .widgets import ApprovalCard, StatusWidget

logger = logging.getLogger(__name__)

_VARIABLE = re.compile(
    r"\{\{(?P<literal>[A-Za-z_][A-Za-z0-9_]*)\}\}|(?<!\{)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}"
)
MAX_INTERPOLATED = 2_000


def interpolate(prompt: str, namespace: dict[str, Any]) -> str:
    """`{name}` becomes the repr of the notebook variable `name`, bounded; `{{name}}` is the
    literal `{name}`. Every other brace is left as typed: pasted JSON keeps its `}}`."""

    def value(match: re.Match[str]) -> str:
        if match["literal"] is not None:
            return "{" + match["literal"] + "}"
        name = match["name"]
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

    return _VARIABLE.sub(value, prompt)


STDIN_CHOICES: dict[str, ApprovalChoice] = {
    "o": "allow_once",
    "s": "allow_session",
    "a": "always_allow",
    "d": "deny",
    "x": "deny_and_stop",
}
"""The stdin prompt's letters, one per approval choice."""


class _ViewedRun:
    """A run as this cell shows it: the core's run, its view and its status widget."""

    def __init__(self, run: AgentRun, view: RunView, status: StatusWidget | None) -> None:
        self.run = run
        self.view = view
        self.status = status
        self.seen = -1


class AgentCell:
    """Runs prompts for one kernel through its `AgentSession`."""

    def __init__(self, shell: Any, agent: AgentSession, comms: LogicianComms) -> None:
        self.shell = shell
        self.agent = agent
        self.broker = agent.broker
        self.comms = comms
        self.frontend_can_answer = False
        """Whether the cell running now may ask on stdin (its execute request allowed it)."""
        self._cards: dict[str, ApprovalCard] = {}
        self._python = PythonCalls(shell)
        self._status: StatusWidget | None = None
        """The status widget shown last: it follows the agent's phase after its run, too."""
        self.context: Callable[[], ContextBlock | None] | None = None
        """Builds the notebook context block a prompt's message opens with (None: none)."""
        self.broker.listen(self._resolved_elsewhere)
        agent.listeners.append(self._reported)

    # -- one run ----------------------------------------------------------------------------

    def run(self, prompt: str, *, options: RunOptions | None = None) -> None:
        """Run synchronously (the magic called from code). While it runs the kernel's loop
        is blocked, so widget clicks arrive only through a subshell; cells use `run_async`."""
        viewed = self._start(prompt, options or RunOptions())
        run = viewed.run
        while not run.done:
            try:
                try:
                    item = run.requests.get(timeout=viewed.view.wait())
                except queue.Empty:
                    viewed.view.flush()
                    continue
                self._handle(viewed, item)
            except KeyboardInterrupt:
                run.cancel()
        self._finish(viewed)

    async def run_async(self, prompt: str, *, options: RunOptions | None = None) -> None:
        """Run as an awaited cell: the kernel's event loop keeps turning, so comm messages (an
        approval click) are handled while the run waits - with or without subshells."""
        viewed = self._start(prompt, options or RunOptions(), notebook=True)
        run = viewed.run
        while not run.done:
            try:
                try:
                    item = run.requests.get_nowait()
                except queue.Empty:
                    viewed.view.flush()
                    await asyncio.sleep(0.005)
                    continue
                self._handle(viewed, item)
            except (KeyboardInterrupt, asyncio.CancelledError):
                run.cancel()  # ipykernel cancels an awaited cell on SIGINT
        self._finish(viewed)

    def _start(self, prompt: str, options: RunOptions, *, notebook: bool = False) -> _ViewedRun:
        """`notebook`: the cell is awaited, so the frontend's replies can arrive while the run
        waits for them; the notebook tools are offered then, if a frontend holds the notebook."""
        prompt = interpolate(prompt.strip(), self.shell.user_ns)
        settings = self.agent.settings
        bridge = self.comms.notebook
        block = self.context() if self.context is not None and prompt else None
        try:
            run = self.agent.start(
                prompt,
                options=options,
                python=True,
                can_ask=self.frontend_can_answer or self.comms.listening,
                notebook=bridge if notebook and bridge is not None and bridge.available else None,
                context=block.text if block is not None else "",
            )
        except AgentError as exc:
            raise UsageError(f"%%logician: {exc}") from None
        kernel = getattr(self.shell, "kernel", None)  # none in a terminal IPython
        terminal = kernel is None or is_terminal(
            kernel, can_read_stdin=self.frontend_can_answer, sidebar=self.comms.listening
        )
        view = RunView(
            hz=max(1, settings.ui.coalesce_hz),
            show=answer_output(settings.ui.answer, terminal=terminal),
            context_tokens=block.tokens if block is not None else 0,
            context_capped=block is not None and block.cap is not None,
        )
        status = None
        if settings.ui.status_widget and not terminal:  # a terminal has the outcome line
            status = StatusWidget(run.controller.budget.limits)
            status.show(final_text=not widgets_render(kernel))
            self._status = status
        return _ViewedRun(run, view, status)

    def _handle(self, viewed: _ViewedRun, item: RunItem) -> None:
        run, view = viewed.run, viewed.view
        if isinstance(item, ApprovalItem):
            view.end_text()  # the question starts on its own line, after the whole text
            self._show_card(item)
        elif isinstance(item, PythonRequest):
            view.flush(force=True)
            if not item.future.set_running_or_notify_cancel():
                return  # the run gave the call up before it started
            outcome = self._python.run(item)
            if outcome.interrupted:
                # Cancel first: the run stops before it can act on the result, and the call is
                # answered as interrupted when the run finishes.
                run.cancel()
            item.future.set_result(outcome.result)
        elif isinstance(item, BaseException):
            run.done = True
            if not isinstance(item, asyncio.CancelledError):
                view.flush(force=True)
                raise UsageError(f"%%logician: the run stopped unexpectedly: {item!r}")
        else:
            self.agent.take(run, item)
            self.comms.push_status(force=item.kind in ("run_started", "run_ended"))
            view.handle(item)
            if viewed.status is not None and (not is_fragment(item) or view.renders != viewed.seen):
                viewed.seen = view.renders  # status follows the coalesced rhythm of the text
                viewed.status.update(
                    self.agent.state,
                    cost_usd=run.controller.budget.cost_usd,
                    tasks=tasks_of(run.todo),
                )
                viewed.status.show_mcp(mcp_report.summary(self.agent.mcp.status()))

    def _reported(self, event: object) -> None:
        """The agent's work outside a run (a compaction on demand, a branch merge) began or
        ended: the sidebar and the last status widget show its phase now, while the cell that
        asked for it waits."""
        try:
            self.comms.push_status(force=True)
            if self._status is not None:
                self._status.update(self.agent.state)
        except Exception:  # noqa: BLE001 - a status view that cannot update must not fail the work
            logger.exception("showing the agent's phase failed")

    def _finish(self, viewed: _ViewedRun) -> None:
        viewed.view.flush(force=True)
        outcome = self.agent.finish(viewed.run)
        viewed.view.flush(force=True)
        if viewed.run.interrupted:
            raise KeyboardInterrupt
        if outcome is not None and outcome.status == "failed":
            raise UsageError(f"%%logician: the run failed: {outcome.detail}")

    # -- approvals --------------------------------------------------------------------------

    def _show_card(self, item: ApprovalItem) -> None:
        if self._approval_channel() == "stdin":
            self._ask_on_stdin(item)
            return
        request_id = item.pending.id

        def decide(choice: str, note: str) -> None:
            self.broker.resolve(request_id, choice, note, via="widget")

        card = ApprovalCard(item.request, on_decide=decide)
        self._cards[request_id] = card
        display(card)

    def _approval_channel(self) -> ApprovalChannel:
        """`widget` or `stdin`, by `ui.approvals`; `auto` looks for a widget-rendering frontend
        (ipywidgets' frontends open a `jupyter.widget.control` comm when they connect)."""
        setting = self.agent.settings.ui.approvals
        if setting != "auto":
            return setting
        if self.comms.listening:
            return "widget"  # a sidebar can answer; a stdin prompt would block it
        renders = widgets_render(getattr(self.shell, "kernel", None))  # no kernel: a terminal
        return "stdin" if not renders and self.frontend_can_answer else "widget"

    def _ask_on_stdin(self, item: ApprovalItem) -> None:
        """The fallback where widgets cannot render: an `input_request` in the frontend."""
        request = item.request
        print(f"Approve {request.tool}: {request.description}  ({request.reason})")
        if request.preview and request.preview_kind != "text":
            print("\n".join(request.preview.splitlines()[:40]))
        rule = request.suggested_rule
        options = (
            "[o]nce, [s]ession, "
            + (f"[a]lways ({rule}), " if rule else "")
            + "[d]eny, deny and sto[x]"
        )
        while True:
            try:
                with _interrupt_raises():
                    answer = input(f"{options}; a note may follow the letter: ").strip()
            except EOFError:
                answer = "d no answer on stdin"
            choice = STDIN_CHOICES.get(answer[:1].lower())
            if choice is not None and (choice != "always_allow" or rule):
                break
            print(f"Please answer with one of: {options}")
        self.broker.resolve(item.pending.id, choice, answer[1:].strip(), via="stdin")

    def _resolved_elsewhere(self, event: ApprovalEvent) -> None:
        """A decision from the sidebar or a comm client shows on the card too."""
        if not isinstance(event, Answer):
            return
        card = self._cards.pop(event.request_id, None)
        if card is not None and event.via != "widget":
            card.resolve(event.choice, event.note, via=event.via)


@contextmanager
def _interrupt_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt here. In an awaited cell ipykernel's handler only
    schedules a cancellation on the event loop, which a blocking `input()` never lets run:
    the stop button would not end a cell waiting on its approval prompt."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only (a subshell keeps its own handling)
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
