"""Logician Kernel: a durable, rewindable coding agent for notebooks and scripts.

`from logician_kernel import AgentSession` is the Python API (no Jupyter needed);
`%load_ext logician_kernel` brings the magics and per-cell frames into any IPython.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .agent import AgentError, AgentSession, RunResult

__all__ = [
    "AgentError",
    "AgentSession",
    "RunResult",
    "__version__",
    "load_ipython_extension",
    "unload_ipython_extension",
]


def __getattr__(name: str) -> Any:
    # Imported on first use: `import logician_kernel.cli` (the `logician` command) and the
    # kernel's own start-up need none of the agent.
    if name in ("AgentError", "AgentSession", "RunResult"):
        from . import agent

        return getattr(agent, name)
    raise AttributeError(f"module 'logician_kernel' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext logician_kernel`: magics and per-cell frames in this IPython."""
    from .jupyter.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext logician_kernel`: remove every hook `load_ipython_extension` added."""
    from .jupyter.extension import unload

    unload(ipython)
