"""Protected paths: `.git/` anywhere (nested repositories, submodules), `.logician/` and the
kernel's own files are never written without an explicit ask naming the risk - in every
mode, full-auto and allow rules included."""

from __future__ import annotations

import pytest

from logician_kernel.config._schema import PermissionSettings
from logician_kernel.policy import MODES, PermissionPolicy
from logician_kernel.policy._protected import KERNEL_PACKAGE


@pytest.mark.parametrize("mode", [m for m in MODES if m != "read-only"])
@pytest.mark.parametrize(
    ("path", "action", "says"),
    [
        ("sub/.git/config", "ask", "nested repository"),
        ("sub/.git/hooks/pre-commit", "ask", "run any command"),
        ("vendor/lib/.git/modules/x/config", "ask", "nested repository"),
        ("sub/.logician/threads/t.jsonl", "ask", "ledger"),
        (".git/hooks/post-checkout", "deny", "run any command"),
        (".logician/audit.jsonl", "deny", "audit log"),
    ],
)
def test_protected_writes_ask_or_are_refused_in_every_mode(tmp_path, mode, path, action, says):
    p = PermissionPolicy(
        PermissionSettings(mode=mode, allow=("write", "edit(**)")), workspace=tmp_path
    )
    for tool in ("write", "edit"):
        decision = p.decide(tool, False, {"path": path, "content": "x"})
        assert (decision.action, decision.basis) == (action, "protected_path"), (tool, decision)
        assert says in decision.reason and not decision.routine


def test_commands_that_name_a_git_dir_ask_even_in_full_auto(tmp_path):
    p = PermissionPolicy(PermissionSettings(mode="full-auto"), workspace=tmp_path)
    for command in ("echo x > sub/.git/hooks/pre-commit", "cp evil .git/config", "ls .logician/"):
        decision = p.decide("bash", False, {"command": command})
        assert (decision.action, decision.basis) == ("ask", "protected_path"), command
    code = "open('sub/.git/config', 'a').write('[core]\\nfsmonitor = x')"
    assert p.decide("python", False, {"code": code}).action == "ask"
    for benign in ("cat .gitignore", "git status", "echo .github/workflows"):
        assert p.decide("bash", False, {"command": benign}).action == "allow", benign


def test_the_kernels_own_files_ask(tmp_path):
    p = PermissionPolicy(PermissionSettings(mode="full-auto"), workspace=KERNEL_PACKAGE.parent)
    decision = p.decide("edit", False, {"path": "logician_kernel/policy/permissions.py"})
    assert decision.action == "ask" and "kernel's own files" in decision.reason
