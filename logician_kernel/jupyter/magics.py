"""`%logician <sub>`: the notebook's commands for frames, rewind and configuration.

Subcommands dispatch through one table, `COMMANDS`, to `handle_<sub>` methods (as ipykernel's
kernelbase dispatches `shell_handlers`); its names are `magic_words.MANAGEMENT_COMMANDS`, which
the kernel reads at start without loading this module (checked as this module loads). Handlers return a `Rendered` (plain text + HTML) or raise
`UsageError` with a one-line message; they never print tracebacks for user mistakes.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display

from ..agent import AgentError, AgentSession
from ..agent.hooks_setup import hooks_report
from ..agent.ui import AuditLog
from ..config import ConfigError, command_line_value
from ..config import commands as config_commands
from ..workspace import (
    RewindError,
    ThreadLedger,
)
from ..workspace import check_ledger as ledger_check
from . import display as render
from . import notices_view, thread_commands
from .agent import AgentCell
from .agent_errors import agent_errors
from .frame_magics import FrameCommands
from .frontend_link import FrontendLink
from .magic_parts import ArgParser as _ArgParser
from .magic_parts import branches_table, run_options
from .magic_words import (
    FIX,
    MANAGEMENT_COMMANDS,
    classify,
    unknown_command,
)
from .mcp_view import handle_mcp
from .notebook_context import NotebookContext
from .widgets import RewindControl

_CONFIG_SET = re.compile(
    r"^\s*config\s+set\s+(?P<key>[A-Za-z_][^\s'\"]*)\s+(?P<rest>\S.*?)\s*$", re.S
)
"""`config set KEY <value>`: the value is everything after the key (issue 36: a list with
spaces could not be typed in any quoting that shlex and the parser both accepted)."""

_PERSIST = re.compile(r"\s+--persist\s+(?P<where>user|project)\s*$")


@magics_class
class LogicianMagics(FrameCommands, Magics):
    """The `%logician` line magic (and the `%%logician` cell magic of the agent)."""

    def __init__(
        self,
        shell: Any,
        agent: AgentSession,
        notebook: NotebookContext | None = None,
        link: FrontendLink | None = None,
    ) -> None:
        """`link`: the comm handler a frontend opened before the agent loaded (the kernel's
        `KernelParts`), adopted with its sources; `agent` must be built on its broker."""
        super().__init__(shell=shell)
        self.session = agent
        self.workspace = agent.workspace
        self.broker = agent.broker
        if link is None:  # `%load_ext` in a stock IPython: no kernel parts
            link = FrontendLink(self.workspace, self.broker)
        elif link.broker is not agent.broker:
            raise ValueError("the agent must be built on the frontend link's approval broker")
        self.link = link
        link.agent_status = self._comm_status
        self.comms = link.comms
        self.frames = link.frames
        self.progress = link.progress
        self.agent = AgentCell(shell, agent, self.comms)
        # the kernel's recorder runs from its start; `%load_ext` starts one here
        self.notebook = notebook or NotebookContext(shell, agent)
        self.notebook.frontends = link.notebook.frontends  # the status says if tools are offered
        self.agent.context = self.notebook.safe_block
        self._controls: list[RewindControl] = []
        self.workspace.thread_listeners.append(self.after_cell)  # the frontends follow a switch

    @line_cell_magic
    def logician(self, line: str, cell: str | None = None) -> None:
        """Logician: `%%logician [--max-turns N]` + a prompt runs the agent; `%logician
        <prompt>` is the one-line form; `%logician frames|diff|rewind|config|trust|clear|help`
        manage the session."""
        if cell is not None:
            return self._run_agent(line, cell)
        word, _, note = line.strip().partition(" ")
        if word == FIX:
            return self._run_agent("", self.notebook.fix_prompt(note))
        kind, text = classify(line, MANAGEMENT_COMMANDS) if line.strip() else ("command", line)
        if kind == "prompt":
            return self._run_agent("", text)
        if kind == "unknown":
            raise unknown_command(line.split()[0], MANAGEMENT_COMMANDS)
        setting = _CONFIG_SET.match(line)
        if setting is not None:  # the value is the rest of the line, spaces and quotes included
            return self._config_set(setting["key"], setting["rest"])
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"%logician: cannot parse the arguments ({exc})") from None
        sub, args = (argv[0], argv[1:]) if argv else ("", [])
        handler = COMMANDS.get(sub)
        if handler is None:
            raise unknown_command(sub, MANAGEMENT_COMMANDS)
        try:
            result = handler(self, args)
        except (RewindError, ConfigError, AgentError) as exc:
            raise UsageError(str(exc)) from None
        if result is not None:
            display(result.bundle(), raw=True)

    def _run_agent(self, options: str, prompt: str) -> None:
        """The magic called from code (not a cell): runs with the kernel's loop blocked."""
        with agent_errors():
            self.agent.run(prompt, options=run_options(options))

    async def run_agent_async(self, options: str, prompt: str) -> None:
        """What a `%%logician` cell awaits (see `protect_prompt_lines`)."""
        with agent_errors():
            await self.agent.run_async(prompt, options=run_options(options))

    # -- handlers ---------------------------------------------------------------------------

    def handle_help(self, args: list[str]) -> render.Rendered:
        return render.help_text()

    def handle_config(self, args: list[str]) -> render.Rendered:
        workspace = self.workspace
        if not args or args[0] == "show":
            as_json = "--json" in args[1:]
            return render.preformatted(
                config_commands.config_show(workspace.config, as_json=as_json)
            )
        sub, rest = args[0], args[1:]
        if sub == "get" and len(rest) == 1:
            return render.preformatted(config_commands.config_get(workspace.config, rest[0]))
        if sub == "set":
            parser = _ArgParser(prog="config set", add_help=False)
            parser.add_argument("key")
            parser.add_argument("value")
            parser.add_argument("--persist", choices=["user", "project"])
            opts = parser.parse_args(rest)
            config, message = config_commands.config_set(
                workspace.config, opts.key, opts.value, persist=opts.persist
            )
            workspace.use_config(config)
            return render.preformatted(message)
        if sub == "schema":
            return render.preformatted(config_commands.config_schema())
        raise UsageError(
            "%logician config: use `config`, `config get KEY`, "
            "`config set KEY VALUE [--persist user|project]` or `config schema`"
        )

    def _config_set(self, key: str, rest: str) -> None:
        persist = _PERSIST.search(rest)
        if persist is not None:
            rest = rest[: persist.start()]
        value = command_line_value(rest)
        if not value:
            raise UsageError(
                "%logician config set: give a value after the key, e.g. "
                '`config set permissions.deny ["bash", "edit"]`'
            )
        workspace = self.workspace
        try:
            config, message = config_commands.config_set(
                workspace.config,
                key,
                value,
                persist=persist["where"] if persist is not None else None,  # type: ignore[arg-type]
            )
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        workspace.use_config(config)
        display(render.preformatted(message).bundle(), raw=True)

    def handle_hooks(self, args: list[str]) -> render.Rendered:
        if args:
            raise UsageError("%logician hooks: takes no arguments")
        return render.preformatted(hooks_report(self.workspace.config, self.session.hook_log))

    def handle_trust(self, args: list[str]) -> render.Rendered:
        parser = _ArgParser(prog="trust", add_help=False)
        parser.add_argument("--allow", action="append", default=[], help="a gated field")
        opts = parser.parse_args(args)
        try:
            message = config_commands.trust(
                self.workspace.config.workspace,
                user_dir=self.workspace.config.user_dir,
                allow=opts.allow,
            )
        except ConfigError as exc:
            raise UsageError(f"%logician trust: {exc}") from None
        # A newly allowed model.* field applies to the next run: AgentSession.provider()
        # rebuilds the provider whenever the [model] settings differ.
        config = self.workspace.reload_config()
        if config.notices:
            message += "\n" + "\n".join(config.notices)
        return render.preformatted(message)

    def handle_clear(self, args: list[str]) -> render.Rendered:
        if args:
            raise UsageError("%logician clear: takes no arguments")
        dropped = self.session.clear()
        return render.preformatted(
            f"Cleared the conversation ({dropped} message(s) no longer sent to the model; "
            "the ledger keeps them). Files and frames are untouched."
        )

    def handle_status(self, args: list[str]) -> render.Rendered:
        if args:
            raise UsageError("%logician status: takes no arguments")
        workspace = self.workspace
        checkpoints = workspace.checkpoints_if_on
        frames = checkpoints.active_frames() if checkpoints is not None else []
        ledger = workspace.ledger
        notices, critical = notices_view.status_line(workspace.notices)
        return render.status(
            self.session.state,
            thread=workspace.thread_id,
            workspace=str(workspace.root),
            frames=len(frames),
            messages=len(ledger.messages()) if ledger is not None else 0,
            model=f"{workspace.config.settings.model.provider}:{workspace.config.settings.model.name}",
            notices=notices,
            critical=critical,
            attribution=workspace.attribution,
            extra=self.notebook.status_rows(),
        )

    def handle_context(self, args: list[str]) -> render.Rendered:
        """`%logician context`: what the next prompt carries of the notebook."""
        return self.notebook.handle_context(args)

    def handle_notices(self, args: list[str]) -> render.Rendered:
        """`%logician notices [--all]`: what Logician said outside the cells' outputs."""
        return notices_view.handle(self.workspace.notices, args)

    def handle_audit(self, args: list[str]) -> render.Rendered:
        parser = _ArgParser(prog="audit", add_help=False)
        parser.add_argument("-n", type=int, default=20, help="how many recent decisions")
        opts = parser.parse_args(args)
        return render.preformatted(
            AuditLog.for_workspace(self.workspace.config.workspace).report(opts.n)
        )

    def handle_ledger(self, args: list[str]) -> render.Rendered:
        """`%logician ledger [check]`: this thread's damage, and what its side files could restore."""
        if args not in ([], ["check"]):
            raise UsageError(
                "%logician ledger: takes `check` only; to restore records, shut the "
                "kernel down and run `logician ledger repair THREAD`"
            )
        ledger = self._ledger()
        return render.preformatted("\n".join(ledger_check(ledger.path).lines()))

    def _comm_status(self, status: dict[str, Any]) -> dict[str, Any]:
        """The link's status (`FrontendLink.status`: the workspace's fields) with the
        agent's: its phase and model, the run's turn, tokens, cost and budget, MCP."""
        state = self.session.state
        budget = self.session.budget
        limits = budget.limits.model_dump(exclude_none=True) if budget is not None else {}
        if status["phase"] != "rewinding":
            status["phase"] = state.phase
        status.update(
            model=state.model or status["model"],
            turn=state.turn,
            tool_calls=state.tool_calls,
            input_tokens=state.input_tokens,
            output_tokens=state.output_tokens,
            cost_usd=budget.cost_usd if budget is not None else None,
            budget=limits,
            last_outcome=state.last_outcome.status if state.last_outcome else None,
            mcp=[
                {
                    "name": s.name,
                    "state": s.state,
                    "tools": s.tools,
                    "stale": s.stale,
                    "error": s.error,
                }
                for s in self.session.mcp.status()
            ],
        )
        return status

    def _ledger(self) -> ThreadLedger:
        ledger = self.workspace.ledger
        if ledger is None:
            raise UsageError("%logician: the thread ledger is unavailable for this session")
        return ledger

    def handle_branches(self, args: list[str]) -> render.Rendered:
        self._ledger()
        return branches_table(self.session.branches())

    def handle_branch(self, args: list[str]) -> render.Rendered:
        if len(args) != 2 or args[0] not in ("merge", "discard"):
            raise UsageError("%logician branch: use `branch merge ID` or `branch discard ID`")
        action, branch_id = args
        self._ledger()
        if action == "discard":
            self.session.discard_branch(branch_id)
            return render.preformatted(
                f"Discarded branch {branch_id}; the conversation is unchanged."
            )
        merged = self.session.merge_branch(branch_id)
        return render.preformatted(
            f"Merged a summary of branch {branch_id} into the conversation "
            f"({merged.spent}):\n\n{merged.summary}"
        )

    def handle_compact(self, args: list[str]) -> render.Rendered:
        self._ledger()
        keep = self.workspace.config.settings.compaction.keep_recent_turns
        done = self.session.compact(" ".join(args) or None)
        return render.preformatted(
            f"Compacted the conversation: {done.before} message(s) -> {done.after} "
            f"(the last {keep} turn(s) kept verbatim; the ledger keeps everything; "
            f"{done.spent})."
        )

    def handle_threads(self, args: list[str]) -> render.Rendered:
        return thread_commands.threads(self.session, args)

    def handle_thread(self, args: list[str]) -> render.Rendered:
        return thread_commands.thread(self.session, args)

    def handle_mcp(self, args: list[str]) -> render.Rendered:
        return handle_mcp(self.session, args)

    # -- the rewind control -----------------------------------------------------------------

    def handle_control(self, args: list[str]) -> None:
        """`%logician` alone: the rewind control, bound to this thread's ledger."""
        control = RewindControl(self.frames)
        self._controls.append(control)
        display(control)
        return None

    def after_cell(self) -> None:
        """After every cell: the controls and the lab extension see the ledger as it is now."""
        self.link.after_cell()
        self.refresh_controls()

    def refresh_controls(self) -> None:
        """After every cell and every rewind: the controls show the ledger as it is now."""
        for control in list(self._controls):
            try:
                control.refresh()
            except Exception:  # noqa: BLE001 - a closed widget must not break a cell
                self._controls.remove(control)


