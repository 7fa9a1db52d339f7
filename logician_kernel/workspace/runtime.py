"""The kernel-side runtime: the effective configuration plus this session's workspace state.

Owns the wiring between configuration (loaded once, handed down) and the durable session
(ledger, frames), and the user-facing notices they produce. It is what the Jupyter shell and
the headless runner talk to; it imports nothing from Jupyter.

Must never: let a problem with `.logician/`, git or the ledger escape into a user's cell.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from ..config import EffectiveConfig, load_effective_config
from ..durable.blob_key import BlobKey
from ..durable.journal import JournalError
from ..frames import undo
from ..frames.attribution import external_notice
from ..frames.capture_heal import CaptureHeal
from ..frames.file_checkpoints import FileCheckpoints, RewindError
from ..frames.recovery import CallRewindError, rewind_call
from ..frames.state_guard import heal_state_dir
from ..frames.variable_checkpoints import VariableCheckpoints
from ..ledger.rewind_state import rewind_state
from ..ledger.thread_ledger import CallRewound, FrameClose, ProjectionItem, ThreadLedger
from ..snapshots.large_files import LargeLimits
from .session import Reaper, WorkspaceSession
from .threads import ThreadChoice, ThreadSource


class LogicianRuntime:
    """One kernel session's configuration and workspace state."""

    def __init__(
        self, config: EffectiveConfig, session: WorkspaceSession, env: Mapping[str, str]
    ) -> None:
        self.config = config
        self.session = session
        self.env = dict(env)
        self._notices: list[str] = [*config.notices, *session.notices]
        self.frame_lock = threading.RLock()
        """Held while a frame opens and while a rewind runs: they never interleave."""
        self._reported_errors: set[str] = set()
        self._heal = CaptureHeal()  # cells the ledger missed; healed before the next frame
        self.reap: Reaper | None = None
        """Handed to each thread's session as it opens (see `WorkspaceSession.open`)."""
        self.kernel_session = ""
        """The kernel session id recorded in each thread this runtime opens."""
        self.thread_listeners: list[Callable[[], None]] = []
        """Called after `use_thread` moved this runtime to another thread (the kernel rebinds
        the variables store, the frontends re-read the frames)."""

    @classmethod
    def start(
        cls,
        start_dir: Path,
        *,
        env: Mapping[str, str],
        kernel_session: str = "",
        reap: Reaper | None = None,
    ) -> LogicianRuntime:
        """`reap`: see `WorkspaceSession.open` (the kernel hands in the process guard's)."""
        config = load_effective_config(start_dir, env=env)
        runtime = cls(config, open_session(config, env, kernel_session, reap=reap), env)
        runtime.kernel_session = kernel_session
        runtime.reap = reap
        return runtime

    # -- configuration ----------------------------------------------------------------------

    def use_config(self, config: EffectiveConfig) -> None:
        """Hand a new snapshot down; capture limits apply from the next cell on."""
        self.config = config
        snapshotter = self.session.checkpoints.snapshotter if self.session.checkpoints else None
        if snapshotter is not None:
            # A look between cells must not overwrite what configure() resets.
            self.session.checkpoints.idle.disarm(wait=True)  # type: ignore[union-attr]
            snapshotter.configure(
                max_file_bytes=config.settings.checkpoints.max_file_bytes,
                extra_ignores=tuple(config.settings.checkpoints.ignore),
            )
            if snapshotter.large is not None:
                snapshotter.large.configure(large_limits(config))
        if self.session.variables is not None:
            settings = config.settings.checkpoints
            self.session.variables.configure(
                enabled=settings.variables,
                max_bytes=settings.max_variable_bytes,
                ignore=settings.variable_ignore,
            )

    def reload_config(self) -> EffectiveConfig:
        """Load the layers again (after `trust`), keeping this session's overrides."""
        self.use_config(
            load_effective_config(
                self.config.start_dir, env=self.env, session=self.config.layer("session").data
            )
        )
        return self.config

    def use_thread(self, choice: ThreadChoice) -> list[str]:
        """Close this session's thread and open `choice`'s; returns the new thread's notices.

        Refused while a frame is open (the cell's frame belongs to the thread it opened in).
        Notices of the old thread not yet shown are dropped: they no longer apply."""
        with self.frame_lock:
            checkpoints = self.session.checkpoints
            if checkpoints is not None and checkpoints.is_open:
                raise RewindError(
                    f"thread use: this cell is frame {checkpoints.current_frame} of thread "
                    f"{self.thread_id!r}; switch in a cell of its own"
                )
            old = self.session
            stale = set(old.notices)
            old.close()
            self.session = open_session(
                self.config, self.env, self.kernel_session, choice, reap=self.reap
            )
            self._notices = [n for n in self._notices if n not in stale]
        for listener in list(self.thread_listeners):
            listener()
        return list(self.session.notices)

    @property
    def thread_source(self) -> ThreadSource:
        return self.session.thread_source

    @property
    def ledger(self) -> ThreadLedger | None:
        """This session's thread ledger; None when `.logician/` could not be opened."""
        return self.session.ledger

    @property
    def thread_id(self) -> str:
        return self.session.thread_id

    @property
    def workspace(self) -> Path:
        return self.session.workspace

    @property
    def checkpoints_if_on(self) -> FileCheckpoints | None:
        """The frame store, or None when frames are off for this session."""
        return self.session.checkpoints

    @property
    def checkpoints(self) -> FileCheckpoints:
        if self.session.checkpoints is None:
            raise RewindError(
                f"frames are off for this session ({self.session.workspace / '.logician'} "
                "could not be opened; see the first cell's output)"
            )
        return self.session.checkpoints

    @property
    def variables(self) -> VariableCheckpoints | None:
        """The variables store, or None when frames are off for this session."""
        return self.session.variables

    # -- notices ----------------------------------------------------------------------------

    def notice(self, text: str) -> None:
        self._notices.append(text)

    def flush_notices(self, stream: TextIO) -> None:
        """Show pending notices once, in the output of the cell that runs next."""
        notices, self._notices = self._notices, []
        for text in notices:
            print(text, file=stream)

    # -- frames -----------------------------------------------------------------------------

    def open_frame(
        self,
        *,
        execution_count: int | None,
        cell_id: str | None,
        code: str,
        stream: TextIO,
        whole_first_snapshot: bool = False,
    ) -> None:
        """`whole_first_snapshot`: a frame opened during the background first snapshot waits
        for it instead of deferring its pre-snapshot to its first write (a script's run: no
        cell to keep responsive, and another program's writes during it are then told apart
        as external instead of reported as not captured)."""
        if self.session.checkpoints is None:
            return
        if healed := heal_state_dir(self.session.checkpoints):  # e.g. `rm -rf .logician`
            self._report(healed, stream, every_time=True)
        if whole_first_snapshot and self.session.checkpoints.warming_up:
            self._report(
                "Logician: finishing the first snapshot of this workspace before the run starts.",
                stream,
            )
            self.session.checkpoints.wait_for_first_snapshot()
        elif self.session.checkpoints.first_snapshot_blocks:
            self._report(
                "Logician: finishing the first snapshot of this workspace before the "
                "cell runs (only the first cell after the kernel starts waits).",
                stream,
            )
        try:
            key = self.config.api_key()
            with self.frame_lock:  # a frontend's rewind (subshell thread) never interleaves
                if resumed := self._heal.before_frame(self.session.checkpoints, execution_count):
                    self._report(resumed, stream, every_time=True)
                self.session.checkpoints.attribute_changes = (
                    self.config.settings.checkpoints.attribution
                )
                self.session.checkpoints.idle.enabled = (
                    self.config.settings.checkpoints.scan_idle_looks
                )
                self.session.checkpoints.open_frame(
                    execution_count=execution_count,
                    cell_id=cell_id,
                    code=code,
                    secrets=(key.get_secret_value(),) if key is not None else (),
                )
        except (JournalError, OSError) as exc:
            # Said in every such cell: said once, the later cells looked like frames.
            self._heal.not_recorded(execution_count)
            self._report(
                f"Logician: this cell is not a frame: the ledger could not be written ({exc}); "
                "the next cell tries again",
                stream,
                every_time=True,
            )

    def close_frame(self, outcome: str, stream: TextIO) -> FrameClose | None:
        checkpoints = self.session.checkpoints
        if checkpoints is None or not checkpoints.is_open:
            return None
        try:
            with self.frame_lock:  # a frontend's rewind asked meanwhile waits for the close
                closed = checkpoints.close_frame(outcome)  # type: ignore[arg-type]
        except (JournalError, OSError) as exc:
            self._report(
                f"Logician: this cell's frame could not be recorded ({exc}); the next "
                "cell closes it as 'failed' once the ledger can be written",
                stream,
                every_time=True,
            )
            return None
        for text in checkpoints.drain_notices():
            print(text, file=stream)
        if checkpoints.snapshotter is not None and (said := checkpoints.snapshotter.take_notice()):
            self._report(said, stream)
        if closed is None:
            return None
        if closed.capture_error:
            self._report(
                f"Logician: file changes of this cell were not captured: {closed.capture_error}",
                stream,
                every_time=True,
            )
        if external := external_notice(closed):
            print(external, file=stream)
        if closed.skipped:
            names = ", ".join(s.path for s in closed.skipped[:3])
            more = f" and {len(closed.skipped) - 3} more" if len(closed.skipped) > 3 else ""
            print(
                f"Logician: frame {closed.frame}: {len(closed.skipped)} changed path(s) not "
                f"captured ({names}{more}); `%logician diff {closed.frame}` says why.",
                file=stream,
            )
        return closed

    def _report(self, text: str, stream: TextIO | None = None, *, every_time: bool = False) -> None:
        # A capture failure is said in every cell it affects (`every_time`): saying it once
        # made every later uncaptured cell look fine.
        if text in self._reported_errors and not every_time:
            return
        self._reported_errors.add(text)
        if stream is None:
            self.notice(text)
        else:
            print(text, file=stream)

    def commit_run(self) -> None:
        """A run's acceptance check passed: record the conversation as committed (`run-commit`)."""
        ledger = self.session.ledger
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
        ledger = self.session.ledger
        if ledger is None:
            raise RewindError("clear: the thread ledger is unavailable for this session")
        dropped = len(ledger.messages())
        ledger.append(ProjectionItem, reason="clear", messages=[], durable=True)
        return dropped

    def rewind(
        self,
        spec: str,
        *,
        force: bool = False,
        files: bool = True,
        conversation: bool = True,
        variables: bool = True,
        resume: bool = False,
        skip_failed: bool = False,
        include_external: bool = False,
    ) -> ProjectionItem:
        with self.frame_lock:  # never interleaved with a frame opening or closing
            return self._rewind(
                spec,
                force=force,
                files=files,
                conversation=conversation,
                variables=variables,
                resume=resume,
                skip_failed=skip_failed,
                include_external=include_external,
            )

    def _rewind(
        self,
        spec: str,
        *,
        force: bool,
        files: bool,
        conversation: bool,
        variables: bool,
        resume: bool,
        skip_failed: bool,
        include_external: bool,
    ) -> ProjectionItem:
        checkpoints = self.checkpoints
        if resume or skip_failed:
            return self._resume(force=force, skip_failed=skip_failed, retry=resume)
        frame_id = checkpoints.resolve_target(spec)
        namespace = self.session.variables if variables else None
        try:
            return checkpoints.rewind(
                frame_id,
                force=force,
                files=files,
                conversation=conversation,
                include_external=include_external,
                variables=(lambda: namespace.rewind(frame_id)) if namespace is not None else None,
            )
        except JournalError as exc:
            raise RewindError(f"rewind: the ledger could not be written ({exc})") from exc

    def rewind_call(self, call_id: str, *, force: bool = False) -> CallRewound:
        """`rewind --call`: put back the pre-images one tool call recorded (frames stay)."""
        snapshotter = self.checkpoints.snapshotter
        self.checkpoints.settle()  # a background capture of large files uses the snapshotter
        with self.frame_lock:
            try:
                return rewind_call(self.checkpoints.ledger, snapshotter, call_id, force=force)
            except CallRewindError as exc:
                raise RewindError(str(exc)) from None
            except JournalError as exc:
                raise RewindError(
                    f"rewind --call: the ledger could not be written ({exc})"
                ) from exc

    def _resume(
        self, *, force: bool, skip_failed: bool = False, retry: bool = True
    ) -> ProjectionItem:
        """Complete the rewind a crash cut short or a failed path left incomplete (`rewind
        --resume`), or finish an incomplete one without its failed paths (`--skip-failed`)."""
        checkpoints = self.checkpoints
        state = rewind_state(checkpoints.ledger)
        record = state.pending
        command = "rewind --resume" if retry else "rewind --skip-failed"
        if record is None:
            raise RewindError(
                f"{command}: no rewind was interrupted or is incomplete; nothing to resume"
            )
        if not retry and not state.failed:
            raise RewindError(
                "rewind --skip-failed: the pending rewind failed no path (it was "
                "interrupted); `%logician rewind --resume` completes it"
            )
        namespace = self.session.variables if record.variables else None
        try:
            return checkpoints.complete(
                record,
                resume=retry,
                force=force,
                skip_failed=skip_failed,
                variables=(lambda: namespace.rewind(record.frame))
                if namespace is not None
                else None,
            )
        except JournalError as exc:
            raise RewindError(f"rewind --resume: the ledger could not be written ({exc})") from exc

    def undo_rewind(self, *, force: bool = False, skip_failed: bool = False) -> ProjectionItem:
        """Take back the most recent rewind exactly (`%logician undo`)."""
        try:
            with self.frame_lock:  # like a rewind: never interleaved with a frame's open or close
                return undo.undo_rewind(
                    self.checkpoints, self.session.variables, force=force, skip_failed=skip_failed
                )
        except JournalError as exc:
            raise RewindError(f"undo: the ledger could not be written ({exc})") from exc

    def close(self) -> None:
        self.session.close()


