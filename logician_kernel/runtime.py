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
from typing import Any, TextIO

from .config import EffectiveConfig, load_effective_config
from .session.file_checkpoints import FileCheckpoints, RewindError
from .session.journal import JournalError
from .session.state_guard import heal_state_dir
from .session.thread_ledger import FrameClose, ProjectionItem
from .session.workspace_session import WorkspaceSession


class LogicianRuntime:
    """One kernel session's configuration and workspace state."""

    def __init__(
        self, config: EffectiveConfig, session: WorkspaceSession, env: Mapping[str, str]
    ) -> None:
        self.config = config
        self.session = session
        self.env = dict(env)
        self.frontend_can_answer = False
        """Whether the cell running now may ask on stdin (its execute request allowed it)."""
        self._policy: Any = None
        self._policy_config: EffectiveConfig | None = None
        self._notices: list[str] = [*config.notices, *session.notices]
        self.frame_lock = threading.RLock()
        """Held while a frame opens and while a rewind runs: they never interleave."""
        self._reported_errors: set[str] = set()

    @classmethod
    def start(
        cls, start_dir: Path, *, env: Mapping[str, str], kernel_session: str = ""
    ) -> LogicianRuntime:
        config = load_effective_config(start_dir, env=env)
        checkpoints = config.settings.checkpoints
        session = WorkspaceSession.open(
            config.workspace,
            env=env,
            capture_enabled=checkpoints.enabled,
            max_file_bytes=checkpoints.max_file_bytes,
            extra_ignores=tuple(checkpoints.ignore),
            kernel_session=kernel_session,
        )
        return cls(config, session, env)

    # -- configuration ----------------------------------------------------------------------

    def use_config(self, config: EffectiveConfig) -> None:
        """Hand a new snapshot down; capture limits apply from the next cell on."""
        self.config = config
        snapshotter = self.session.checkpoints.snapshotter if self.session.checkpoints else None
        if snapshotter is not None:
            snapshotter.configure(
                max_file_bytes=config.settings.checkpoints.max_file_bytes,
                extra_ignores=tuple(config.settings.checkpoints.ignore),
            )

    def permission_policy(self, factory: Callable[[], Any]) -> Any:
        """The session's permission policy, rebuilt when the configuration changes, keeping the
        rules the user allowed "for this session"."""
        if self._policy is None or self._policy_config is not self.config:
            kept = tuple(self._policy.session_rules) if self._policy is not None else ()
            self._policy = factory()
            for rule in kept:
                self._policy.allow_for_session(rule)
            self._policy_config = self.config
        return self._policy

    def reload_config(self) -> EffectiveConfig:
        """Load the layers again (after `trust`), keeping this session's overrides."""
        self.use_config(
            load_effective_config(
                self.config.start_dir, env=self.env, session=self.config.layer("session").data
            )
        )
        return self.config

    @property
    def checkpoints(self) -> FileCheckpoints:
        if self.session.checkpoints is None:
            raise RewindError(
                f"frames are off for this session ({self.session.workspace / '.logician'} "
                "could not be opened; see the first cell's output)"
            )
        return self.session.checkpoints

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
        self, *, execution_count: int | None, cell_id: str | None, code: str, stream: TextIO
    ) -> None:
        if self.session.checkpoints is None:
            return
        if healed := heal_state_dir(self.session.checkpoints):  # e.g. `rm -rf .logician`
            self._report(healed, stream, every_time=True)
        if self.session.checkpoints.warming_up:
            self._report("Logician: finishing the first snapshot of this workspace before the "
                         "cell runs (only the first cell after the kernel starts waits).", stream)  # fmt: skip
        try:
            key = self.config.api_key()
            with self.frame_lock:  # a frontend's rewind (subshell thread) never interleaves
                self.session.checkpoints.open_frame(
                    execution_count=execution_count,
                    cell_id=cell_id,
                    code=code,
                    secrets=(key.get_secret_value(),) if key is not None else (),
                )
        except (JournalError, OSError) as exc:
            self._report(
                f"Logician: this cell is not a frame: the ledger could not be written ({exc})",
                stream,
            )

    def close_frame(self, outcome: str, stream: TextIO) -> FrameClose | None:
        checkpoints = self.session.checkpoints
        if checkpoints is None or not checkpoints.is_open:
            return None
        try:
            closed = checkpoints.close_frame(outcome)  # type: ignore[arg-type]
        except (JournalError, OSError) as exc:
            self._report(f"Logician: this cell's frame could not be recorded ({exc})", stream)
            return None
        if closed is None:
            return None
        if closed.capture_error:
            self._report(
                f"Logician: file changes of this cell were not captured: {closed.capture_error}",
                stream,
                every_time=True,
            )
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
            ledger.append(ProjectionItem, reason="run-commit", messages=ledger.messages(),
                          note="the acceptance check passed", durable=True)  # fmt: skip

    def clear_conversation(self) -> int:
        """Start the conversation afresh (a `clear` projection item); returns messages dropped."""
        ledger = self.session.ledger
        if ledger is None:
            raise RewindError("clear: the thread ledger is unavailable for this session")
        dropped = len(ledger.messages())
        ledger.append(ProjectionItem, reason="clear", messages=[], durable=True)
        return dropped

    def rewind(
        self, spec: str, *, force: bool = False, files: bool = True, conversation: bool = True
    ) -> ProjectionItem:
        checkpoints = self.checkpoints
        frame_id = checkpoints.resolve_target(spec)
        try:
            return checkpoints.rewind(frame_id, force=force, files=files, conversation=conversation)
        except JournalError as exc:
            raise RewindError(f"rewind: the ledger could not be written ({exc})") from exc

    def close(self) -> None:
        self.session.close()
