"""From the effective configuration to the open thread: the values a thread opens with, and
a new configuration snapshot handed down to it (capture limits, the side store, variables).

Must never: read configuration itself (it is handed the resolved snapshot), or open files.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..config import EffectiveConfig
from ..durable.blob_key import BlobKey
from ..snapshots.large_files import LargeLimits
from .open_thread import OpenThread, Reaper
from .threads import ThreadChoice


def apply_config(thread: OpenThread, config: EffectiveConfig) -> None:
    """Hand `config`'s capture settings to the open thread; they apply from the next cell."""
    checkpoints = thread.checkpoints
    snapshotter = checkpoints.snapshotter if checkpoints is not None else None
    if checkpoints is not None and snapshotter is not None:
        checkpoints.idle.disarm(wait=True)  # a look between cells must not race configure()
        snapshotter.configure(
            max_file_bytes=config.settings.checkpoints.max_file_bytes,
            extra_ignores=tuple(config.settings.checkpoints.ignore),
        )
        if snapshotter.large is not None:
            snapshotter.large.configure(large_limits(config))
    if thread.variables is not None:
        settings = config.settings.checkpoints
        thread.variables.configure(
            enabled=settings.variables,
            max_bytes=settings.max_variable_bytes,
            ignore=settings.variable_ignore,
        )


def open_thread(
    config: EffectiveConfig,
    env: Mapping[str, str],
    kernel_session: str,
    thread: ThreadChoice | None = None,
    *,
    reap: Reaper | None = None,
) -> OpenThread:
    """The open thread of `config`'s workspace: `thread`, else the one `env` names."""
    checkpoints = config.settings.checkpoints
    return OpenThread.open(
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
