"""The one error the agent's core raises for a user's mistake or an unusable session."""

from __future__ import annotations


class AgentError(ValueError):
    """A one-line explanation for the user (the kernel shows it as a usage error, a script
    sees it raised); never a traceback's worth of detail."""
