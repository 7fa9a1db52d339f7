"""A real Jupyter Kernel Gateway on loopback, and a kernel driven over its REST API and websocket
the way JupyterLab's gateway client drives it (tests only; no Jupyter server in between)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websocket
from kernel_harness import clean_env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_answering(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    """Until a gateway started as `proc` answers `GET /api`, or say why not from its log (300 s
    at most: a loaded machine's start can take minutes; the bound is for one that never does)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/api", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the gateway never answered: {log.read_text()[-2000:]}")


def stop_gateway(proc: subprocess.Popen[bytes] | None) -> None:
    """Terminate a gateway (20 s to go), then kill it."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@dataclass
class Gateway:
    """`jupyter kernelgateway` started in `launch_dir` (never the workspace)."""

    launch_dir: Path
    forward: tuple[str, ...] = ()
    """Variables of the gateway's own environment it passes to kernels (KG_ENV_PROCESS_WHITELIST)."""
    args: tuple[str, ...] = ()
    """Extra gateway options, e.g. `--JupyterWebsocketPersonality.list_kernels=True` for JupyterLab."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables set in the gateway's own environment (e.g. `HOME`), which its kernels inherit."""
    url: str = ""
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    def start(self) -> Gateway:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        # No real key or Logician setting of the developer's reaches the gateway's kernels; the
        # suite's isolated user-config directory does.
        forward = self.forward
        if "LOGICIAN_UI__NOTICES" in clean_env():  # a `notices_in_cells` test: its kernels too
            forward = (*forward, "LOGICIAN_UI__NOTICES")
        env = clean_env(KG_ENV_PROCESS_WHITELIST=",".join(forward), **self.env)
        if "LOGICIAN_CONFIG_DIR" in os.environ:
            env["LOGICIAN_CONFIG_DIR"] = os.environ["LOGICIAN_CONFIG_DIR"]
        self.log = self.launch_dir / "gateway.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kernel_gateway",
                    "--KernelGatewayApp.ip=127.0.0.1",
                    f"--KernelGatewayApp.port={port}",
                    "--KernelGatewayApp.port_retries=0",
                    *self.args,
                ],
                cwd=self.launch_dir,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_until_answering(self.proc, self.url, self.log)
        return self

    def start_kernel(self, env: dict[str, str]) -> GatewayKernel:
        """POST /api/kernels with `env` in the body, as JupyterLab's gateway client sends it."""
        r = httpx.post(f"{self.url}/api/kernels", json={"name": "logician", "env": env}, timeout=90)
        assert r.status_code == 201, r.text
        return GatewayKernel(self, r.json()["id"])

    def stop(self) -> None:
        stop_gateway(self.proc)


@dataclass
class Reply:
    status: str
    outputs: list[dict[str, Any]] = field(default_factory=list)

    def stream(self, name: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.outputs
            if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    @property
    def text(self) -> str:
        parts = []
        for m in self.outputs:
            content = m["content"]
            if m["msg_type"] == "stream":
                parts.append(content["text"])
            elif m["msg_type"] in ("display_data", "execute_result"):
                parts.append(content["data"].get("text/plain", ""))
            elif m["msg_type"] == "error":
                parts.append(f"{content['ename']}: {content['evalue']}")
                parts.extend(content.get("traceback", []))
        return "\n".join(parts)


class GatewayKernel:
    """One kernel behind the gateway, spoken to over /api/kernels/<id>/channels."""

    def __init__(self, gateway: Gateway, kernel_id: str) -> None:
        self.gateway, self.id = gateway, kernel_id
        ws_url = gateway.url.replace("http://", "ws://")
        self.ws = websocket.create_connection(
            f"{ws_url}/api/kernels/{kernel_id}/channels", timeout=90
        )
        self.session = uuid.uuid4().hex

    def run(self, code: str, *, timeout: float = 90) -> Reply:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "session": self.session,
            "username": "test",
            "version": "5.3",
            "date": "",
        }
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        self.ws.send(
            json.dumps(
                {
                    "header": header,
                    "parent_header": {},
                    "metadata": {},
                    "content": content,
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        outputs: list[dict[str, Any]] = []
        status, idle = None, False
        deadline = time.monotonic() + timeout
        while status is None or not idle:
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            m = json.loads(self.ws.recv())
            if m.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = m["msg_type"]
            if m["channel"] == "shell" and kind == "execute_reply":
                status = m["content"]["status"]
            elif kind == "status":
                idle = m["content"]["execution_state"] == "idle"
            elif m["channel"] == "iopub" and kind != "execute_input":
                outputs.append(m)
        return Reply(status, outputs)

    def shutdown(self) -> None:
        self.ws.close()
        httpx.delete(f"{self.gateway.url}/api/kernels/{self.id}", timeout=30)
