"""The `logician` kernelspec: one definition, installed by the wheel or by `logician install`."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

KERNEL_NAME = "logician"
DISPLAY_NAME = "Python 3 (Logician)"
LOGOS = Path(__file__).resolve().parent.parent / "resources"
"""The kernel's logos (32, 64 and SVG), shipped in the package and in the wheel's kernelspec."""


READ_EVERY_OUTPUT = "LOGICIAN_RUN_READS_EVERY_OUTPUT"
"""Set to 1 by `logician run` (runner.py), whose client reads every IOPub message: the
kernel's publisher then queues what its reader has not taken yet instead of dropping it past
ZMQ's 1,000 messages (a cell printing thousands of lines lost some from the middle of its
output). Other kernels keep ZMQ's bound: a client that stops reading must not grow the kernel."""


def kernel_json(executable: str = "python") -> dict[str, Any]:
    """The spec; `python` is replaced by the running interpreter by jupyter_client."""
    return {
        "argv": [executable, "-m", "logician_kernel", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        # what ipykernel's `python3` spec declares (a test compares the two field by field):
        # the debugger, and CurveZMQ, so jupyter_client encrypts the channels when asked to
        "metadata": {"debugger": True, "supported_encryption": ["curve"]},
        "kernel_protocol_version": "5.5",
    }


def write_kernel_spec(directory: Path, executable: str = "python") -> Path:
    """Write kernel.json and the kernel's own logos into `directory` (the launcher tells
    "Python 3 (Logician)" from "Python 3 (ipykernel)" by them)."""
    directory.mkdir(parents=True, exist_ok=True)
    for logo in LOGOS.glob("logo-*"):
        shutil.copy(logo, directory / logo.name)
    (directory / "kernel.json").write_text(json.dumps(kernel_json(executable), indent=1) + "\n")
    return directory


def install(*, user: bool = False, sys_prefix: bool = False, prefix: str | None = None) -> str:
    """Install the kernelspec (like `python -m ipykernel install`); returns where it went."""
    from jupyter_client.kernelspec import KernelSpecManager

    if sys_prefix:
        prefix = sys.prefix
    with tempfile.TemporaryDirectory() as tmp:
        # An explicit interpreter: a spec outside this environment must still start this one.
        source = write_kernel_spec(Path(tmp) / KERNEL_NAME, executable=sys.executable)
        return KernelSpecManager().install_kernel_spec(
            str(source), KERNEL_NAME, user=user, prefix=prefix
        )
