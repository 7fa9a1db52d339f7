"""Kernel launch: IPKernelApp with our kernel class, as ipykernel's own launcher does.

Owns where IPython's history database goes for this launch (`jupyter/launcher.py` decides);
must never override a `--HistoryManager.hist_file` the command line or a config file set.
"""

from __future__ import annotations

import os
from typing import Any

from ipykernel.kernelapp import IPKernelApp

MEMORY = ":memory:"


class LogicianKernelApp(IPKernelApp):
    """ipykernel's app; under a headless runner the history stays in memory, as ipykernel's does."""

    def init_kernel(self) -> None:
        from .launcher import ancestor_command_lines, history_in_memory

        history: Any = self.config.HistoryManager
        if "hist_file" not in history:
            memory, why = history_in_memory(ancestor_command_lines(), os.environ)
            if memory:
                history.hist_file = MEMORY
            self.log.info("IPython history %s: %s", "in memory" if memory else "on disk", why)
        super().init_kernel()


def main() -> None:
    from ..agent.ui import guard_kernel_tree
    from .kernel import LogicianKernel

    # Before anything is started: every process of this kernel, `setsid` or not, dies with it.
    guard_kernel_tree()
    LogicianKernelApp.launch_instance(kernel_class=LogicianKernel)
