"""`%%logician --profile NAME`: one run under a profile, the session's own config after it.

The profile is applied as a session-layer `profile` selection on a snapshot used for this
run only; when the run finishes, the snapshot the session had before comes back - or, when a
change was made during the run (an "always allow" rule saved), that newer snapshot with the
session's own profile selection restored.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ConfigError, EffectiveConfig
from ..workspace import Workspace
from .errors import AgentError

__all__ = ["ProfileSwap", "use_profile"]


@dataclass(frozen=True)
class ProfileSwap:
    """What to put back after the run."""

    before: EffectiveConfig
    """The session's snapshot before the run."""
    during: EffectiveConfig
    """The run's snapshot (the profile selected)."""

    def restore(self, runtime: Workspace) -> None:
        current = runtime.config
        if current is self.during:
            runtime.use_config(self.before)
            return
        # Changed during the run: keep the change, drop the run's profile selection.
        before = self.before.layer("session").data.get("profile")
        try:
            if "session" in self.before.applied_layers and before is not None:
                runtime.use_config(current.with_session({"profile": before}))
            else:
                from ..config import commands

                runtime.use_config(commands.config_unset(current, "profile")[0])
        except ConfigError:
            runtime.use_config(self.before)


def use_profile(runtime: Workspace, name: str | None) -> ProfileSwap | None:
    """Select profile `name` for the next run; an unknown one is an `AgentError` naming the
    known profiles."""
    if name is None:
        return None
    before = runtime.config
    try:
        during = before.with_session({"profile": name})
    except ConfigError as exc:
        raise AgentError(f"--profile {name}: {exc}") from None
    runtime.use_config(during)
    return ProfileSwap(before, during)
