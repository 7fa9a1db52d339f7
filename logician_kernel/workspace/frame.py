"""The frame bracket: one cell (or one script run) as one frame, files and variables together.

`with workspace.frame(execution_count, cell_id, code) as frame:` is the only way a frame
opens and closes. The Logician kernel's `do_execute`, `%load_ext logician_kernel`'s
`pre_run_cell` / `post_run_cell` events and `AgentSession.run` all use it, so a cell's frame
records the same things whoever runs it: the pre-snapshot, the variables the cell may touch,
the post-snapshot and diff, the variables' manifest, the durable close, and the notices each
step owes the user (said through the workspace's `NoticeBoard`, about this cell: printed on
`stream`, in the cell's output, only under `ui.notices = "cell"` or where there is no notebook).

An interrupt (SIGINT, as a frontend's interrupt button or nbclient's timeout sends it) that
arrives while the bracket opens or closes the frame is held until that step is done
(`HeldInterrupt`): raised in the middle of it, it left a frame open in the ledger and its
changes unrecorded, and it escaped the kernel's `do_execute`, so the cell never got a reply.
One that came during the open is handed to the caller (`OpenFrame.interrupted`: the kernel
and `%load_ext` then stop the cell before its first statement, a script's run raises it);
one that came during the close, once the cell had finished, is said in the cell.

Must never: raise out of the bracket for a capture or ledger problem (the cell stands and the
problem is said, in every cell it affects), or let a rewind interleave with a frame's open or
close (both hold the workspace's `frame_lock`).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from ..durable.journal import JournalError
from ..durable.lease import LeaseLost
from ..frames.chain_verdict import external_notice
from ..frames.state_guard import heal_state_dir
from ..ledger.thread_ledger import FrameClose, FrameOutcome, VariableRecord

if TYPE_CHECKING:
    from .workspace import Workspace


@dataclass
class OpenFrame:
    """What the code inside the bracket sees of its frame."""

    frame: int | None
    """The frame's id; None when this cell is not a frame (frames off, the ledger failed)."""
    outcome: FrameOutcome = "ok"
    """How the cell ended, recorded at the close; the bracket sets `error` (`interrupted` for
    a KeyboardInterrupt or a cancellation) when an exception leaves it."""
    closed: FrameClose | None = None
    """The frame's close record, once the bracket has closed it (None if it recorded none)."""
    interrupted: bool = False
    """An interrupt arrived while the frame opened (held until it was open): the caller
    should stop the cell before it runs, as the interrupt meant."""


class HeldInterrupt:
    """`with HeldInterrupt() as held:` - SIGINT is recorded in `held.arrived` instead of
    raising KeyboardInterrupt inside the block. Only on the main thread, and only where an
    interrupt would raise (Python's default handler, as ipykernel installs it while a request
    is handled); anywhere else it changes nothing."""

    def __init__(self) -> None:
        self.arrived = False
        self._previous: object = None

    def _hold(self, signum: int, frame: object) -> None:
        self.arrived = True

    def __enter__(self) -> HeldInterrupt:
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            self._previous = signal.signal(signal.SIGINT, self._hold)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._previous = None


