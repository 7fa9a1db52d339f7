"""The MCP SDK is an extra (`pip install 'logician-kernel[mcp]'`): without it the kernel, the
magics and `AgentSession` work, and a configured server fails with one message naming the fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from logician_kernel.config import McpSettings
from logician_kernel.mcp import McpManager

FIX = "pip install 'logician-kernel[mcp]'"


@pytest.fixture
def no_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the `mcp` distribution were not installed: every import of it fails."""
    for name in [n for n in sys.modules if n == "mcp" or n.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "mcp", None)


def test_a_configured_server_fails_naming_the_extra_and_nothing_is_started(
    tmp_path: Path, no_sdk: None
) -> None:
    manager = McpManager(tmp_path, {})
    try:
        manager.apply(
            McpSettings.model_validate(
                {"servers": {"notes": {"command": sys.executable, "args": ["-c", "pass"]}}}
            )
        )
        (status,) = manager.status()
        assert status.state == "failed"
        assert FIX in (status.error or "")
        assert manager.tools() == {}
        assert not (tmp_path / ".logician/processes").exists() or not list(
            (tmp_path / ".logician/processes").glob("*.json")
        )
    finally:
        manager.close()


def test_the_kernel_and_agent_session_import_without_the_sdk(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["mcp"] = None  # the extra is not installed
        import logician_kernel.jupyter.kernel
        from logician_kernel import AgentSession
        session = AgentSession.open(workspace=sys.argv[1], thread="t")
        session.close()
        print("ok", "mcp.client" in " ".join(sys.modules))
        """
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"LOGICIAN_CONFIG_DIR": str(tmp_path / "c"), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["ok", "False"]
