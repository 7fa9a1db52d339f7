"""A step the kernel takes after a cell's frame closed (the sidebar's update, the Rewind this
call controls, the agent's queued runs) that fails still lets the cell reply: a frontend
waiting for the execute reply (nbclient, `logician run`) must never hang on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel

pytestmark = pytest.mark.kernel

BREAK = (
    "_k = get_ipython().kernel\n"
    "def _boom(*args):\n"
    "    raise RuntimeError('boom after the cell')\n"
    "_k.parts.load().after_cell = _boom"
)


def test_a_failing_step_after_the_frame_still_replies(
    workspace: Path, kernel_env: dict[str, str]
) -> None:
    k = Kernel(workspace, kernel_env)
    try:
        r = k.run(BREAK, timeout=60)  # its own close already meets the broken step
        assert r.status == "ok", r.text
        r = k.run("x = 41\nprint(x + 1)", timeout=60)
        assert r.status == "ok" and "42" in r.stdout, r.text
        said = k.run("%logician notices").text
        assert "the sidebar's update failed after the cell" in said, said
    finally:
        k.shutdown()
