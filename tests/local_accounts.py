"""A second local account for the attack tests (tests/security/): another person on the same
machine. Its own module, not conftest, so test modules can import the type by a unique name."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


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
