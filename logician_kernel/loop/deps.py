"""`HarnessDeps`: every collaborator one harness run talks to, bundled and handed in.

The composition root (`agent/`) builds one bundle per run; the harness and its steps (the
compaction step, tool execution) read their collaborators from it, never from each other and
never from a module-global. `ToolCallAudit` is the port through which the process's own writes
are attributed to the tool call that made them (the kernel hands in the snapshot layer's write
audit; tests and scripts without frames get `NO_AUDIT`).

Must never: import `snapshots/` or `frames/` (the audit is handed in), or hold state of a run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Protocol

from logician_kernel.policy.gate import PermissionGate
from logician_kernel.policy.run_controller import RunController
from logician_kernel.providers import Provider
from logician_kernel.tools import Tool, ToolContext

from .hooks import Hooks
from .run_store import RunStore


class ToolCallAudit(Protocol):
    """Attributes what the process writes or spawns to the tool call running at the time."""

    def tool_call(self, call_id: str, name: str) -> AbstractContextManager[None]:
        """A context inside which every write of this process belongs to `call_id`."""
        ...


class _NoAudit:
    """Attributes nothing: for runs without frames (tests, benchmarks)."""

    @contextmanager
    def tool_call(self, call_id: str, name: str) -> Iterator[None]:
        yield


NO_AUDIT: ToolCallAudit = _NoAudit()
"""The audit that attributes nothing."""


@dataclass(frozen=True)
class HarnessDeps:
    """The collaborators of one harness: what it calls, never how it is configured."""

    provider: Provider
    """The model provider every model request (and compaction summary) goes to."""
    tools: Mapping[str, Tool]
    """The harness's own tools, by name."""
    ctx: ToolContext
    """What the tools are lent for each call (the harness sets `call_id` per call)."""
    store: RunStore
    """Where the run's durable facts go, at turn and tool boundaries."""
    hooks: Hooks | None = None
    """Observers of the run (and `check_tool`, which may refuse a call); None: none."""
    gate: PermissionGate | None = None
    """Decides every valid call before its intent is recorded; None: every call runs."""
    controller: RunController | None = None
    """Enforces the run budget and the acceptance check (restarted at every run); None: one
    is built from the harness's `limits` for each run."""
    audit: ToolCallAudit = NO_AUDIT
    """Attributes the process's writes during a tool call to that call."""
    more_tools: Callable[[], Mapping[str, Tool]] | None = None
    """Asked before every model request for tools that come and go (the MCP servers ready by
    then); never replaces one of `tools`."""
