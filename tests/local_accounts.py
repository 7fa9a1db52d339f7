"""A second local account for the attack tests (tests/security/): another person on the same
machine. Its own module, not conftest, so test modules can import the type by a unique name."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kernel_harness import Kernel


@dataclass(frozen=True)
class OtherAccount:
    """A throwaway local account: another person on the same machine (a hub, a shared NFS)."""

    name: str
    uid: int
    gid: int

    def run(self, argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
        """Run `argv` as this account (its own uid, gid and no supplementary groups)."""
        return subprocess.run(
            argv,
            cwd=cwd,
            user=self.uid,
            group=self.gid,
            extra_groups=[],
            umask=0o000,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), **env},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )


SYSTEM_PYTHON = Path("/usr/bin/python3.11")
"""An interpreter every account can run: the suite's own lives under /root (0700). Same minor
version, so the virtualenv's compiled packages load in it."""


def account_kernel(
    account: OtherAccount, cwd: Path, env: dict[str, str], *, groups: tuple[int, ...] = ()
) -> Kernel:
    """A real Logician kernel process running as `account` (its uid and gid, supplementary
    `groups` only), driven through jupyter_client like any kernel of the suite. Its connection
    file lives in `cwd`'s parent, given to the account; it runs this checkout's
    `logician_kernel` through the system Python with the virtualenv's packages."""
    import sys
    import sysconfig

    from jupyter_client.manager import KernelManager

    from logician_kernel.jupyter.runner import LogicianSpecManager

    if not SYSTEM_PYTHON.exists():
        import pytest

        pytest.skip(f"a kernel as another account needs {SYSTEM_PYTHON} (the suite's is private)")
    repo = Path(__file__).resolve().parents[1]
    site = sysconfig.get_paths()["purelib"]
    connection = cwd.parent / f"kernel-{account.name}.json"

    class AsAccount(KernelManager):
        def write_connection_file(self, **kwargs: object) -> None:
            super().write_connection_file(**kwargs)  # type: ignore[arg-type]
            os.chown(self.connection_file, account.uid, account.gid)

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            cmd = super().format_kernel_cmd(extra_arguments)
            assert cmd[0] == sys.executable, cmd
            extra = ",".join(map(str, groups)) if groups else None
            return [
                "setpriv",
                f"--reuid={account.uid}",
                f"--regid={account.gid}",
                f"--groups={extra}" if extra else "--clear-groups",
                "--",
                str(SYSTEM_PYTHON),
                *cmd[1:],
            ]

    class Owned(Kernel):
        def _manager(self) -> KernelManager:
            return AsAccount(
                kernel_name=self.kernel_name,
                kernel_spec_manager=LogicianSpecManager(),
                connection_file=str(connection),
            )

    full = {**env, "PYTHONPATH": f"{repo}:{site}", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return Owned(cwd, full)