def open_session(
    config: EffectiveConfig,
    env: Mapping[str, str],
    kernel_session: str,
    thread: ThreadChoice | None = None,
    *,
    reap: Reaper | None = None,
) -> WorkspaceSession:
    """The workspace session for `config`, on `thread` (else the one `env` names)."""
    checkpoints = config.settings.checkpoints
    return WorkspaceSession.open(
        config.workspace,
        env=env,
        capture_enabled=checkpoints.enabled,
        max_file_bytes=checkpoints.max_file_bytes,
        extra_ignores=tuple(checkpoints.ignore),
        kernel_session=kernel_session,
        large=large_limits(config),
        change_detection=checkpoints.change_detection,
        variables={
            "enabled": checkpoints.variables,
            "max_bytes": checkpoints.max_variable_bytes,
            "ignore": tuple(checkpoints.variable_ignore),
        },
        thread=thread,
        state_key=BlobKey.in_dir(config.user_dir),
        reap=reap,
    )


def large_limits(config: EffectiveConfig) -> LargeLimits:
    """The side store's limits from the `checkpoints.*` settings."""
    c = config.settings.checkpoints
    return LargeLimits(
        threshold=c.large_file_bytes,
        max_store_bytes=c.max_store_bytes,
        keep_recent_frames=c.keep_recent_frames,
        min_free_bytes=c.min_free_bytes,
    )
