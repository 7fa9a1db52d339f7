"""The agent, Jupyter-free: `AgentSession` is the one composition root of a run.

The kernel, `%load_ext logician_kernel` in a stock IPython, and scripts all use it. Nothing in
this package imports IPython, ipykernel, ipywidgets or comm (a subprocess test checks
`sys.modules` after a full run).
"""

from ..policy import ApprovalRequest
from ..tools._process_guard import reap_for_workspace
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
    "RewindScope",
    "RunOptions",
    "RunResult",
    "reap_for_workspace",
]
