"""One agent run in flight: the harness on its worker loop, a queue back to the consumer.

The consumer (the kernel's main thread, or `AgentSession.run` in a script) takes items from
`requests`: harness events, approval requests (`ApprovalItem`), `python` tool calls that must
run where the user's namespace lives (`PythonRequest`), or the exception that ended the
worker. `build_harness` makes the run's harness from its `HarnessDeps`. Nothing here renders
or decides policy.
"""

from __future__ import annotations

import asyncio
import logging
import queue
from collections.abc import AsyncGenerator, Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial

from ..config import LogicianSettings
from ..events.events import HarnessEvent
from ..events.runtime_state import RuntimeState, fold
from ..frames.call_watch import watch as watch_call
from ..ledger.thread_ledger import ThreadLedger
from ..loop.agent_harness import AgentHarness
from ..loop.deps import HarnessDeps
from ..loop.todo import TodoCapability
from ..policy import RunController
from ..tools import NotebookAccess, ToolContext, ToolResult
from ..types.run import RunOutcome
from ..workspace import Workspace
from ._loop import WorkerLoop
from .model_calls import checked_tool_choice
from .policy import ApprovalItem, compaction_policy, current_directory


@dataclass
class PythonRequest:
    """A `python` tool call for the consumer to run in the user's namespace."""

    code: str
    """The code to run."""
    future: Future[ToolResult]
    """Resolved with the result; cancelled when the run gave the call up before it started."""
    timeout: float
    """Seconds the code may run (`tools.python_timeout_seconds`)."""
    stop: Callable[[str], None] | None = None
    """Set by the consumer while the code runs: stops it (from any thread)."""


RunItem = HarnessEvent | ApprovalItem | PythonRequest | BaseException
"""What the consumer of a run takes from its queue."""


class AgentRun:
    """One run: the harness on a worker thread's own loop (see `_loop`), a queue back."""

    def __init__(
        self,
        *,
        requests: queue.Queue[RunItem],
        controller: RunController,
        todo: TodoCapability,
        frame: int | None,
    ) -> None:
        self.requests = requests
        self.controller = controller
        self.todo = todo
        self.frame = frame
        """The frame the run belongs to (None when frames are off)."""
        self.done = False
        self.interrupted = False
        self.outcome: RunOutcome | None = None
        self.state = RuntimeState()
        """The ephemeral status folded from this run's events."""
        self.text = ""
        """The answer text of the run's last turn (what a script reads as the result)."""
        self._worker: WorkerLoop[None] | None = None

    def start(
        self,
        events: AsyncGenerator[HarnessEvent, None],
        *,
        release: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Drive `events` on a worker loop; `release` (the provider's `aclose`) is awaited on
        that loop however the run ends, so nothing of it outlives the loop."""

        async def drive() -> None:
            try:
                async for event in events:
                    self.requests.put(event)
            finally:
                if release is not None:
                    await _release(release)

        def ended(_result: object, error: BaseException | None) -> None:
            if error is not None:
                self.requests.put(error)

        self._worker = WorkerLoop(drive(), name="logician-agent", done=ended).start()

    def take(self, event: HarnessEvent, state: RuntimeState) -> RuntimeState:
        """Fold `event` into `state` (the session's status) and this run's own bookkeeping."""
        state = fold(state, event)
        self.state = state
        if event.kind == "model_responded":
            self.text = event.message.text
        elif event.kind == "run_ended":
            self.outcome = event.outcome
            self.done = True
        return state

    def cancel(self) -> None:
        """A kernel interrupt: cancel the run's task; the run still ends with `run_ended`."""
        self.interrupted = True
        if self._worker is not None:
            self._worker.cancel()

    def join(self) -> None:
        if self._worker is not None:
            self._worker.join(timeout=10)


async def _release(release: Callable[[], Awaitable[None]]) -> None:
    # Shielded: an interrupt has cancelled the task, and the client must still be closed.
    try:
        await asyncio.shield(release())
    except Exception as exc:  # noqa: BLE001 - closing a client must not replace the run's end
        logging.getLogger(__name__).debug("releasing the run's provider failed: %r", exc)


def python_runner(
    items: queue.Queue[RunItem], timeout: float
) -> Callable[[str], Awaitable[ToolResult]]:
    """The `python` tool's `run_python`: the call goes to the run's consumer (which owns the
    user's namespace); if the run gives the call up (an interrupt, the wall-time budget), a
    call not yet started is cancelled and a running one is stopped."""

    async def run_python(code: str) -> ToolResult:
        request = PythonRequest(code, Future(), timeout)
        items.put(request)
        try:
            return await asyncio.wrap_future(request.future)
        except asyncio.CancelledError:
            # Cancelling the wrapper cancelled a call not yet started; one already running
            # cannot be cancelled, so it is stopped, and its late result is dropped.
            stop = request.stop
            if not request.future.cancelled() and stop is not None:
                stop("given up")
            raise

    return run_python


def build_harness(
    deps: HarnessDeps, settings: LogicianSettings, ledger: ThreadLedger, system_prompt: str
) -> AgentHarness:
    """The harness of one run: its collaborators (`deps`), and how it runs by the `[model]`
    and `[compaction]` settings; a `model.tool_choice` naming no tool of the run is refused."""
    model = settings.model
    extra = deps.more_tools() if deps.more_tools is not None else {}
    return AgentHarness(
        deps,
        compaction=compaction_policy(settings, ledger),
        max_tokens=model.max_response_tokens,
        temperature=model.temperature,
        system_prompt=system_prompt,
        tool_choice=checked_tool_choice(model.tool_choice, deps.tools, extra),
        tool_choice_scope=model.tool_choice_scope,
    )


def tool_context(
    runtime: Workspace,
    items: queue.Queue[RunItem],
    *,
    python: bool,
    secrets: tuple[str, ...],
    notebook: NotebookAccess | None = None,
) -> ToolContext:
    """What the tools get for one run: the workspace and the current frame's capture, the
    notebook's namespace for `python` (when there is one), the live notebook for the notebook
    tools (with the frame's record of cell edits), and where the user's cells run
    (`current_directory()`), against which relative paths resolve."""
    settings = runtime.config.settings
    checkpoints = runtime.checkpoints
    return ToolContext(
        workspace=runtime.config.workspace,
        cwd=current_directory(),
        capture=checkpoints.capture,
        capture_for_call=checkpoints.capture,
        run_python=python_runner(items, settings.tools.python_timeout_seconds) if python else None,
        bash_timeout_seconds=settings.tools.bash_timeout_seconds,
        secrets=secrets,
        notebook=notebook,
        record_cell_edit=runtime.record_cell_edit,
        watch_call=partial(watch_call, checkpoints),
    )