class CellFrame:
    """The context manager `Workspace.frame` returns (one use)."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        execution_count: int | None,
        cell_id: str | None,
        code: str,
        stream: TextIO | None,
        whole_first_snapshot: bool,
    ) -> None:
        self.workspace = workspace
        self.execution_count = execution_count
        self.cell_id = cell_id
        self.code = code
        self.stream = stream
        self.whole_first_snapshot = whole_first_snapshot
        self.open = OpenFrame(None)

    @property
    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stderr

    def __enter__(self) -> OpenFrame:
        notices = self.workspace.notices
        notices.cell(None, self.execution_count, self.cell_id)
        with HeldInterrupt() as held:
            self.open.frame = self._open_files()
            notices.cell(self.open.frame, self.execution_count, self.cell_id)
            variables = self.workspace.variables
            if variables is not None and self.open.frame is not None:
                variables.open(self.open.frame, self.code)
        self.open.interrupted = held.arrived
        return self.open

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.open.outcome = "error" if issubclass(exc_type, Exception) else "interrupted"
        try:
            with HeldInterrupt() as held, self.workspace.frame_lock:  # a sidebar's rewind waits
                self._close_variables()
                self.open.closed = self._close_files(self.open.outcome)
            if held.arrived:
                self.workspace.notices.say(
                    "Logician: an interrupt arrived after this cell had finished, while its frame "
                    "was being recorded; the frame was recorded whole first.",
                    self._out,
                )
        finally:
            self.workspace.notices.between_cells()

    # -- files -----------------------------------------------------------------------------

    def _open_files(self) -> int | None:
        """`whole_first_snapshot`: a frame opened during the background first snapshot waits
        for it instead of deferring its pre-snapshot to its first write (a script's run: no
        cell to keep responsive, and another program's writes during it are then told apart
        as external instead of reported as not captured)."""
        ws, out = self.workspace, self._out
        checkpoints = ws.checkpoints_if_on
        if checkpoints is None:
            return None
        if healed := heal_state_dir(checkpoints):  # e.g. `rm -rf .logician`
            ws.report(healed, out, every_time=True)
        if self.whole_first_snapshot and checkpoints.warming_up:
            ws.report(
                "Logician: finishing the first snapshot of this workspace before the run starts.",
                out,
            )
            checkpoints.wait_for_first_snapshot()
        elif checkpoints.first_snapshot_blocks:
            ws.report(
                "Logician: finishing the first snapshot of this workspace before the "
                "cell runs (only the first cell after the kernel starts waits).",
                out,
            )
        settings = ws.config.settings.checkpoints
        try:
            key = ws.config.api_key()
            with ws.frame_lock:  # a frontend's rewind (subshell thread) never interleaves
                if resumed := ws.heal.before_frame(checkpoints, self.execution_count):
                    ws.report(resumed, out, every_time=True)
                checkpoints.attribute_changes = settings.attribution
                checkpoints.idle.enabled = settings.scan_idle_looks
                return checkpoints.open_frame(
                    execution_count=self.execution_count,
                    cell_id=self.cell_id,
                    code=self.code,
                    secrets=(key.get_secret_value(),) if key is not None else (),
                )
        except LeaseLost as exc:
            ws.report(f"Logician: this cell is not a frame: {exc}", out, every_time=True)
            return None
        except (JournalError, OSError) as exc:
            # Said in every such cell: said once, the later cells looked like frames.
            ws.heal.not_recorded(self.execution_count)
            ws.report(
                f"Logician: this cell is not a frame: the ledger could not be written ({exc}); "
                "the next cell tries again",
                out,
                every_time=True,
            )
            return None

    def _close_files(self, outcome: FrameOutcome) -> FrameClose | None:
        ws, out = self.workspace, self._out
        checkpoints = ws.checkpoints_if_on
        if checkpoints is None or not checkpoints.is_open:
            return None
        try:
            closed = checkpoints.close_frame(outcome)
        except (JournalError, OSError) as exc:
            ws.report(
                f"Logician: this cell's frame could not be recorded ({exc}); the next "
                "cell closes it as 'failed' once the ledger can be written",
                out,
                every_time=True,
            )
            return None
        for text in checkpoints.drain_notices():
            ws.notices.say(text, out)
        if checkpoints.snapshotter is not None and (said := checkpoints.snapshotter.take_notice()):
            ws.report(said, out)
        if closed is None:
            return None
        if closed.capture_error:
            ws.report(
                f"Logician: file changes of this cell were not captured: {closed.capture_error}",
                out,
                every_time=True,
            )
        if external := external_notice(closed):
            ws.notices.say(external, out)
        if closed.skipped:
            names = ", ".join(s.path for s in closed.skipped[:3])
            more = f" and {len(closed.skipped) - 3} more" if len(closed.skipped) > 3 else ""
            ws.notices.say(
                f"Logician: frame {closed.frame}: {len(closed.skipped)} changed path(s) not "
                f"captured ({names}{more}); `%logician diff {closed.frame}` says why.",
                out,
            )
        return closed

    # -- variables -------------------------------------------------------------------------

    def _close_variables(self) -> None:
        """Store what the cell did to the namespace before its frame closes; never raises."""
        variables = self.workspace.variables
        if variables is None:
            return
        try:
            entry = variables.close()
        except Exception as exc:  # noqa: BLE001 - the ledger or disk failed; the cell stands
            self.workspace.notices.say(
                f"Logician: this cell's variables were not captured ({exc})", self._out
            )
            return
        line = not_captured_line(entry.frame, entry.records) if entry is not None else None
        if line:
            self.workspace.notices.say(line, self._out)


def not_captured_line(frame: int, records: Sequence[VariableRecord]) -> str | None:
    """The line a cell shows when some of the variables it created or changed could not be
    captured. A name recorded only because it shares objects with a changed one (`shared`)
    is not named again: its own change was reported when it happened."""
    missed = [r for r in records if r.not_captured and r.action != "shared"]
    if not missed:
        return None
    named = "; ".join(f"{r.name} ({r.not_captured})" for r in missed[:3])
    more = f"; and {len(missed) - 3} more" if len(missed) > 3 else ""
    return (
        f"Logician: frame {frame}: {len(missed)} variable(s) not captured, a rewind cannot "
        f"restore them: {named}{more}. `%logician vars {frame}` lists them."
    )
