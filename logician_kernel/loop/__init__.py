"""The agent loop: one run per `%%logician` cell, reported as harness events.

Jupyter-free: the kernel drives `AgentHarness.run`, implements `RunStore` over its ledger and
hands the harness its collaborators in one `HarnessDeps` (the write audit among them).
"""

from ._conversation import UNANSWERED_CALL
from .agent_harness import AgentHarness
from .deps import NO_AUDIT, HarnessDeps, ToolCallAudit
from .drive import drive_run
from .hooks import Hooks
from .prompt import DEFAULT_SYSTEM_PROMPT, system_prompt
from .run_store import RunStore

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "NO_AUDIT",
    "UNANSWERED_CALL",
    "AgentHarness",
    "HarnessDeps",
    "Hooks",
    "RunStore",
    "ToolCallAudit",
    "drive_run",
    "system_prompt",
]
