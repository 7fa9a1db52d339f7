"""The agent, Jupyter-free: `AgentSession` is the one composition root of a run.

The kernel, `%load_ext logician_kernel` in a stock IPython, and scripts all use it. Nothing in
this package imports IPython, ipykernel, ipywidgets or comm (a subprocess test checks
`sys.modules` after a full run).

Its names load on first use (module `__getattr__`): importing a light module of the package
(`agent.notebook_context`, `agent.threads`, ...) or the package itself must not bring in the
run's machinery (the loop, the providers and httpx, the permission policy, MCP), which a kernel
needs only at its first agent run (docs/architecture.md, "What loads when").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..policy import ApprovalRequest, AuditLog
    from ..tools._process_guard import guard_kernel_tree, reap_for_workspace
    from ..types.rewind_scope import RewindScope
    from .approvals import ApprovalBroker
    from .errors import AgentError
    from .policy import RunOptions
    from .session import AgentSession, RunResult

__all__ = [
    "AgentError",
    "AgentSession",
    "ApprovalBroker",
    "ApprovalRequest",
    "AuditLog",
    "RewindScope",
    "RunOptions",
    "RunResult",
    "guard_kernel_tree",
    "reap_for_workspace",
]

_WHERE = {
    "AgentError": ".errors",
    "AgentSession": ".session",
    "ApprovalBroker": ".approvals",
    "ApprovalRequest": "..policy",
    "AuditLog": "..policy",
    "RewindScope": "..types.rewind_scope",
    "RunOptions": ".policy",
    "RunResult": ".session",
    "guard_kernel_tree": "..tools._process_guard",
    "reap_for_workspace": "..tools._process_guard",
}
"""Each name of `__all__` -> the module it is imported from on first use."""


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value