COMMANDS: dict[str, Callable[[LogicianMagics, list[str]], render.Rendered | None]] = {
    "": LogicianMagics.handle_control,
    "help": LogicianMagics.handle_help,
    "frames": LogicianMagics.handle_frames,
    "diff": LogicianMagics.handle_diff,
    "rewind": LogicianMagics.handle_rewind,
    "undo": LogicianMagics.handle_undo,
    "config": LogicianMagics.handle_config,
    "trust": LogicianMagics.handle_trust,
    "clear": LogicianMagics.handle_clear,
    "status": LogicianMagics.handle_status,
    "notices": LogicianMagics.handle_notices,
    "audit": LogicianMagics.handle_audit,
    "branches": LogicianMagics.handle_branches,
    "branch": LogicianMagics.handle_branch,
    "compact": LogicianMagics.handle_compact,
    "storage": LogicianMagics.handle_storage,
    "gc": LogicianMagics.handle_gc,
    "vars": LogicianMagics.handle_vars,
    "ledger": LogicianMagics.handle_ledger,
    "threads": LogicianMagics.handle_threads,
    "thread": LogicianMagics.handle_thread,
    "hooks": LogicianMagics.handle_hooks,
    "mcp": LogicianMagics.handle_mcp,
    "context": LogicianMagics.handle_context,
}
"""`%logician <sub>` -> its handler: the one declaration of the subcommands (`""` is
`%logician` alone, the rewind control)."""

if frozenset(COMMANDS) != MANAGEMENT_COMMANDS:  # the kernel tells cells apart by the names
    raise ImportError(
        "magic_words.MANAGEMENT_COMMANDS must name exactly the subcommands of magics.COMMANDS: "
        f"{sorted(frozenset(COMMANDS) ^ MANAGEMENT_COMMANDS)}"
    )
