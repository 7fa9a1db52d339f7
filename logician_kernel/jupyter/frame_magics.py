"""`%logician` subcommands on frames: list them (`frames`), the store (`storage`, `gc`), what a
frame changed (`diff`, `vars`), and take them back (`rewind` with its scope, dry run, resume
and skips; `undo`). A mix-in of `LogicianMagics` (magics.py), whose `COMMANDS` table
dispatches to these handlers like to the rest, and of `frame_light.FrameLight`, which runs them
before the agent is loaded: this module imports nothing of the agent or the comm.

Must never: print a traceback for a user's mistake (a `UsageError` with one line), or
rewind without announcing it (`LedgerRewindSource.announce` to the frontends, or
`frame_light.UnattachedFrames` when none has the comm).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ..workspace import (
    RewindPart,
    RewindScope,
    Workspace,
    collect_garbage,
    frame_diff,
    storage_text,
)
from . import display as render
from . import undo_view, variables_view
from .magic_words import ArgParser as _ArgParser

if TYPE_CHECKING:
    from ..agent import AgentSession
    from .rewind_source import LedgerRewindSource


class FrameCommands:
    """The frame handlers of `LogicianMagics` (see the module docstring)."""

    session: AgentSession
    workspace: Workspace
    frames: LedgerRewindSource

    def handle_frames(self, args: list[str]) -> render.Rendered:
        parser = _ArgParser(prog="frames", add_help=False)
        parser.add_argument("--all", action="store_true", help="include rewound frames")
        opts = parser.parse_args(args)
        checkpoints = self.workspace.checkpoints
        frames = list(checkpoints.frames().values())
        if not opts.all:
            frames = [f for f in frames if f.status != "rewound"]
        budget = checkpoints.budget
        return render.frames_table(
            frames,
            thread=self.workspace.thread_id,
            evicted=budget.evicted() if budget else {},
            evicted_variables=budget.evicted_variables() if budget else {},
        )

    def handle_storage(self, args: list[str]) -> render.Rendered:
        if args:
            raise UsageError("%logician storage: takes no arguments")
        return render.preformatted(storage_text(self.workspace.checkpoints))

    def handle_gc(self, args: list[str]) -> render.Rendered:
        parser = _ArgParser(prog="gc", add_help=False)
        parser.add_argument("--keep", type=int, metavar="N")
        opts = parser.parse_args(args)
        return render.preformatted(collect_garbage(self.workspace.checkpoints, opts.keep))

    def handle_diff(self, args: list[str]) -> render.Rendered:
        if len(args) != 1:
            raise UsageError(
                "%logician diff: give one frame id (or --last), e.g. `%logician diff 7`"
            )
        view, diffs = frame_diff(self.workspace.checkpoints, args[0])
        return render.frame_diff(view, diffs)

    def handle_rewind(self, args: list[str]) -> render.Rendered:
        parser = _ArgParser(prog="rewind", add_help=False)
        parser.add_argument("target", nargs="?")
        parser.add_argument("--last", action="store_true")
        parser.add_argument("--cell", type=int, metavar="N")
        parser.add_argument("--call", metavar="ID")
        parser.add_argument("--force", action="store_true")
        parser.add_argument("--include-external", action="store_true")
        parser.add_argument("--keep-uncertain", action="store_true")
        parser.add_argument("--dry-run", action="store_true")
        parser.add_argument("--resume", action="store_true")
        parser.add_argument("--skip-failed", action="store_true")
        parser.add_argument("--skip-cells", action="store_true")
        only = parser.add_mutually_exclusive_group()
        only.add_argument("--files-only", action="store_true")
        only.add_argument("--conversation-only", action="store_true")
        only.add_argument("--variables-only", action="store_true")
        opts = parser.parse_args(args)
        if opts.call is not None:
            from . import call_rewind  # the agent's calls: loaded with the agent

            return call_rewind.handle(self.session, self.frames, opts)
        given = [opts.last, opts.cell is not None, opts.target is not None]
        if opts.skip_cells:
            if any(given) or opts.resume or opts.skip_failed:
                raise UsageError(
                    "%logician rewind --skip-cells: takes no frame and no other option"
                )
            n = self.frames.notebook.skip_pending() if self.frames.notebook is not None else 0
            return render.preformatted(
                f"gave up the cell part of {n} rewind(s) or undo(s): the notebook keeps its cells"
            )
        if opts.resume or opts.skip_failed:
            if any(given) or opts.dry_run:
                raise UsageError(
                    "%logician rewind --resume/--skip-failed: take no frame (they "
                    "finish the pending rewind) and no --dry-run"
                )
            item = self.workspace.resume(
                retry=opts.resume, skip_failed=opts.skip_failed, force=opts.force
            )
            self.frames.announce(item)
            return undo_view.resume_result(item)
        if sum(given) != 1:
            raise UsageError("%logician rewind: give one of a frame id, --last or --cell N")
        spec = (
            "--last" if opts.last else f"cell:{opts.cell}" if opts.cell is not None else opts.target
        )
        part: RewindPart | None = (
            "files"
            if opts.files_only
            else "conversation"
            if opts.conversation_only
            else "variables"
            if opts.variables_only
            else None
        )
        scope = RewindScope.only(part) if part else RewindScope()
        if opts.dry_run:
            preview = self.workspace.preview(
                spec,
                scope,
                force=opts.force,
                include_external=opts.include_external,
                keep_uncertain=opts.keep_uncertain,
            )
            if preview.plan is not None and (
                self.workspace.variables is None or not scope.variables
            ):
                return render.rewind_plan(preview.plan)
            return variables_view.dry_run(preview.plan, preview.variables, preview.frame)
        item = self.workspace.rewind(
            spec,
            scope,
            force=opts.force,
            include_external=opts.include_external,
            keep_uncertain=opts.keep_uncertain,
        )
        self.frames.announce(item, force=opts.force)
        return variables_view.rewind_result(item)

    def handle_undo(self, args: list[str]) -> render.Rendered:
        """`%logician undo [--force]`: take back the most recent rewind."""
        item = undo_view.run_undo(self.workspace, args)
        self.frames.announce_undo(item, force="--force" in args)
        return undo_view.undo_result(item)

    def handle_vars(self, args: list[str]) -> render.Rendered:
        """`%logician vars N`: the variables frame N created, changed or deleted."""
        if len(args) != 1:
            raise UsageError(
                "%logician vars: give one frame id (or --last), e.g. `%logician vars 7`"
            )
        return variables_view.vars_report(
            self.workspace.checkpoints, self.workspace.variables, args[0]
        )
