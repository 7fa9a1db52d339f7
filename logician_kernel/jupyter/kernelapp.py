"""Kernel launch: IPKernelApp with our kernel class, as ipykernel's own launcher does.

ipykernel's app itself, not a subclass: clients match its log lines by the `[IPKernelApp]`
prefix (nbclient's tests filter its TCP-encryption warning by it).
"""

from __future__ import annotations


def main() -> None:
    from ipykernel.kernelapp import IPKernelApp

    from ..agent.ui import guard_kernel_tree
    from .kernel import LogicianKernel

    # Before anything is started: every process of this kernel, `setsid` or not, dies with it.
    guard_kernel_tree()
    IPKernelApp.launch_instance(kernel_class=LogicianKernel)
