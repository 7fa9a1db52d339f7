"""A real Logician kernel subprocess, driven through jupyter_client like a frontend drives it."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_client.manager import KernelManager

from logician_kernel.jupyter.runner import LogicianSpecManager


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def user_git_state(ws: Path) -> tuple[str, str, str, str]:
    """Everything of the user's git a snapshot must never touch."""
    index = ws / ".git" / "index"
    digest = hashlib.sha256(index.read_bytes()).hexdigest() if index.exists() else "-"
    head = (ws / ".git" / "HEAD").read_text()
    refs = git(ws, "for-each-ref")
    return git(ws, "status", "--porcelain", "--untracked-files=all"), digest, head, refs


SECRET_PREFIXES = ("OPENAI_", "ANTHROPIC_", "LOGICIAN_")
"""Environment variables no kernel of the suite inherits: a developer's real keys, models and
Logician settings must never reach a test kernel (a test sets what it needs)."""


NOTICES_IN_CELLS = {"on": False}
"""Set by the `notices_in_cells` marker (conftest.py): the kernels of a test about what a
notice says in the cell it is about run with `ui.notices = "cell"`; every other test's kernels
keep the default (`sidebar`: no notice in any cell's output)."""


def clean_env(**overrides: str) -> dict[str, str]:
    """`os.environ` without keys, model settings or Logician settings, plus `overrides`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_PREFIXES)}
    env.pop("JPY_SESSION_NAME", None)
    if NOTICES_IN_CELLS["on"]:
        env["LOGICIAN_UI__NOTICES"] = "cell"
    env.update(overrides)
    return env


def make_kernel_env(tmp_path: Path, thread: str = "test-thread") -> dict[str, str]:
    env = clean_env()
    env["LOGICIAN_THREAD"] = thread
    env["LOGICIAN_CONFIG_DIR"] = str(tmp_path / "user-config")
    return env


@dataclass
class CellResult:
    reply: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["status"]

    @property
    def stdout(self) -> str:
        return self._stream("stdout")

    @property
    def stderr(self) -> str:
        return self._stream("stderr")

    def _stream(self, name: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    @property
    def text(self) -> str:
        """Everything a user reads in the cell's output, as plain text. Consecutive stream
        messages of one name are one output, as a frontend shows them: how a `print` is cut
        into messages depends on when the kernel's output thread flushed (at load, between
        its text and its newline), never on what the cell said."""
        parts = []
        last_stream = None
        for m in self.messages:
            kind, content = m["msg_type"], m["content"]
            if kind == "stream":
                if last_stream == content["name"]:
                    parts[-1] += content["text"]
                else:
                    parts.append(content["text"])
                last_stream = content["name"]
                continue
            last_stream = None
            if kind in ("display_data", "execute_result", "update_display_data"):
                data = content["data"]
                parts.append(data.get("text/markdown") or data.get("text/plain", ""))
            elif kind == "error":
                parts.append(f"{content['ename']}: {content['evalue']}")
        return "\n".join(parts)


class Kernel:
    """One kernel process in `cwd`; `restart` and `kill9` keep the same environment."""

    def __init__(self, cwd: Path, env: dict[str, str], kernel_name: str = "logician") -> None:
        self.cwd, self.env, self.kernel_name = cwd, env, kernel_name
        self._ipc = tempfile.mkdtemp(prefix="lk-")
        self.km = self._manager()
        self._start()

    def _manager(self) -> KernelManager:
        # IPC sockets, not TCP ports: a restart reuses its endpoints, and a port another
        # process grabbed meanwhile would leave the restarted kernel unable to bind.
        return KernelManager(
            kernel_name=self.kernel_name,
            kernel_spec_manager=LogicianSpecManager(),
            transport="ipc",
            ip=os.path.join(self._ipc, "k"),
        )

    def _start(self) -> None:
        self.km.start_kernel(cwd=str(self.cwd), env=self.env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(
        self, code: str, *, cell_id: str | None = None, timeout: float = 60, silent: bool = False
    ) -> CellResult:
        content = {
            "code": code,
            "silent": silent,
            "store_history": not silent,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        msg = self.kc.session.msg(
            "execute_request", content, metadata={"cellId": cell_id} if cell_id else {}
        )
        self.kc.shell_channel.send(msg)
        return self.collect(msg["header"]["msg_id"], timeout=timeout)

    def send(self, code: str) -> str:
        return self.kc.execute(code)

    def collect(self, msg_id: str, *, timeout: float = 60) -> CellResult:
        messages = []
        while True:
            m = self.kc.get_iopub_msg(timeout=timeout)
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
            messages.append(m)
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return CellResult(reply["content"], messages)

    def wait_for_output(self, text: str, timeout: float = 30) -> None:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = self.kc.get_iopub_msg(timeout=0.5)
            except Empty:
                continue
            if m["msg_type"] == "stream" and text in m["content"]["text"]:
                return
        raise AssertionError(f"kernel never printed {text!r}")

    def restart(self) -> None:
        self.kc.stop_channels()
        self.km.restart_kernel(now=True)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def kill9(self) -> None:
        """The kernel dies as under the OOM killer: no shutdown, no flush."""
        pid = self.km.provisioner.process.pid  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)
        self.km.provisioner.process.wait(10)  # type: ignore[union-attr]
        self.kc.stop_channels()
        self.km.cleanup_resources()

    def start_again(self) -> None:
        self.km = self._manager()
        self._start()

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        shutil.rmtree(self._ipc, ignore_errors=True)
