"""The policy package exports what we mean, and stays Jupyter-free."""

from __future__ import annotations

import subprocess
import sys

import logician_kernel.policy as policy

POLICY_API = {
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
}


def test_exported_names():
    assert set(policy.__all__) == POLICY_API
    assert all(hasattr(policy, name) for name in POLICY_API)


def test_importing_policy_and_the_todo_capability_pulls_in_no_jupyter():
    code = (
        "import sys, logician_kernel.policy, logician_kernel.loop.todo\n"
        "import logician_kernel.types.task_ledger\n"
        "banned = {'IPython', 'ipykernel', 'ipywidgets', 'comm'} & set(sys.modules)\n"
        "assert not banned, banned\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
