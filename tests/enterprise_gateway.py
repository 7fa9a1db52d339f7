"""A real Jupyter Enterprise Gateway on loopback, launching the Logician kernel through EG's own
Python launcher (`launch_ipykernel.py --kernel-class-name ...`), for tests only.

Enterprise Gateway 3.3.0 needs jupyter_client<7 and jupyter_server<2, which cannot share an
environment with JupyterLab 4 and Kernel Gateway 3: it runs from `.venv-eg`, made by
`scripts/enterprise_gateway_env.sh` (run by `scripts/setup.sh`); the kernels it launches run
in this interpreter's environment, as a kernel image would run its own Python.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
from gateway import GatewayKernel, free_port, stop_gateway, wait_until_answering
from kernel_harness import clean_env

REPO = Path(__file__).resolve().parent.parent
EG_VENV = REPO / ".venv-eg"
EG_BIN = EG_VENV / "bin" / "jupyter-enterprisegateway"
LAUNCHER = (
    EG_VENV
    / "share"
    / "enterprise-gateway"
    / "kernel-launchers"
    / "python"
    / "scripts"
    / "launch_ipykernel.py"
)
KERNEL_CLASS = "logician_kernel.jupyter.kernel.LogicianKernel"
DISTRIBUTED = "enterprise_gateway.services.processproxies.distributed.DistributedProcessProxy"
LOCAL = "enterprise_gateway.services.processproxies.processproxy.LocalProcessProxy"


def missing() -> str | None:
    """Why Enterprise Gateway cannot run here, or None."""
    if not EG_BIN.exists() or not LAUNCHER.exists():
        return (
            f"Enterprise Gateway is not installed in {EG_VENV} (it needs jupyter_client<7 and "
            "jupyter_server<2, so it has its own venv): run bash scripts/enterprise_gateway_env.sh"
        )
    try:
        import Cryptodome  # noqa: F401  # the launcher encrypts the connection info it returns
    except ImportError:
        return "pycryptodomex is not installed in the kernel's environment (test extras)"
    return None


def write_kernelspec(kernels_dir: Path, proxy: str) -> Path:
    """A kernelspec of docs/deploy.md for a kernel on the gateway's host, in `kernels_dir`.

    `launcher`: EG's Python launcher selecting our class (`--kernel-class-name`), under the
    distributed process proxy with this host as its only remote host (started locally, no
    SSH). `local`: the local process proxy with our own kernelspec's argv - the launcher
    cannot run under it (it leaves `{response_address}` and `{public_key}` unfilled, so the
    launcher's ports never reach the gateway)."""
    name = f"logician_eg_{proxy}"
    spec_dir = kernels_dir / "kernels" / name
    spec_dir.mkdir(parents=True)
    if proxy == "launcher":
        metadata = {"class_name": DISTRIBUTED, "config": {"remote_hosts": "localhost"}}
        argv = [
            sys.executable,
            str(LAUNCHER),
            "--RemoteProcessProxy.kernel-id",
            "{kernel_id}",
            "--RemoteProcessProxy.response-address",
            "{response_address}",
            "--RemoteProcessProxy.public-key",
            "{public_key}",
            "--RemoteProcessProxy.port-range",
            "{port_range}",
            "--RemoteProcessProxy.spark-context-initialization-mode",
            "none",
            "--kernel-class-name",
            KERNEL_CLASS,
        ]
    elif proxy == "local":
        metadata = {"class_name": LOCAL}
        argv = [sys.executable, "-m", "logician_kernel", "-f", "{connection_file}"]
    else:
        raise ValueError(f"proxy: expected 'launcher' or 'local', got {proxy!r}")
    spec = {
        "display_name": f"Logician (Enterprise Gateway, {proxy})",
        "language": "python",
        "metadata": {"process_proxy": metadata},
        "argv": argv,
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
    return spec_dir


@dataclass
class EnterpriseGateway:
    """`jupyter enterprisegateway` started in `launch_dir` (never the workspace)."""

    launch_dir: Path
    kernels_dir: Path
    """A Jupyter data directory holding the kernelspec (`kernels/<name>/kernel.json`)."""
    inherited: tuple[str, ...] = ()
    """The gateway's own variables it passes to kernels (EG_INHERITED_ENVS)."""
    url: str = ""
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    def start(self) -> EnterpriseGateway:
        port, response_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{port}"
        inherited = self.inherited
        if "LOGICIAN_UI__NOTICES" in clean_env():  # a `notices_in_cells` test: its kernels too
            inherited = (*inherited, "LOGICIAN_UI__NOTICES")
        env = clean_env(
            JUPYTER_PATH=str(self.kernels_dir),
            EG_INHERITED_ENVS=",".join(inherited),
            # Loopback only, and a port of our own (the default 8877 may be another run's).
            EG_RESPONSE_IP="127.0.0.1",
            EG_RESPONSE_PORT=str(response_port),
            EG_KERNEL_LOG_DIR=str(self.launch_dir),
        )
        self.log = self.launch_dir / "enterprise-gateway.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [
                    str(EG_BIN),
                    "--EnterpriseGatewayApp.ip=127.0.0.1",
                    f"--EnterpriseGatewayApp.port={port}",
                    "--EnterpriseGatewayApp.port_retries=0",
                ],
                cwd=self.launch_dir,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_until_answering(self.proc, self.url, self.log)
        return self

    def kernelspecs(self) -> dict[str, object]:
        r = httpx.get(f"{self.url}/api/kernelspecs", timeout=30)
        assert r.status_code == 200, r.text
        return dict(r.json()["kernelspecs"])

    def start_kernel(self, name: str, env: dict[str, str]) -> GatewayKernel:
        """POST /api/kernels with `env` in the body, as JupyterLab's gateway client sends it."""
        r = httpx.post(f"{self.url}/api/kernels", json={"name": name, "env": env}, timeout=120)
        assert r.status_code == 201, f"{r.status_code} {r.text}\n{self.tail()}"
        return GatewayKernel(self, r.json()["id"])  # type: ignore[arg-type]

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log else ""

    def stop(self) -> None:
        stop_gateway(self.proc)
