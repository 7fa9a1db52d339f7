"""The agent package's public surface, and the approval vocabulary declared once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import logician_kernel
import logician_kernel.agent as agent
from logician_kernel.ledger.thread_ledger import ApprovalResolved
from logician_kernel.policy.audit import Resolution
from logician_kernel.types.approvals import APPROVAL_CHOICES, CHOICE_LABELS

ROOT = Path(__file__).parents[3]
AGENT_API = {
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
}


def test_exported_names():
    assert set(agent.__all__) == AGENT_API
    assert all(hasattr(agent, name) for name in AGENT_API)
    assert logician_kernel.AgentSession is agent.AgentSession
    assert callable(logician_kernel.load_ipython_extension)
    assert callable(logician_kernel.unload_ipython_extension)


def test_every_view_of_the_approval_choices_is_the_one_declaration():
    choices = set(APPROVAL_CHOICES)
    assert "deny_and_stop" in choices and set(CHOICE_LABELS) == choices
    assert set(get_args(ApprovalResolved.model_fields["choice"].annotation)) == choices
    assert {r.removeprefix("user:") for r in get_args(Resolution) if r.startswith("user:")} == (
        choices
    )
    schema = json.loads((ROOT / "logician_kernel/jupyter/comm_schema.json").read_text())
    enums = re.findall(r'"choice": \{"enum": (\[[^\]]*\])', json.dumps(schema))
    assert enums and all(set(json.loads(e)) == choices for e in enums)
    ts = (ROOT / "labextension/src/protocol.ts").read_text()
    declared = re.search(r"export const CHOICES = \[([^\]]*)\]", ts)
    assert declared is not None
    assert set(re.findall(r"'(\w+)'", declared.group(1))) == choices


def test_the_architecture_is_documented_in_the_repository_and_names_real_modules():
    readme = (ROOT / "README.md").read_text()
    assert "](docs/architecture.md)" in readme and "../shared" not in readme
    doc = (ROOT / "docs/architecture.md").read_text()
    named = set(
        re.findall(
            r"`((?:agent|jupyter|loop|policy|session|compaction|config|events|"
            r"tools|providers|types)/[\w/]+\.py)`",
            doc,
        )
    )
    assert len(named) >= 10
    missing = sorted(p for p in named if not (ROOT / "logician_kernel" / p).exists())
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_the_agent_and_policy_modules_stay_under_400_lines():
    # STYLE: split at ~400 lines along a responsibility (agent/script.py, policy/_target.py).
    package = ROOT / "logician_kernel"
    sizes = {
        str(path.relative_to(package)): len(path.read_text().splitlines())
        for folder in ("agent", "policy")
        for path in (package / folder).glob("*.py")
    }
    assert {"agent/script.py", "policy/_target.py"} <= set(sizes)
    assert not {name: n for name, n in sizes.items() if n > 400}
