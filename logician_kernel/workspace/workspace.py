"""`Workspace`: the front door of everything durable.

One object per kernel (or `%load_ext`, or script) holds the effective configuration (loaded
once, handed down), the open thread (its ledger, frames and variables, `thread.py`), the
notices owed to the user (`notices.py`, one sink), and the `frame_lock`. Everything above it - the kernel, the magics,
the sidebar, `AgentSession` - talks to it, never through it:
`Workspace.open(start_dir, env)`, `with workspace.frame(...)` (`frame.py`),
`rewind(target, scope)`, `resume()`, `undo()`, `preview()`, `page()`, `use_thread()`, and
the agent's cell edits with their rewind (`cell_edits.py`).

Must never: import Jupyter or `tools/` (the process reaper is handed in), read configuration
past `open` / `reload_config`, or let a problem with `.logician/`, git or the ledger escape
into a user's cell.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal, TextIO

from ..config import EffectiveConfig, load_effective_config
from ..frames.capture_heal import CaptureHeal
from ..frames.file_checkpoints import FileCheckpoints, RewindError
from ..frames.variable_checkpoints import VariableCheckpoints
from ..ledger.entries import CellEdit, CellRestore
from ..ledger.thread_ledger import ProjectionItem, ThreadLedger
from ..snapshots.tree_watch import TREE
from ..snapshots.write_audit import AUDIT, WriteAudit
from . import cell_edits
from .frame import CellFrame
from .launch import StartingDirectory, unsafe_workspace
from .notices import NoticeBoard
from .open_thread import OpenThread, Reaper
from .rewinding import Rewinding
from .rewinds import RestoreProgress
from .thread_config import apply_config, open_thread
from .threads import ThreadChoice, ThreadSource


class Workspace(Rewinding):
    """One workspace and one open thread of it, for one kernel, `%load_ext` or script."""

    def __init__(
        self,
        config: EffectiveConfig,
        thread: OpenThread,
        env: Mapping[str, str],
        *,
        kernel_session: str = "",
        reap: Reaper | None = None,
    ) -> None:
        self.config = config
        self.env = dict(env)
        self._thread = thread
        self.notices = NoticeBoard(lambda: self.config.settings.ui.notices)
        """Every notice of the session, and where it goes (`notices.py`: `ui.notices`)."""
        for text in (*config.notices, *thread.notices):
            self.notices.say(text)
        self.frame_lock = threading.RLock()
        """Held while a frame opens or closes and while a rewind runs: they never interleave."""
        self._reported: set[str] = set()
        self.heal = CaptureHeal()
        """Cells the ledger missed; healed before the next frame opens."""
        self.reap = reap
        """Handed to each thread as it opens (see `OpenThread.open`)."""
        self.kernel_session = kernel_session
        """The kernel session id recorded in each thread this workspace opens."""
        self.thread_listeners: list[Callable[[], None]] = []
        """Called after `use_thread` moved to another thread (the frontends re-read frames)."""
        self.progress_listeners: list[Callable[[RestoreProgress], None]] = []
        """Told how far a rewind, undo or resume has come, after every path (a listener
        throttles what it shows; it must be cheap and must not raise), and how far the
        first snapshot's scan has come (`first_snapshot`, from the thread that scans)."""
        self.long_work: RestoreProgress | None = None
        """The long work under way (its latest report), None when none is: a frontend that
        opens mid-work shows it at once."""
        self._namespace: tuple[MutableMapping[str, Any], Mapping[str, Any] | None] | None = None
        self._bind()

    @classmethod
    def open(
        cls,
        start_dir: Path,
        env: Mapping[str, str],
        *,
        kernel_session: str = "",
        reap: Reaper | None = None,
        launch: StartingDirectory | None = None,
    ) -> Workspace:
        """The workspace `start_dir` belongs to (its git top level, or the `workspace.root`
        setting), on the thread `env` names (else its most recent one, said in the notices).
        `reap` kills what a dead kernel's tools left running (the kernel hands in the process
        guard's). `launch` is how a launcher started the kernel: a gateway kernel left in a
        home directory or `/` runs with frames off (`launch.unsafe_workspace`). Never raises
        for `.logician/` problems: frames are then off, said once."""
        config = load_effective_config(start_dir, env=env)
        root = config.settings.workspace.root
        if refused := unsafe_workspace(config.workspace, launch, root, env):
            thread = OpenThread.unavailable(config.workspace, env, refused)
        else:
            thread = open_thread(config, env, kernel_session, reap=reap)
        return cls(config, thread, env, kernel_session=kernel_session, reap=reap)

    # -- what it holds ----------------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The workspace directory (where `.logician/` lives)."""
        return self._thread.workspace

    @property
    def thread_id(self) -> str:
        return self._thread.thread_id

    @property
    def thread_note(self) -> str | None:
        """How this kernel came by its thread when another kernel was involved: the one it was
        named held by a live kernel (so it records its own), taken over from a stale holder,
        or lost to a kernel that took it over (then nothing more is written). None otherwise."""
        return self._thread.lease_lost or self._thread.lease_note

    @property
    def thread_source(self) -> ThreadSource:
        """Where the thread's id came from (the kernel follows VS Code's name only if weaker)."""
        return self._thread.thread_source

    @property
    def ledger(self) -> ThreadLedger | None:
        """The thread's ledger; None when `.logician/` could not be opened."""
        return self._thread.ledger

    @property
    def checkpoints_if_on(self) -> FileCheckpoints | None:
        """The frame store, or None when frames are off for this workspace."""
        return self._thread.checkpoints

    @property
    def checkpoints(self) -> FileCheckpoints:
        """The frame store, or a `RewindError` saying why frames are off."""
        if self._thread.checkpoints is None:
            raise RewindError(
                f"frames are off for this session ({self.root / '.logician'} "
                "could not be opened; `%logician notices` says why)"
            )
        return self._thread.checkpoints

    @property
    def attribution(self) -> str:
        """How changes during a cell are told the kernel's own or someone else's (chosen once,
        at the first ask): "exact (fanotify)", "by process tree sampling", "by time only" (with
        why), or "off" when frames or attribution are off."""
        if self._thread.checkpoints is None or not self.config.settings.checkpoints.attribution:
            return "off"
        TREE.choose(self.root)
        return TREE.label()

    @property
    def write_audit(self) -> WriteAudit:
        """The process's write audit: what a run's tool calls write, the frames attribute
        (handed to the harness through its `HarnessDeps`)."""
        return AUDIT

    @property
    def variables(self) -> VariableCheckpoints | None:
        """The thread's variable capture, or None when frames are off."""
        return self._thread.variables

    # -- configuration ----------------------------------------------------------------------

    def use_config(self, config: EffectiveConfig) -> None:
        """Hand a new snapshot down; capture limits apply from the next cell on."""
        self.config = config
        apply_config(self._thread, config)

    def reload_config(self) -> EffectiveConfig:
        """Load the layers again (after `trust`), keeping this session's overrides."""
        self.use_config(
            load_effective_config(
                self.config.start_dir, env=self.env, session=self.config.layer("session").data
            )
        )
        return self.config

    # -- threads ----------------------------------------------------------------------------

    def use_thread(self, choice: ThreadChoice) -> list[str]:
        """Close this thread and open `choice`'s; returns the new thread's notices.

        Refused while a frame is open (the cell's frame belongs to the thread it opened in).
        Notices of the old thread not yet shown are dropped: they no longer apply."""
        with self.frame_lock:
            checkpoints = self._thread.checkpoints
            if checkpoints is not None and checkpoints.is_open:
                raise RewindError(
                    f"thread use: this cell is frame {checkpoints.current_frame} of thread "
                    f"{self.thread_id!r}; switch in a cell of its own"
                )
            old = self._thread
            stale = set(old.notices)
            old.close()
            self._thread = open_thread(
                self.config, self.env, self.kernel_session, choice, reap=self.reap
            )
            self.notices.drop_pending(stale)
            self._bind()
        for listener in list(self.thread_listeners):
            listener()
        return list(self._thread.notices)

    # -- the frame bracket ------------------------------------------------------------------

    def bind_namespace(
        self, namespace: MutableMapping[str, Any], hidden: Mapping[str, Any] | None = None
    ) -> None:
        """The user namespace whose variables frames capture and rewinds restore (the shell's
        `user_ns`, and the names it hides: `In`, `Out`, ...); kept across thread switches."""
        self._namespace = (namespace, hidden)
        self._bind()

    def _bind(self) -> None:
        if self._thread.checkpoints is not None:  # e.g. "waits for the first snapshot"
            self._thread.checkpoints.say = self.notices.say
            if (snapshotter := self._thread.checkpoints.snapshotter) is not None:
                snapshotter.scan_progress = self._scanned
                if snapshotter.large is not None:
                    snapshotter.large.copy_progress = self._copying
        if self._namespace is not None and self._thread.variables is not None:
            self._thread.variables.bind(*self._namespace)

    def note_code(self, code: str) -> None:
        """Code run inside the open frame besides the cell's own (the agent's `python` tool):
        the names it may have mutated are hashed at the frame's close too."""
        if self._thread.variables is not None:
            self._thread.variables.add_code(code)

    def frame(
        self,
        execution_count: int | None,
        cell_id: str | None,
        code: str,
        *,
        stream: TextIO | None = None,
        whole_first_snapshot: bool = False,
    ) -> CellFrame:
        """`with workspace.frame(n, cell_id, code) as frame:` - one cell as one frame: files
        and variables opened before the body, closed after it with `frame.outcome`, notices
        said through `notices` (printed on `stream`, default the `sys.stderr` of the moment,
        only where notices go into cells). See `frame.py`."""
        return CellFrame(
            self,
            execution_count=execution_count,
            cell_id=cell_id,
            code=code,
            stream=stream,
            whole_first_snapshot=whole_first_snapshot,
        )

    # -- notices ----------------------------------------------------------------------------

    def notice(self, text: str) -> None:
        """Say `text` through the notices (in the next cell's output only under
        `ui.notices = "cell"`)."""
        self.notices.say(text)

    def flush_notices(self, stream: TextIO | None = None) -> None:
        """Print what was said between cells in the output of the cell that runs now, where
        notices go into cells (see `NoticeBoard.flush`)."""
        self.notices.flush(stream)

    def report(self, text: str, stream: TextIO | None = None, *, every_time: bool = False) -> None:
        """Say a problem: once, unless `every_time` (a capture failure is said in every cell
        it affects: said once, every later uncaptured cell looked fine); about the running
        cell (on `stream` where notices go into cells), else about the next one."""
        if text in self._reported and not every_time:
            return
        self._reported.add(text)
        self.notices.say(text, stream)

    # -- the agent's cell edits -------------------------------------------------------------

    def record_cell_edit(self, record: dict[str, Any]) -> None:
        """Record a cell edit the frontend applied, in the open frame (`notebook_edit`)."""
        ledger = self.ledger
        if ledger is None:
            raise RewindError("the thread ledger is unavailable for this session")
        checkpoints = self.checkpoints_if_on
        frame = checkpoints.current_frame if checkpoints is not None else None
        cell_edits.record_edit(ledger, frame, record)

    def cell_edits(self, frames: list[int]) -> list[CellEdit]:
        """The cell edits the given frames made, oldest first (what a rewind would take back)."""
        ledger = self.ledger
        return cell_edits.edits_of(ledger, frames) if ledger is not None else []

    def cell_part(self, item: ProjectionItem) -> tuple[CellRestore, list[CellEdit]] | None:
        """After a rewind or an undo: its cell part, recorded pending, with the edits to apply
        in order; None when the frames it moved edited no cell."""
        ledger = self.ledger
        restore = cell_edits.plan_for(ledger, item) if ledger is not None else None
        if ledger is None or restore is None:
            return None
        return restore, cell_edits.edits_by_seq(ledger, restore.edits)

    def pending_cell_parts(self) -> list[tuple[CellRestore, list[CellEdit]]]:
        """The cell parts of rewinds and undos no frontend has applied yet, oldest first."""
        ledger = self.ledger
        if ledger is None:
            return []
        return [(r, cell_edits.edits_by_seq(ledger, r.edits)) for r in cell_edits.pending(ledger)]

    def settle_cell_part(
        self,
        restore: CellRestore,
        state: Literal["applied", "skipped"],
        *,
        conflicts: list[str] | None = None,
        missing: list[str] | None = None,
    ) -> None:
        """Record what became of a cell part (the frontend applied it, or `--skip-cells`)."""
        ledger = self.ledger
        if ledger is not None:
            cell_edits.settle(ledger, restore, state, conflicts=conflicts, missing=missing)

    # -- the conversation -------------------------------------------------------------------

    def commit_run(self) -> None:
        """A run's acceptance check passed: record the conversation as committed (`run-commit`)."""
        ledger = self.ledger
        if ledger is not None:
            ledger.append(
                ProjectionItem,
                reason="run-commit",
                messages=ledger.messages(),
                note="the acceptance check passed",
                durable=True,
            )

    def clear_conversation(self) -> int:
        """Start the conversation afresh (a `clear` projection item); returns messages dropped."""
        ledger = self.ledger
        if ledger is None:
            raise RewindError("clear: the thread ledger is unavailable for this session")
        dropped = len(ledger.messages())
        ledger.append(ProjectionItem, reason="clear", messages=[], durable=True)
        return dropped

    def close(self) -> None:
        """Close the thread: its change watcher, background captures, ledger and lock."""
        self._thread.close()
