"""An MCP server that dies at start says how (issue 36): before, the only reason shown was
the SDK's `McpError: Connection closed`, though docs/mcp.md promised "exited with status N"
and the server's stderr (in `.logician/logs/mcp-NAME.log`) said why."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2]))

from mcp_servers.helpers import wait_until  # noqa: E402

from logician_kernel.config import McpSettings  # noqa: E402
from logician_kernel.mcp import McpManager  # noqa: E402

SECRET = "tok-3f9a8b7c6d5e4f3a2b1c"
DIES = (
    "import os, sys\n"
    "sys.stderr.write('starting up\\n')\n"
    "sys.stderr.write('fatal: token ' + os.environ['API_TOKEN'] + ' was refused\\n\\n')\n"
    "sys.exit(3)\n"
)


PATIENT = {"connect_timeout_seconds": 120}
"""The servers die at once; at a load average of 20 the SDK's first import and the servers'
start took longer than the default 10 s, and the connect timed out before they died."""


def _error(manager: McpManager, name: str) -> str:
    wait_until(
        lambda: next(s.state for s in manager.status() if s.name == name) == "failed",
        180,
        f"{name} to fail",
    )
    return next(s.error for s in manager.status() if s.name == name) or ""


def test_a_server_dying_at_start_shows_its_status_and_last_stderr_line(tmp_path: Path) -> None:
    log = tmp_path / ".logician" / "logs" / "mcp-dies.log"
    log.parent.mkdir(parents=True)
    log.write_text("an old line from an earlier start\n")
    manager = McpManager(tmp_path, {"SECRET_TOKEN": SECRET})
    manager.apply(
        McpSettings.model_validate(
            {
                "servers": {
                    "dies": {
                        "command": sys.executable,
                        "args": ["-c", DIES],
                        "env": {"API_TOKEN": "env:SECRET_TOKEN"},
                        **PATIENT,
                    },
                    "quiet": {
                        "command": sys.executable,
                        "args": ["-c", "raise SystemExit(0)"],
                        **PATIENT,
                    },
                }
            }
        )
    )
    try:
        error = _error(manager, "dies")
        assert "exited with status 3" in error, error
        assert "fatal: token" in error and "was refused" in error
        assert SECRET not in error  # the configured secret is masked
        assert "Connection closed" not in error
        assert ".logician/logs/mcp-dies.log" in error
        quiet = _error(manager, "quiet")
        assert "exited with status 0" in quiet and "no stderr" in quiet, quiet
        assert "an old line" not in quiet + error  # only what this start wrote
    finally:
        manager.close()


def test_a_server_whose_exit_comes_late_after_its_stdout_ends_still_shows_its_status(
    tmp_path: Path,
) -> None:
    """On a loaded machine the exit status is reaped seconds after stdout's end: the end is
    held back until the status is known (bounded), so the failure says how it ended, not
    `Connection closed`. Here the server closes its stdout, then exits 1.5 s later."""
    late = (
        "import os, sys, time\n"
        "sys.stderr.write('closing up\\n'); sys.stderr.flush()\n"
        "os.close(1)\n"
        "time.sleep(1.5)\n"
        "sys.exit(4)\n"
    )
    manager = McpManager(tmp_path, {})
    manager.apply(
        McpSettings.model_validate(
            {"servers": {"late": {"command": sys.executable, "args": ["-c", late], **PATIENT}}}
        )
    )
    try:
        error = _error(manager, "late")
        assert "exited with status 4" in error and "closing up" in error, error
    finally:
        manager.close()
