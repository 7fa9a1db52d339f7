"""`AgentSession`: the Jupyter-free composition root of the agent.

It owns everything a run is made of - the provider (rebuilt when any `model.*` setting
changes), the permission policy (rebuilt on a configuration change, keeping the rules allowed
"for this session"), the run store, the tool context, the gate with its approvals, the run
controller, the todo list and the compaction policy - and what follows a run: its `run_end`
record, the answers to calls an interrupt cut off, the `run-commit` of an accepted result.
It also rewinds, clears, compacts and merges branches.

The kernel (`jupyter/`), `%load_ext logician_kernel` in a stock IPython, and scripts all use
it: the kernel consumes a run's queue on its main thread (`start` / `finish`); a script calls
`run`, whose queue `script` consumes with an `approve` callback.

Must never: import IPython, ipykernel, ipywidgets or comm; print; or run a coroutine anywhere
but on a worker loop (`_loop`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ..config import EffectiveConfig, LogicianSettings, ModelSettings
from ..events.events import HarnessEvent
from ..events.runtime_state import RuntimeState
from ..frames.file_checkpoints import RewindError
from ..ledger.run_store import resolve_dangling_calls
from ..ledger.settle import restorable_calls
from ..ledger.thread_ledger import (
    CallRewound,
    ProjectionItem,
    RestorableCall,
    RunEnd,
    ThreadLedger,
)
from ..loop.command_hooks import HookLog
from ..mcp import McpManager
from ..policy import PermissionPolicy, RunBudget, config_layer_of
from ..providers import Provider
from ..tools import NotebookAccess
from ..tools._process_guard import reap_for_workspace
from ..types.run import RunOutcome
from ..workspace import RewindScope, ThreadInfo, Workspace
from . import conversation, script
from . import threads as _threads
from .approvals import ApprovalBroker
from .errors import AgentError
from .model_calls import allowed_model, new_provider
from .policy import RunOptions
from .run import AgentRun
from .run_profile import ProfileSwap, use_profile
from .run_start import start_run
from .script import Approve, Compacted, Listener, Merged, RunResult


class AgentSession:
    """One workspace and one thread, with the agent's moving parts wired once."""

    def __init__(self, workspace: Workspace, *, broker: ApprovalBroker | None = None) -> None:
        self.workspace = workspace
        """The front door of everything durable: the thread, its frames, the rewinds."""
        self.broker = broker or ApprovalBroker()
        self.state = RuntimeState()
        """The ephemeral status of the agent, folded from its events (never persisted)."""
        self.listeners: list[Callable[[HarnessEvent], None]] = []
        """Told each event of work outside a run (`compact`, `merge_branch`); must not raise."""
        self.budget: RunBudget | None = None
        """The current (or last) run's budget: what status reports of cost and limits."""
        self._provider: Provider | None = None
        self._provider_model: ModelSettings | None = None
        self._policy: PermissionPolicy | None = None
        self._policy_config: EffectiveConfig | None = None
        self.hook_log = HookLog()
        """The last result of each `[hooks]` command (what `%logician hooks` shows)."""
        self._profile_swap: ProfileSwap | None = None
        self.mcp = McpManager(workspace.config.workspace, workspace.env)
        """The MCP servers: connecting in the background from now on, never awaited."""
        self.mcp.apply(workspace.config.settings.mcp)

    @classmethod
    def open(
        cls,
        workspace: str | os.PathLike[str] = ".",
        thread: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
    ) -> AgentSession:
        """Open `workspace`'s `.logician/` state and `thread`; when None, the thread `env`
        names (`JPY_SESSION_NAME`, `LOGICIAN_THREAD`), else the workspace's most recent one
        (said in the workspace's notices). `threads()` lists them.

        Configuration comes from the usual layers (user, trusted project, `LOGICIAN_*` in
        `env`, which defaults to this process's environment)."""
        environ = dict(os.environ if env is None else env)
        if thread is not None:
            environ["LOGICIAN_THREAD"] = thread
            environ.pop("JPY_SESSION_NAME", None)  # the script's own name beats its parent's
        return cls(Workspace.open(Path(workspace).resolve(), environ, reap=reap_for_workspace))

    # -- what a run is built from --------------------------------------------------------------

    @property
    def settings(self) -> LogicianSettings:
        return self.workspace.config.settings

    @property
    def ledger(self) -> ThreadLedger:
        ledger = self.workspace.ledger
        if ledger is None:
            raise AgentError(
                "the thread ledger is unavailable for this session (`.logician/` could not "
                "be opened; see the first notice)"
            )
        return ledger

    def provider(self) -> Provider:
        """The model provider for the current `[model]` settings; any change rebuilds it."""
        # Checked on every call, before any cached provider: a configuration whose endpoint
        # source is broken must not reach the provider built from an older snapshot.
        model = allowed_model(self.workspace)
        if self._provider is None or self._provider_model != model:
            self._provider, self._provider_model = new_provider(self.workspace), model
        return self._provider

    def secrets(self) -> tuple[str, ...]:
        """The exact values masked wherever the agent's text goes: the model's key and the MCP
        servers' tokens (a server that echoes its bearer token must not put it into the cell,
        the ledger, hooks, the audit log or the notebook context)."""
        key = self.workspace.config.api_key()
        return ((key.get_secret_value(),) if key else ()) + self.mcp.secrets()

    def forget_provider(self) -> None:
        """After a clear: a replay starts over; any other provider is built afresh."""
        reset = getattr(self._provider, "reset", None)
        if reset is not None:
            reset()
        else:
            self._provider = None

    def permission_policy(self) -> PermissionPolicy:
        """The session's permission policy, rebuilt when the configuration changes, keeping the
        rules the user allowed "for this session"."""
        config = self.workspace.config
        if self._policy is None or self._policy_config is not config:
            kept = self._policy.session_rules if self._policy is not None else ()
            self._policy = PermissionPolicy(
                config.settings.permissions,
                workspace=config.workspace,
                layer_of=config_layer_of(config),
            )
            for rule in kept:
                self._policy.allow_for_session(rule)
            self._policy_config = config
        return self._policy

    # -- one run, for a consumer of its queue (the kernel) ------------------------------------

    def start(
        self,
        prompt: str,
        *,
        options: RunOptions | None = None,
        can_ask: bool,
        python: bool = False,
        notebook: NotebookAccess | None = None,
        context: str = "",
    ) -> AgentRun:
        """Start a run on its worker loop in the open frame; the caller consumes the run's
        `requests` (events, approval items, and with `python` the `python` tool's calls) and
        then calls `finish`. `can_ask` False means nobody can answer an approval: the
        headless policy decides. `notebook` (the live notebook's frontend) offers the
        notebook tools. `context` is the notebook context block the prompt's message opens
        with (`notebook_context.render_block`)."""
        options = options or RunOptions()
        prompt = prompt.strip()
        if not prompt:
            raise AgentError("the prompt is empty")
        if self._profile_swap is not None:  # a run that was never finished
            self._profile_swap.restore(self.workspace)
            self._profile_swap = None
        swap = use_profile(self.workspace, options.profile)
        try:
            run = start_run(
                self,
                prompt,
                options,
                can_ask=can_ask,
                python=python,
                notebook=notebook,
                context=context,
            )
        except BaseException:
            if swap is not None:
                swap.restore(self.workspace)
            raise
        self._profile_swap = swap
        return run

    def take(self, run: AgentRun, event: HarnessEvent) -> None:
        """Fold one of the run's events into the session's status."""
        self.state = run.take(event, self.state)

    def finish(self, run: AgentRun) -> RunOutcome | None:
        """After the run's queue is drained: record how it ended, answer calls an interrupt
        cut off, and commit an accepted result. Returns the outcome (None if it never
        reported one)."""
        run.join()
        swap, self._profile_swap = self._profile_swap, None
        if swap is not None:
            swap.restore(self.workspace)
        ledger = self.workspace.ledger
        if ledger is not None and run.outcome is not None:
            ledger.append(
                RunEnd,
                frame=run.frame,
                status=run.outcome.status,
                input_tokens=self.state.input_tokens,
                output_tokens=self.state.output_tokens,
                cost_usd=run.controller.budget.cost_usd or 0.0,
                usage_estimated=self.state.usage_estimated,
            )
        if run.interrupted and ledger is not None:
            # Calls cut off by the interrupt are answered now, so the conversation stays
            # well-formed and nothing waits for the next restart to be settled.
            resolve_dangling_calls(ledger, interrupted=True)
        elif (
            run.outcome is not None
            and run.outcome.status == "completed"
            and run.controller.accepted
        ):
            # The acceptance check passed: the conversation up to here is a committed result.
            self.workspace.commit_run()
        return run.outcome

    # -- one run, for a script -------------------------------------------------------------

    def run(
        self,
        prompt: str,
        *,
        approve: Approve | None = None,
        max_turns: int | None = None,
        max_tool_calls: int | None = None,
        budget_usd: float | None = None,
        mode: str | None = None,
        accept: str | None = None,
        on_event: Callable[[HarnessEvent], None] | None = None,
        profile: str | None = None,
    ) -> RunResult:
        """Run the agent on `prompt` in a frame of its own, synchronously.

        `approve(call)` answers each approval (`call.tool`, `call.arguments`,
        `call.description`); without it, nobody can be asked and `permissions.headless`
        decides. `on_event` sees every harness event. `profile` applies `[profiles.NAME]` to
        this run only. A KeyboardInterrupt cancels the run (still recorded) and is re-raised."""
        options = RunOptions(
            max_turns=max_turns,
            max_tool_calls=max_tool_calls,
            budget_usd=budget_usd,
            mode=mode,
            accept=accept,
            profile=profile,
        )
        # No cell to keep responsive: the frame waits for the first snapshot (`frame.py`).
        with self.workspace.frame(None, None, prompt, whole_first_snapshot=True) as frame:
            if frame.interrupted:  # Ctrl-C while the frame opened: no run, as it meant
                raise KeyboardInterrupt
            run = self.start(prompt, options=options, can_ask=approve is not None)
            script.consume(self, run, approve, on_event)
            self.finish(run)
            frame.outcome = "interrupted" if run.interrupted else "ok"
        if run.interrupted:
            raise KeyboardInterrupt
        assert run.outcome is not None  # a drained run always reported its end
        closed = frame.closed
        return RunResult(
            frame=closed.frame if closed else run.frame, outcome=run.outcome, text=run.text
        )

    # -- the conversation and the workspace --------------------------------------------------

    def rewind(
        self,
        frame: int | str = "--last",
        scope: RewindScope | None = None,
        *,
        force: bool = False,
        include_external: bool = False,
    ) -> ProjectionItem:
        """Undo `frame` and every frame after it: files and conversation (and variables, in
        a notebook), or the parts `scope` names. Changes made outside this kernel are left
        alone unless `include_external`; a path the frames changed that someone else changed
        too is a conflict unless `force`."""
        with _agent_errors():
            return self.workspace.rewind(
                frame, scope, force=force, include_external=include_external
            )

    def resume_rewind(self, *, force: bool = False) -> ProjectionItem:
        """Complete the rewind a crash interrupted or a failed path left incomplete."""
        with _agent_errors():
            return self.workspace.resume(force=force)

    def undo_rewind(self, *, force: bool = False) -> ProjectionItem:
        """Take back the most recent rewind: files (bytes, modes, deleted and created ones),
        variables and the conversation as they were; its frames are active again."""
        with _agent_errors():
            return self.workspace.undo(force=force)

    def rewind_call(self, call_id: str, *, force: bool = False) -> CallRewound | ProjectionItem:
        """Put back what one tool call changed: a call of a closed frame through an undoable
        plan (a `rewind` projection item), or one cut off by a dead kernel from what it had
        captured (`restorable_calls` lists them)."""
        with _agent_errors():
            return self.workspace.rewind_call(call_id, force=force)

    def restorable_calls(self) -> list[RestorableCall]:
        """Calls a dead kernel cut off whose pre-images were recorded, not yet rewound."""
        return restorable_calls(self.ledger)

    # -- threads (threads.py) ----------------------------------------------------------------

    def threads(self) -> list[ThreadInfo]:
        """The workspace's threads (id, notebook, frames, last used), most recent first."""
        return _threads.listing(self.workspace)

    def use_thread(self, thread_id: str, *, create: bool = False) -> list[str]:
        """Move to another thread of the workspace (a new one with `create`): its frames and
        its conversation from now on. Refused while a frame is open. Returns its notices."""
        return _threads.use(self, thread_id, create=create)

    def clear(self) -> int:
        """Start the conversation afresh; returns how many messages the model no longer sees."""
        dropped = self.workspace.clear_conversation()
        self.forget_provider()
        return dropped

    def compact(self, focus: str | None = None, *, on_event: Listener | None = None) -> Compacted:
        """Summarise the older turns now; the status's phase is `compaction` meanwhile."""
        keep = self.settings.compaction.keep_recent_turns
        report = conversation.reporter(self, on_event)
        return conversation.compact_on_demand(self.ledger, self.provider(), keep, focus, report)

    def branches(self) -> list[conversation.Branch]:
        return conversation.branches(self.ledger)

    def merge_branch(self, branch_id: str, *, on_event: Listener | None = None) -> Merged:
        """Merge a summary of a rewound branch into the conversation (phase `branch_summary`)."""
        report = conversation.reporter(self, on_event)
        return conversation.merge_branch(self.ledger, self.provider(), branch_id, report)

    def discard_branch(self, branch_id: str) -> None:
        conversation.discard(self.ledger, conversation.open_branch(self.ledger, branch_id))

    def close(self) -> None:
        self.mcp.close()
        self.workspace.close()

    def __enter__(self) -> AgentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def _agent_errors() -> Iterator[None]:
    """A refused rewind reaches a script as an `AgentError` with the same one-line message."""
    try:
        yield
    except RewindError as exc:
        raise AgentError(str(exc)) from None
