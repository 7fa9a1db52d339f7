"""A `%%logician` cell in a real `jupyter console`, driven in tmux as a person types it.

A terminal prints the `text/plain` of every display and of every display update, so the
answer must arrive as text, once; approvals come as the console's stdin prompt.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from loopback import LoopbackServer, Reply, openai_chunks, sse
from test_kernel_agent import text_reply
from test_kernel_plain_text import OBJECT_REPR, WIDGET_REPR

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(
        shutil.which("tmux") is None,
        reason="tmux is not installed (apt-get install tmux; scripts/setup.sh "
        "does it as root): this test drives jupyter console in it",
    ),
]

ANSWER = "The console shows this answer exactly once."


class Tmux:
    """One private tmux server (its own socket), so no other session on the machine is seen."""

    def __init__(self, tmp_path: Path, env: dict[str, str], cwd: Path, command: list[str]):
        self.sock = str(tmp_path / "tmux.sock")
        subprocess.run(
            [
                "tmux",
                "-S",
                self.sock,
                "new-session",
                "-d",
                "-s",
                "lk",
                "-x",
                "200",
                "-y",
                "60",
                "-c",
                str(cwd),
                *command,
            ],
            env=env,
            check=True,
        )

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-S", self.sock, "send-keys", "-t", "lk", *keys], check=True)

    def screen(self) -> str:
        """The whole pane, scrollback included, wrapped lines joined."""
        return subprocess.run(
            ["tmux", "-S", self.sock, "capture-pane", "-p", "-J", "-S", "-", "-t", "lk"],
            capture_output=True,
            text=True,
        ).stdout

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never showed; the screen:\n{self.screen()}")

    def kill(self) -> None:
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True)


def test_a_logician_cell_in_jupyter_console_shows_the_answer_once_and_asks_on_stdin(
    workspace: Path, kernel_env: dict[str, str], tmp_path: Path
) -> None:
    # A sentence, then the call that asks for approval, in one model reply.
    call = ("w1", "write", ['{"path": "hello.txt", ', '"content": "Hello, console\\n"}'])
    chunks = openai_chunks(text=["Writing ", "it now."], tool=call, finish="tool_calls")
    with LoopbackServer() as server:
        server.script(
            Reply(pieces=[sse(c) for c in chunks] + [b"data: [DONE]\n\n"]),
            text_reply(
                *[w + " " for w in ANSWER.split(" ")[:-1]], ANSWER.split(" ")[-1], delay=0.08
            ),
        )
        env = {
            **kernel_env,
            "LOGICIAN_MODEL__PROVIDER": "openai",
            "LOGICIAN_MODEL__NAME": "loop-model",
            "LOGICIAN_MODEL__BASE_URL": server.url + "/v1",
            "OPENAI_API_KEY": "test-key-not-secret",
            "TERM": "xterm",
        }
        # Enter asks the kernel whether the cell is complete; a loaded machine may answer
        # after the console's default one second, which then runs the cell too early.
        console = [
            sys.executable,
            "-m",
            "jupyter_console",
            "--kernel",
            "logician",
            "--ZMQTerminalInteractiveShell.kernel_is_complete_timeout=30",
        ]
        tmux = Tmux(tmp_path, env, workspace, console)
        try:
            tmux.wait_for("In [1]:")
            # C-o is the console's "newline without running"; a cell magic's cell ends at an
            # empty line.
            tmux.keys("%%logician", "C-o", "Write hello.txt, then tell me.", "Enter", "Enter")
            tmux.wait_for("[o]nce")  # the approval, as the console's own stdin prompt
            assert not (workspace / "hello.txt").exists()
            tmux.keys("o", "Enter")
            screen = tmux.wait_for("── completed")
            tmux.wait_for("In [2]:")
            screen = tmux.screen()
            assert (workspace / "hello.txt").read_text() == "Hello, console\n"
            assert screen.count(ANSWER) == 1, screen
            assert "▸ write hello.txt" in screen
            assert "\nWriting it now.\nApprove write: write hello.txt" in screen  # own lines
            assert not OBJECT_REPR.search(screen) and not WIDGET_REPR.search(screen), screen
            tmux.keys("exit", "Enter")
        finally:
            tmux.kill()
