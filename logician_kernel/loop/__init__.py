"""The agent loop: one run per `%%logician` cell, reported as harness events.

Jupyter-free: the kernel drives `AgentHarness.run` and implements `RunStore` over its ledger.
"""

from ._conversation import UNANSWERED_CALL
from .agent_harness import AgentHarness
from .drive import drive_run
from .hooks import Hooks
from .prompt import DEFAULT_SYSTEM_PROMPT, system_prompt
from .run_store import RunStore

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "UNANSWERED_CALL",
    "AgentHarness",
    "Hooks",
    "RunStore",
    "drive_run",
    "system_prompt",
]
