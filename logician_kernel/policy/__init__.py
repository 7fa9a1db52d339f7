"""Run policy: permissions (allow / ask / deny) and their audit log, the run budget, stop
conditions and acceptance checks. Names load from their modules on first use (`_lazy`):
the comm's message models need `ApprovalPrompt`, not the run's budget and its providers.

Jupyter-free. Reads only the resolved configuration snapshot it is handed, never a file of
configuration; its only writes are the audit log's appends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._layers import config_layer_of
    from ._rules import parse_rule
    from .audit import AUDIT_FILE, AuditEntry, AuditLog, AuditLogError, format_audit, mask_arguments
    from .execution_policy import AcceptanceCheck, AcceptanceResult
    from .gate import (
        ApprovalChoice,
        ApprovalPrompt,
        ApprovalRequest,
        ApprovalResolution,
        GateResult,
        PermissionGate,
        PolicyGate,
    )
    from .permissions import (
        MODES,
        PermissionDecision,
        PermissionMode,
        PermissionPolicy,
    )
    from .run_budget import RunBudget
    from .run_controller import RunController

__all__ = [
    "AUDIT_FILE",
    "MODES",
    "AcceptanceCheck",
    "AcceptanceResult",
    "ApprovalChoice",
    "ApprovalPrompt",
    "ApprovalRequest",
    "ApprovalResolution",
    "AuditEntry",
    "AuditLog",
    "AuditLogError",
    "GateResult",
    "PermissionDecision",
    "PermissionGate",
    "PermissionMode",
    "PermissionPolicy",
    "PolicyGate",
    "RunBudget",
    "RunController",
    "config_layer_of",
    "format_audit",
    "mask_arguments",
    "parse_rule",
]

__getattr__ = exports(__name__)
