"""Processes a test started, found by what they run and where: `alive`.

A test that checks "nothing the hook (or the bash call) started survived" looks through
/proc for the command it gave. Another suite running beside this one on the same machine (two
CI clones side by side) runs the same commands at the same moments, so a command line alone
does not say the process is this test's: it is also required to run in the test's workspace,
where hooks and tool calls start (a process that changed directory since is not found).
"""

from __future__ import annotations

import os
from pathlib import Path


def alive(marker: str, under: Path) -> list[int]:
    """Live (non-zombie) processes other than this one whose command line holds `marker` and
    whose working directory is `under` or inside it."""
    root = os.path.realpath(under)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if marker.encode() not in cmdline or stat[stat.rfind(b")") + 2 :][:1] == b"Z":
            continue
        if cwd == root or cwd.startswith(root + os.sep):
            found.append(int(entry))
    return found
