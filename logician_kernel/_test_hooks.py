"""Hooks that let a test stop the kernel at an exact point, so a crash is reproducible.

`LOGICIAN_TEST_KILL_IN_CALL=<tool>` kills this process (SIGKILL, as `kill -9` does) right
after a call of that tool has had its effect and before its result is recorded. Unset (always,
outside tests) it costs one environment lookup per tool call.

Must never: be set by the kernel itself, or do anything when unset.
"""

from __future__ import annotations

import os
import signal

KILL_IN_CALL = "LOGICIAN_TEST_KILL_IN_CALL"


def stop_inside_call(tool: str) -> None:
    """Die here if a test asked for it for `tool`."""
    if os.environ.get(KILL_IN_CALL) == tool:
        os.kill(os.getpid(), signal.SIGKILL)
